import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  adminNotesPath, adminToken, auditActions, content, createdNote, createNote, insertAppointment, insertPatient, type NoteBody, notesPath,
  putNote, setting, shownNote, staffMember, updatedNote, userWithRole
} from "./helpers.js"

const noteKeys = [
  "addendums", "appointment_id", "appointment_scheduled_at", "appointment_type", "content", "content_intact", "content_sha256",
  "created_at", "id", "patient", "patient_id", "provider", "provider_id", "sign_offs", "signed_at", "status", "supervision_required",
  "supervisor_id", "updated_at"
]
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

layer(TestApp())("session notes: clinic endpoints", (it) => {
  it.effect("create, show, list and last in the §2.3 representation; every read of content is audited", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const created = yield* createNote(s.provider.token, s, { content: { ...content, free_text: "  " } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const note = (created.body as NoteBody).session_note
      expect(Object.keys(note).sort()).toEqual(noteKeys)
      expect(note).toMatchObject({
        patient_id: s.patientId, provider_id: s.provider.id, appointment_id: s.appointmentId, status: "draft",
        supervision_required: false, supervisor_id: null, content: { ...content, free_text: null }, content_intact: true,
        signed_at: null, addendums: [], sign_offs: [], appointment_type: "therapy",
        patient: { id: s.patientId, first_name: "Pat" }, provider: { id: s.provider.id, first_name: "Quinn" }
      })
      expect(note.content_sha256).toMatch(/^[0-9a-f]{64}$/)
      expect(note.created_at).toMatch(iso)
      const shown = yield* request("GET", `${notesPath}/${note.id}`, { token: s.provider.token })
      expect(shown.body).toEqual({ session_note: note })
      const listed = yield* request("GET", `${notesPath}?patient_id=${s.patientId}`, { token: s.provider.token })
      expect(listed.body).toEqual({ session_notes: [note], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 } })
      const last = yield* request("GET", `${notesPath}/last?patient_id=${s.patientId}`, { token: s.provider.token })
      expect(last.body).toEqual({ session_note: note })
      const adminShown = yield* request("GET", `${adminNotesPath}/${note.id}`, { token: admin })
      expect(adminShown.body).toEqual({ session_note: note })
      expect(yield* auditActions("session_note", note.id)).toEqual([
        "session_note.create", "session_note.read", "session_note.read", "session_note.read", "session_note.read"
      ])
      // The typed client a frontend derives decodes the same note from each read.
      const client = yield* clientAs(s.provider.token)
      const decoded = {
        id: note.id, status: "draft", content: { ...content, free_text: null }, content_sha256: note.content_sha256, signed_at: null,
        created_at: new Date(note.created_at as string), patient: { id: s.patientId, first_name: "Pat" }
      }
      expect((yield* client.clinicSessionNotes.show({ path: { id: note.id } })).session_note).toMatchObject(decoded)
      const typedList = yield* client.clinicSessionNotes.list({ urlParams: { patient_id: s.patientId } })
      expect(typedList.session_notes).toMatchObject([decoded])
      expect(typedList.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 1, per_page: 25 })
      expect((yield* client.clinicSessionNotes.last({ urlParams: { patient_id: s.patientId } })).session_note).toMatchObject(decoded)
      // The first version is kept with its hash and author.
      const sql = yield* SqlClient.SqlClient
      const versions = yield* sql<{ version: number; content_sha256: string; edited_by_id: number }>`
        SELECT version, content_sha256, edited_by_id FROM session_note_versions WHERE session_note_id = ${note.id}`.pipe(Effect.orDie)
      expect(versions).toEqual([{ version: 1, content_sha256: note.content_sha256, edited_by_id: s.provider.userId }])
    }))

  it.effect("the create rules: the appointment must be the patient's and the provider's; one note per appointment", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const other = yield* setting(admin)
      const refused = (token: string, body: Record<string, unknown>, status: number, errors: unknown) =>
        Effect.gen(function*() {
          const response = yield* request("POST", notesPath, { token, body: { session_note: body } })
          expect(response.status, JSON.stringify(response.body)).toBe(status)
          expect(response.body).toEqual({ errors })
        })
      // The provider sees the other patient too (an appointment of their own with them), so what is
      // refused below is the appointment, not the patient.
      yield* insertAppointment(other.patientId, s.provider.id, { daysAgo: 10 })
      // Another patient's appointment, another provider's appointment, an unknown one.
      yield* refused(s.provider.token, { patient_id: s.patientId, appointment_id: other.appointmentId }, 422, { appointment_id: ["must exist"] })
      yield* refused(s.provider.token, { patient_id: other.patientId, appointment_id: other.appointmentId }, 422, { appointment_id: ["must exist"] })
      yield* refused(s.provider.token, { patient_id: s.patientId, appointment_id: 999999 }, 422, { appointment_id: ["must exist"] })
      yield* refused(s.provider.token, { patient_id: 999999, appointment_id: s.appointmentId }, 404, "Patient not found")
      yield* refused(s.provider.token, { patient_id: s.patientId }, 422, { appointment_id: ["can't be blank"] })
      expect(yield* createdNote(s.provider.token, s)).toMatchObject({ patient_id: s.patientId, appointment_id: s.appointmentId, status: "draft" })
      yield* refused(s.provider.token, { patient_id: s.patientId, appointment_id: s.appointmentId }, 422, { appointment_id: ["has already been taken"] })
      // An admin writes for any provider's appointment.
      const second = yield* insertAppointment(s.patientId, s.provider.id, { daysAgo: 5 })
      const byAdmin = yield* (yield* clientAs(admin)).clinicSessionNotes.create({
        payload: { session_note: { patient_id: s.patientId, appointment_id: second.id } }
      })
      expect(byAdmin.session_note).toMatchObject({ provider_id: s.provider.id, content: { subjective: null, plan: null } })
    }))

  it.effect("who sees what: own notes, the supervisor reads, other staff 404, a parent 403", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const parent = yield* userWithRole("parent")
      const s = yield* setting(admin, { supervised: true, userId: parent.userId })
      const created = yield* createdNote(s.provider.token, s)
      const id = created.id
      expect(created).toMatchObject({ supervision_required: true, supervisor_id: s.supervisor!.id })
      const stranger = yield* staffMember(admin)
      // Another provider of the patient (an appointment with them): they see the patient, not the note.
      yield* insertAppointment(s.patientId, stranger.id, { daysAgo: 10 })
      const support = yield* userWithRole("support")
      for (const token of [stranger.token, support.token]) {
        expect(yield* request("GET", `${notesPath}/${id}`, { token })).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
        expect(yield* putNote(token, id, { content })).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
      }
      expect((yield* (yield* clientAs(stranger.token)).clinicSessionNotes.list({ urlParams: { patient_id: s.patientId } })).session_notes).toEqual([])
      expect(yield* request("GET", `${notesPath}/last?patient_id=${s.patientId}`, { token: stranger.token })).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
      // Front desk never sees clinical content: the patient's note lists are 404 like an unknown patient's.
      expect(yield* request("GET", `${notesPath}?patient_id=${s.patientId}`, { token: support.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* request("GET", `${notesPath}/last?patient_id=${s.patientId}`, { token: support.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* shownNote(s.supervisor!.token, id)).toMatchObject({ id, supervisor_id: s.supervisor!.id })
      // The supervisor reads but does not write the content.
      expect(yield* putNote(s.supervisor!.token, id, { content: { plan: "x" } })).toMatchObject({
        status: 422, body: { errors: { content: ["can only be changed by the note's provider or an admin"] } }
      })
      // Therapy notes are not shared with families: 403 even for their own child's note.
      for (const [method, url] of [["GET", `${notesPath}/${id}`], ["GET", `${notesPath}?patient_id=${s.patientId}`], ["GET", `${notesPath}/last?patient_id=${s.patientId}`]] as const) {
        expect(yield* request(method, url, { token: parent.token })).toMatchObject({ status: 403, body: { errors: "Staff access required" } })
      }
      expect(yield* createNote(parent.token, s)).toMatchObject({ status: 403, body: { errors: "Staff access required" } })
      expect(yield* putNote(parent.token, id, { content })).toMatchObject({ status: 403, body: { errors: "Staff access required" } })
      // Staff must name the patient; the latest of a patient without notes is 404.
      expect(yield* request("GET", notesPath, { token: admin })).toMatchObject({ status: 422, body: { errors: { patient_id: ["can't be blank"] } } })
      const empty = yield* insertPatient()
      expect(yield* request("GET", `${notesPath}/last?patient_id=${empty}`, { token: admin })).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
    }))

  it.effect("content edits keep every version; the submit needs content", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const { id } = yield* createdNote(s.provider.token, s, { content: {} })
      expect(yield* putNote(s.provider.token, id, { status: "pending_review" })).toMatchObject({ status: 422, body: { errors: { content: ["can't be blank"] } } })
      const edited = yield* updatedNote(s.provider.token, id, { content })
      expect(edited.content).toEqual({ ...content, free_text: null })
      const again = yield* updatedNote(admin, id, { content: { ...content, plan: "Move to biweekly." }, status: "pending_review" })
      expect(again).toMatchObject({ status: "pending_review", content: { plan: "Move to biweekly." } })
      // pending_review: the body waits for the review.
      expect(yield* putNote(s.provider.token, id, { content: { plan: "y" } })).toMatchObject({
        status: 422, body: { errors: { content: ["can't be changed while the note is pending_review"] } }
      })
      const sql = yield* SqlClient.SqlClient
      const versions = yield* sql<{ version: number; edited_by_id: number }>`
        SELECT version, edited_by_id FROM session_note_versions WHERE session_note_id = ${id} ORDER BY version`.pipe(Effect.orDie)
      const [adminUser] = yield* sql<{ id: number }>`SELECT id FROM users WHERE email = 'admin@example.test'`.pipe(Effect.orDie)
      expect(versions).toEqual([
        { version: 1, edited_by_id: s.provider.userId }, { version: 2, edited_by_id: s.provider.userId }, { version: 3, edited_by_id: adminUser!.id }
      ])
      expect(yield* auditActions("session_note", id)).toEqual([
        "session_note.create", "session_note.update", "session_note.update", "session_note.pending_review"
      ])
    }))
})
