/** Providers, patients and slots for the scheduling tests. */
import { Effect } from "effect"
import { AvailableSlotId, PatientId, ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request } from "../../support/app.js"
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

/** A slot of `length` hours `hours` from now (or from `base`), made through the typed client; its id. */
export const slotAt = (token: string, providerId: number, hours: number, length = 1, base = Date.now()) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const created = yield* client.availability.createSlot({
      payload: {
        available_slot: { provider_id: ProviderId.make(providerId), start_time: new Date(hoursFromNow(hours, base)), end_time: new Date(hoursFromNow(hours + length, base)) }
      }
    })
    return created.available_slot.id
  })

/** Whether the slot is open for booking, read through the typed client. */
export const slotAvailable = (token: string, id: AvailableSlotId) =>
  Effect.flatMap(clientAs(token), (client) => client.availability.showSlot({ path: { id } })).pipe(Effect.map((r) => r.available_slot.available))

export const book = (token: string, slotId: number, patientId: number, extra: Record<string, unknown> = {}) =>
  request("POST", "/v1/admin/clinic/availability/books", { token, body: { book: { available_slot_id: slotId, patient_id: patientId, ...extra } } })

/** Books a slot through the typed client; the book and appointment ids. */
export const bookSlot = (token: string, slotId: number, patientId: number) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const created = yield* client.availability.createBook({
      payload: { book: { available_slot_id: AvailableSlotId.make(slotId), patient_id: PatientId.make(patientId) } }
    })
    const appointmentId = created.book.appointment_id
    if (appointmentId === null) return yield* Effect.dieMessage(`book ${created.book.id}: no appointment`)
    return { bookId: created.book.id, appointmentId }
  })
