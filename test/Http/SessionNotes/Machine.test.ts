import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  addendum, adminNotesPath, adminToken, answer, answeredAddendum, askedAddendum, auditActions, content, createdNote, noteIn, noteRow,
  putNote, setting, shownNote, signedOff, signOff, updatedNote
} from "./helpers.js"

const statuses = ["draft", "pending_review", "pending_signature", "completed", "requires_addendum", "archived"] as const

/** Moves `PUT` makes (by an admin, who may make them all). */
const putMoves = new Set([
  "draft>pending_review", "draft>archived", "pending_review>pending_signature", "pending_review>archived",
  "pending_signature>archived", "requires_addendum>archived"
])
/** Moves of the machine that another endpoint or event makes, with what PUT answers. */
const otherMoves: Record<string, string> = {
  "pending_review>requires_addendum": "can only become requires_addendum through an addendum",
  "pending_signature>requires_addendum": "can only become requires_addendum through an addendum",
  "completed>requires_addendum": "can only become requires_addendum through an addendum",
  "pending_signature>completed": "can only become completed through a sign-off",
  "requires_addendum>pending_review": "can only become pending_review when the provider answers its addenda"
}

type AddendumBody = { addendum: Record<string, unknown> & { id: number } }

layer(TestApp())("session notes: the status machine", (it) => {
  it.effect("every PUT move from every status: allowed, made elsewhere, or refused with the spec's body", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      for (const from of statuses) {
        for (const to of statuses) {
          if (from === to) continue
          const s = yield* setting(admin)
          const id = yield* noteIn(s, from)
          expect((yield* noteRow(id))!.status).toBe(from)
          const key = `${from}>${to}`
          if (putMoves.has(key)) {
            expect((yield* updatedNote(admin, id, { status: to })).status, key).toBe(to)
            expect(yield* auditActions("session_note", id)).toContain(`session_note.${to}`)
          } else {
            const response = yield* putNote(admin, id, { status: to })
            const message = otherMoves[key] ?? `cannot change from ${from} to ${to}`
            expect(response.status, key).toBe(422)
            expect(response.body, key).toEqual({ errors: { status: [message] } })
            expect((yield* noteRow(id))!.status).toBe(from)
          }
        }
      }
    }), { timeout: 120_000 })

  it.effect("the other triggers: addendum, answer, sign-off; refused where the machine has no move", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      for (const from of ["draft", "archived", "requires_addendum"] as const) {
        const id = yield* noteIn(yield* setting(admin), from)
        const refused = yield* addendum(admin, id)
        expect(refused).toMatchObject({ status: 422, body: { errors: { status: [`cannot change from ${from} to requires_addendum`] } } })
        const unsigned = yield* signOff(admin, id)
        expect(unsigned).toMatchObject({ status: 422, body: { errors: { status: [`is ${from}: only notes pending review or signature can be signed off`] } } })
      }
      // pending_review → requires_addendum → (answered) pending_review → pending_signature → completed.
      const id = yield* noteIn(s, "pending_review")
      const asked = yield* addendum(admin, id)
      expect(asked.status).toBe(201)
      const added = (asked.body as AddendumBody).addendum
      expect(Object.keys(added).sort()).toEqual([
        "created_at", "created_by_id", "id", "instructions", "instructions_response", "responded_by_id", "responded_signature",
        "responded_signature_url", "session_note_id", "signature", "signature_url", "updated_at"
      ])
      expect(added).toMatchObject({ session_note_id: id, instructions: "Add the school report.", instructions_response: null, signature: null, signature_url: null })
      expect((yield* noteRow(id))!.status).toBe("requires_addendum")
      // Only the note's provider answers, once, with a response.
      expect(yield* answer(admin, added.id)).toMatchObject({ status: 422, body: { errors: { addendum: ["can only be answered by the note's provider"] } } })
      expect(yield* request("PUT", `${adminNotesPath}/addendums/${added.id}`, { token: s.provider.token, body: { addendum: {} } }))
        .toMatchObject({ status: 422, body: { errors: { instructions_response: ["can't be blank"] } } })
      const answered = yield* answeredAddendum(s.provider.token, added.id)
      expect(answered).toMatchObject({ instructions_response: "Added it.", responded_by_id: s.provider.userId })
      expect(yield* answer(s.provider.token, added.id)).toMatchObject({ status: 422, body: { errors: { addendum: ["has already been answered"] } } })
      expect((yield* noteRow(id))!.status).toBe("pending_review")
      // Only an admin passes the review of an unsupervised note, and archives.
      expect(yield* putNote(s.provider.token, id, { status: "pending_signature" })).toMatchObject({
        status: 422, body: { errors: { status: ["can only be moved by an admin (the review)"] } }
      })
      expect(yield* putNote(s.provider.token, id, { status: "archived" })).toMatchObject({ status: 422, body: { errors: { status: ["can only be archived by an admin"] } } })
      expect((yield* updatedNote(admin, id, { status: "pending_signature" })).status).toBe("pending_signature")
      // The provider does not sign off their own note.
      expect(yield* signOff(s.provider.token, id)).toMatchObject({ status: 422, body: { errors: { sign_off: ["can only be given by the note's supervisor or an admin"] } } })
      expect(yield* signedOff(admin, id)).toMatchObject({ session_note_id: id, reviewer_id: expect.any(Number) })
      const note = yield* shownNote(admin, id)
      expect(note).toMatchObject({ status: "completed", addendums: [{ id: added.id, instructions: "Add the school report.", instructions_response: "Added it." }] })
      expect(note.signed_at).toBeInstanceOf(Date)
      expect(yield* auditActions("session_note", id)).toEqual(expect.arrayContaining([
        "session_note.addendum_create", "session_note.requires_addendum", "session_note.addendum_answer", "session_note.pending_review",
        "session_note.pending_signature", "session_note.sign_off_create", "session_note.completed"
      ]))
    }))

  it.effect("supervision: the supervisor's approval is the review, their sign-off completes, escalation and changes", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin, { supervised: true })
      const supervisor = s.supervisor!
      const { id } = yield* createdNote(s.provider.token, s)
      expect((yield* updatedNote(s.provider.token, id, { status: "pending_review" })).status).toBe("pending_review")
      const adminClient = yield* clientAs(admin)
      const supervision = () => Effect.map(adminClient.supervisorSessionNotes.showNote({ path: { id } }), (response) => response.session_note)
      expect(yield* supervision()).toMatchObject({ supervision_required: true, supervisor_id: supervisor.id, supervision_status: "pending_supervision", supervision_notes: null })
      expect(yield* putNote(admin, id, { status: "pending_signature" })).toMatchObject({
        status: 422, body: { errors: { status: ["needs the supervisor's approval (supervision_status approved)"] } }
      })
      expect(yield* putNote(s.provider.token, id, { supervision_status: "approved" })).toMatchObject({
        status: 422, body: { errors: { supervision_status: ["can only be given by the note's supervisor or an admin"] } }
      })
      // Changes through an addendum: requires_changes, then pending_supervision when answered.
      const asked = yield* askedAddendum(supervisor.token, id)
      expect(yield* supervision()).toMatchObject({ status: "requires_addendum", supervision_status: "requires_changes" })
      expect(yield* putNote(supervisor.token, id, { supervision_status: "approved" })).toMatchObject({
        status: 422, body: { errors: { supervision_status: ["cannot change from requires_changes to approved"] } }
      })
      expect(yield* answeredAddendum(s.provider.token, asked.id)).toMatchObject({ instructions_response: "Added it." })
      expect(yield* supervision()).toMatchObject({ status: "pending_review", supervision_status: "pending_supervision" })
      // Escalated, then approved (by an admin): the review passed.
      expect((yield* updatedNote(supervisor.token, id, { supervision_status: "escalated" })).status).toBe("pending_review")
      const approved = yield* updatedNote(admin, id, { supervision_status: "approved", supervision_notes: "Goals documented well." })
      expect(approved.status).toBe("pending_signature")
      expect(yield* supervision()).toMatchObject({ status: "pending_signature", supervision_status: "approved", supervision_notes: "Goals documented well." })
      // An admin's sign-off alone does not complete a supervised note; the supervisor's does.
      yield* signedOff(admin, id)
      expect((yield* noteRow(id))!.status).toBe("pending_signature")
      yield* signedOff(supervisor.token, id)
      expect((yield* noteRow(id))!.status).toBe("completed")
      // The supervisor lists and appointments.
      const listed = yield* adminClient.supervisorSessionNotes.listNotes({ urlParams: { supervisor_id: ProviderId.make(supervisor.id) } })
      expect(listed.session_notes.map((n) => [n.id, n.supervision_status])).toEqual([[id, "approved"]])
      const appointments = (yield* request("GET", `/v1/admin/clinic/supervisors/appointments?supervisor_id=${supervisor.id}&supervision_status=approved`, { token: admin })).body
      const appointment = {
        id: s.appointmentId, patient_id: s.patientId, provider_id: s.provider.id, supervisor_id: supervisor.id, scheduled_at: expect.any(String),
        status: "completed", supervision_status: "approved", supervision_notes: "Goals documented well.", session_note: { id, status: "completed" },
        created_at: expect.any(String), updated_at: expect.any(String)
      }
      expect(appointments).toEqual({ appointments: [appointment], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 } })
      expect((yield* request("GET", `/v1/admin/clinic/supervisors/appointments/${s.appointmentId}`, { token: admin })).body).toEqual({ appointment })
      const typedAppointment = yield* adminClient.supervisorSessionNotes.showAppointment({ path: { id: s.appointmentId } })
      expect(typedAppointment.appointment).toMatchObject({ id: s.appointmentId, supervision_status: "approved", session_note: { id, status: "completed" } })
      const unsupervised = yield* setting(admin)
      expect(yield* request("GET", `/v1/admin/clinic/supervisors/appointments/${unsupervised.appointmentId}`, { token: admin }))
        .toMatchObject({ status: 404, body: { errors: "Appointment not found" } })
      const plainNote = yield* noteIn(unsupervised, "draft")
      expect(yield* request("GET", `/v1/admin/clinic/supervisors/session_notes/${plainNote}`, { token: admin }))
        .toMatchObject({ status: 404, body: { errors: "Session note not found" } })
      expect(yield* putNote(admin, plainNote, { supervision_status: "approved" })).toMatchObject({
        status: 422, body: { errors: { supervision_status: ["is not applicable: the note is not supervised"] } }
      })
    }))

  it.effect("a signed note never changes: PUT refused, addenda instead, and a change behind the API is detected", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const id = yield* noteIn(s, "completed")
      const before = yield* shownNote(admin, id)
      const readOnly = { status: 422, body: { errors: { status: ["is completed: the note is read-only; corrections are addenda"] } } }
      expect(yield* putNote(s.provider.token, id, { content: { plan: "changed" } })).toMatchObject(readOnly)
      expect(yield* putNote(admin, id, {})).toMatchObject(readOnly)
      // A correction is an addendum: the note reopens, but its body stays locked.
      const asked = yield* askedAddendum(admin, id)
      expect(yield* putNote(s.provider.token, id, { content: { plan: "changed" } })).toMatchObject({
        status: 422, body: { errors: { content: ["is locked: the note was signed; corrections are addenda"] } }
      })
      yield* answeredAddendum(s.provider.token, asked.id, { instructions_response: "Corrected dose: 5 mg." })
      expect((yield* updatedNote(admin, id, { status: "pending_signature" })).status).toBe("pending_signature")
      yield* signedOff(admin, id)
      const after = yield* shownNote(admin, id)
      expect(after).toMatchObject({ status: "completed", signed_at: before.signed_at, content: before.content })
      // The database refuses to change a signed note's content …
      const sql = yield* SqlClient.SqlClient
      const blocked = yield* Effect.either(sql`UPDATE session_notes SET content = '{"plan":"forged"}'::jsonb WHERE id = ${id}`)
      expect(blocked._tag).toBe("Left")
      // … and when someone goes around that too, the hashes show it.
      yield* sql`ALTER TABLE session_notes DISABLE TRIGGER session_notes_locked_content`.pipe(Effect.orDie)
      yield* sql`UPDATE session_notes SET content = jsonb_set(content, '{plan}', '"forged"') WHERE id = ${id}`.pipe(Effect.orDie)
      yield* sql`ALTER TABLE session_notes ENABLE TRIGGER session_notes_locked_content`.pipe(Effect.orDie)
      const forged = yield* shownNote(admin, id)
      expect(forged.content.plan).toBe("forged")
      expect(forged.content_intact).toBe(false)
      expect(forged.sign_offs.map((o) => o.content_matches)).toEqual([false, false])
      expect(forged.sign_offs[0]!.content_sha256).toBe(before.content_sha256)
      expect(content.plan).not.toBe("forged")
    }))
})
