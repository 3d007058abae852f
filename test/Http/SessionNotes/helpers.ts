/** Providers, supervisors, patients, appointments, PNG signatures and notes for the session note tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { PNG } from "pngjs"
import { request, signIn } from "../../support/app.js"
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
  readonly patientId: number
  readonly appointmentId: number
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

const expectStatus = (response: { status: number; body: unknown }, status: number, what: string) =>
  response.status === status ? Effect.void : Effect.dieMessage(`${what}: ${response.status} ${JSON.stringify(response.body)}`)

/** A note of `s` (with `extra` fields) moved through the API to `status` (unsupervised setting). */
export const noteIn = (s: Setting, status: string, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const created = yield* createNote(s.provider.token, s, extra)
    yield* expectStatus(created, 201, "create")
    const id = (created.body as NoteBody).session_note.id
    if (status === "draft") return id
    if (status === "archived") {
      yield* expectStatus(yield* putNote(s.admin, id, { status: "archived" }), 200, "archive")
      return id
    }
    yield* expectStatus(yield* putNote(s.provider.token, id, { status: "pending_review" }), 200, "submit")
    if (status === "pending_review") return id
    if (status === "requires_addendum") {
      yield* expectStatus(yield* addendum(s.admin, id), 201, "addendum")
      return id
    }
    yield* expectStatus(yield* putNote(s.admin, id, { status: "pending_signature" }), 200, "review")
    if (status === "pending_signature") return id
    yield* expectStatus(yield* signOff(s.admin, id), 201, "sign off")
    return id
  })

export const noteRow = (id: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ status: string; content: Record<string, unknown>; locked_at: Date | null }>`
      SELECT status, content, locked_at FROM session_notes WHERE id = ${id}`
    return row
  }).pipe(Effect.orDie)
