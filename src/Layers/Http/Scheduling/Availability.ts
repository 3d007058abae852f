/** Admin availability (general §4.5): decode, take the caller, call `Slots` and `Books`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { slotsPageSize } from "../../../Api/Scheduling/Availability.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Books } from "../../../Services/Scheduling/Books.js"
import { Slots } from "../../../Services/Scheduling/Slots.js"

export const HttpAvailabilityLive = HttpApiBuilder.group(Api, "availability", (handlers) =>
  Effect.gen(function*() {
    const slots = yield* Slots
    const books = yield* Books
    return handlers
      .handle("listSlots", ({ urlParams }) =>
        slots.list({
          providerId: urlParams.provider_id,
          startDate: urlParams.start_date,
          endDate: urlParams.end_date,
          available: urlParams.available
        }, pageRequest(urlParams, slotsPageSize)))
      .handle("createSlot", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => slots.create(caller.id, payload.available_slot)))
      .handle("searchSlots", ({ urlParams }) =>
        slots.search({
          providerId: urlParams.provider_id,
          date: urlParams.date,
          duration: urlParams.duration,
          appointmentType: urlParams.appointment_type
        }))
      .handle("showSlot", ({ path }) => Effect.map(slots.show(path.id), (available_slot) => ({ available_slot })))
      .handle("updateSlot", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => slots.update(caller.id, path.id, payload.available_slot)).pipe(
          Effect.map((available_slot) => ({ available_slot }))
        ))
      .handle("deleteSlot", ({ path }) => Effect.flatMap(CurrentUser, (caller) => slots.remove(caller.id, path.id)))
      .handle("providerSlots", ({ urlParams }) =>
        slots.providerSlots({
          providerId: urlParams.provider_id,
          startDate: urlParams.start_date,
          endDate: urlParams.end_date
        }, pageRequest(urlParams, slotsPageSize)))
      .handle("createSlotsInBatch", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => slots.createInBatch(caller.id, payload)))
      .handle("destroySlotsInBatch", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => slots.destroyInBatch(caller.id, payload.provider_id, payload.slot_ids)))
      .handle("listBooks", ({ urlParams }) =>
        books.list({ patientId: urlParams.patient_id, slotId: urlParams.available_slot_id }, pageRequest(urlParams, slotsPageSize)))
      .handle("createBook", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => books.create(caller.id, payload.book)).pipe(Effect.map((book) => ({ book }))))
  }))
