/** Providers, supervisors, patients, appointments, PNG signatures and notes for the session note tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { PNG } from "pngjs"
import type { CreateAddendumRequest, CreateSignOffRequest, NewSessionNote, SessionNoteChanges, UpdateAddendumRequest } from "../../../src/Api/SessionNotes/SessionNotes.js"
import type { AppointmentId, PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn } from "../../support/app.js"
import { insertAppointment, insertPatient } from "../Billing/helpers.js"
import { insertUser, makeProvider, password, put } from "../Providers/helpers.js"

export { adminToken, auditActions, insertUser, password } from "../Providers/helpers.js"
export { insertAppointment, insertPatient } from "../Billing/helpers.js"

let counter = 0

export const notesPath = "/v1/clinic/patients/session_notes"
export const adminNotesPath = "/v1/admin/clinic/session_notes"

/** A signed-in provider (or supervisor): provider id, user id, token. */
export const staffMember = (adminToken: string, role: "provider" | "supervisor" = "provider", supervisorId?: number) =>
  Effect.gen(function*() {
    const email = `notes${++counter}.${Date.now()}@notes.test`
    const made = yield* makeProvider(adminToken, role, { email, first_name: role === "supervisor" ? "Sam" : "Quinn", last_name: `${role}${counter}` })
    if (supervisorId !== undefined) {
      const response = yield* put(adminToken, made.id, { supervisor_id: supervisorId })
      if (response.status !== 200) return yield* Effect.dieMessage(`supervisor: ${response.status} ${JSON.stringify(response.body)}`)
    }
    const token = yield* signIn(email, password)
    return { id: made.id, userId: made.userId, token }
  })

/** A signed-in user of another role (support, billing, parent). */
export const userWithRole = (role: "support" | "billing" | "parent") =>
  Effect.gen(function*() {
    const email = `role${++counter}.${Date.now()}@notes.test`
    const userId = yield* insertUser({ email, role })
    return { userId, token: yield* signIn(email, password) }
  })

/** A PNG of the given size as a data URI. */
export const pngDataUri = (width = 40, height = 20, noise = false) => {
  const png = new PNG({ width, height })
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = noise ? Math.floor(Math.random() * 256) : 20
    png.data[i + 1] = noise ? Math.floor(Math.random() * 256) : 30
    png.data[i + 2] = noise ? Math.floor(Math.random() * 256) : 200
    png.data[i + 3] = 255
  }
  return `data:image/png;base64,${PNG.sync.write(png).toString("base64")}`
}

export const content = {
  subjective: "Parent reports calmer mornings.",
  objective: "Engaged for the full session.",
  assessment: "Progressing toward goal one.",
  plan: "Continue weekly sessions."
}

export interface Setting {
  readonly admin: string
  readonly provider: { id: number; userId: number; token: string }
  readonly supervisor?: { id: number; userId: number; token: string } | undefined
  readonly patientId: PatientId
  readonly appointmentId: AppointmentId
}

/** A provider (with a supervisor when asked), a patient and a completed appointment between them. */
export const setting = (admin: string, options: { supervised?: boolean; userId?: number | null } = {}) =>
  Effect.gen(function*() {
    const supervisor = options.supervised === true ? yield* staffMember(admin, "supervisor") : undefined
    const provider = yield* staffMember(admin, "provider", supervisor?.id)
    const patientId = yield* insertPatient({ userId: options.userId ?? null })
    const appointment = yield* insertAppointment(patientId, provider.id)
    return { admin, provider, supervisor, patientId, appointmentId: appointment.id } satisfies Setting
  })

export type NoteBody = { session_note: Record<string, unknown> & { id: number; status: string } }

/** The note of `s` written through the typed client (the helper content unless `extra` says otherwise). */
export const createdNote = (token: string, s: Setting, extra: Partial<NewSessionNote> = {}) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.clinicSessionNotes.create({
      payload: { session_note: { patient_id: s.patientId, appointment_id: s.appointmentId, content, ...extra } }
    })).pipe(Effect.map((response) => response.session_note))

/** A PUT of the note through the typed client; the note as changed. */
export const updatedNote = (token: string, id: number, changes: SessionNoteChanges) =>
  Effect.flatMap(clientAs(token), (client) => client.clinicSessionNotes.update({ path: { id }, payload: { session_note: changes } })).pipe(
    Effect.map((response) => response.session_note)
  )

/** The note read through the typed client (the clinic endpoint). */
export const shownNote = (token: string, id: number) =>
  Effect.flatMap(clientAs(token), (client) => client.clinicSessionNotes.show({ path: { id } })).pipe(Effect.map((response) => response.session_note))

/** An addendum asked through the typed client. */
export const askedAddendum = (token: string, noteId: number, extra: Partial<CreateAddendumRequest["addendum"]> = {}) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.sessionNoteReviews.createAddendum({
      payload: { session_note_id: noteId, addendum: { instructions: "Add the school report.", ...extra } }
    })).pipe(Effect.map((response) => response.addendum))

/** An addendum answered through the typed client. */
export const answeredAddendum = (token: string, id: number, extra: UpdateAddendumRequest["addendum"] = {}) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.sessionNoteReviews.updateAddendum({ path: { id }, payload: { addendum: { instructions_response: "Added it.", ...extra } } })).pipe(
      Effect.map((response) => response.addendum)
    )

/** A sign-off given through the typed client (reviewed 2026-01-06, a small PNG). */
export const signedOff = (token: string, noteId: number, extra: Partial<CreateSignOffRequest["sign_off"]> = {}) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.sessionNoteReviews.createSignOff({
      payload: { session_note_id: noteId, sign_off: { review_date: new Date("2026-01-06T00:00:00.000Z"), signature: pngDataUri(), ...extra } }
    })).pipe(Effect.map((response) => response.sign_off))

export const createNote = (token: string, s: Setting, extra: Record<string, unknown> = {}) =>
  request("POST", notesPath, { token, body: { session_note: { patient_id: s.patientId, appointment_id: s.appointmentId, content, ...extra } } })

export const putNote = (token: string, id: number, changes: Record<string, unknown>) =>
  request("PUT", `${notesPath}/${id}`, { token, body: { session_note: changes } })

export const addendum = (token: string, noteId: number, extra: Record<string, unknown> = {}) =>
  request("POST", `${adminNotesPath}/addendums`, { token, body: { session_note_id: noteId, addendum: { instructions: "Add the school report.", ...extra } } })

export const answer = (token: string, id: number, extra: Record<string, unknown> = {}) =>
  request("PUT", `${adminNotesPath}/addendums/${id}`, { token, body: { addendum: { instructions_response: "Added it.", ...extra } } })

export const signOff = (token: string, noteId: number, extra: Record<string, unknown> = {}) =>
  request("POST", `${adminNotesPath}/sign_offs`, {
    token, body: { session_note_id: noteId, sign_off: { review_date: "2026-01-06", signature: pngDataUri(), ...extra } }
  })

/** A note of `s` (with `extra` fields) moved through the typed client to `status` (unsupervised setting). */
export const noteIn = (s: Setting, status: string, extra: Partial<NewSessionNote> = {}) =>
  Effect.gen(function*() {
    const { id } = yield* createdNote(s.provider.token, s, extra)
    if (status === "draft") return id
    if (status === "archived") {
      yield* updatedNote(s.admin, id, { status: "archived" })
      return id
    }
    yield* updatedNote(s.provider.token, id, { status: "pending_review" })
    if (status === "pending_review") return id
    if (status === "requires_addendum") {
      yield* askedAddendum(s.admin, id)
      return id
    }
    yield* updatedNote(s.admin, id, { status: "pending_signature" })
    if (status === "pending_signature") return id
    yield* signedOff(s.admin, id)
    return id
  })

export const noteRow = (id: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ status: string; content: Record<string, unknown>; locked_at: Date | null }>`
      SELECT status, content, locked_at FROM session_notes WHERE id = ${id}`
    return row
  }).pipe(Effect.orDie)
