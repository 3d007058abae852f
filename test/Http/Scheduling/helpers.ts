/** Providers, patients and slots for the scheduling tests. */
import { Effect } from "effect"
import { request } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { insertUser, makeProvider } from "../Providers/helpers.js"

export { insertUser, makeProvider }
export { adminToken, password } from "../Providers/helpers.js"

const hourMs = 3_600_000
let counter = 0

/** A patient linked to `userId` (a parent's account) when given; the id. */
export const insertPatient = (userId: number | null = null, name: { first?: string; last?: string } = {}) =>
  fixtures.insertPatient({ first_name: name.first ?? "Pat", last_name: name.last ?? `Patient${++counter}`, user_id: userId })

/** An ISO timestamp `hours` from now, on a whole hour (so slots line up). */
export const hoursFromNow = (hours: number, base = Date.now()) =>
  new Date(Math.floor(base / hourMs) * hourMs + hours * hourMs).toISOString()

export const createSlot = (token: string, slot: Record<string, unknown>) =>
  request("POST", "/v1/admin/clinic/availability/available_slots", { token, body: { available_slot: slot } })

/** A one-hour slot `hours` from now; its id. */
export const slotAt = (token: string, providerId: number, hours: number, length = 1) =>
  Effect.gen(function*() {
    const response = yield* createSlot(token, { provider_id: providerId, start_time: hoursFromNow(hours), end_time: hoursFromNow(hours + length) })
    if (response.status !== 201) return yield* Effect.dieMessage(`slot: ${response.status} ${JSON.stringify(response.body)}`)
    return (response.body as { available_slot: { id: number } }).available_slot.id
  })

export const book = (token: string, slotId: number, patientId: number, extra: Record<string, unknown> = {}) =>
  request("POST", "/v1/admin/clinic/availability/books", { token, body: { book: { available_slot_id: slotId, patient_id: patientId, ...extra } } })

/** Books a slot; the book and appointment ids. */
export const bookSlot = (token: string, slotId: number, patientId: number) =>
  Effect.gen(function*() {
    const response = yield* book(token, slotId, patientId)
    if (response.status !== 201) return yield* Effect.dieMessage(`book: ${response.status} ${JSON.stringify(response.body)}`)
    const created = (response.body as { book: { id: number; appointment_id: number } }).book
    return { bookId: created.id, appointmentId: created.appointment_id }
  })
