/**
 * Admin availability (general §2.5, §4.5): provider slots (one-off and recurring), the search for
 * free slots, batch create and delete, and books (booking a slot makes an appointment).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AvailableSlotId, AvailableSlotIdFromText, PatientId, PatientIdFromText, ProviderId, ProviderIdFromText } from "../../Domain/Ids.js"
import { maxRuleLength, recurrenceHorizonDays } from "../../Domain/Scheduling/Recurrence.js"
import { AppointmentType, AvailableSlot, Book, RecurrencePattern } from "../../Domain/Scheduling/Scheduling.js"
import { IsoDate, IsoTimestampInput } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Conflict, NotFound, reportAllErrors, ValidationFailed } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BooleanFromQuery, BoundedArray, BoundedString } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"
import { listQuery } from "../Lists.js"

/** Default page size of slot and book lists (as clinic patients in §8). */
export const slotsPageSize = 25
/** Slots one batch request may create or delete. */
export const maxBatchSlots = 100
export const maxNotesLength = 2000
/** The longest slot or appointment: a day. */
export const maxDurationMinutes = 1440

export const slotMessages = {
  conflict: "Slot conflicts with existing availability",
  endBeforeStart: "must be after start time",
  tooLong: "must be at most 24 hours after start time",
  past: "must be in the future",
  booked: "Slot is already booked",
  unavailable: "Slot is not available",
  pastSlot: "Slot is in the past",
  bookedChange: "Slot is booked and cannot be changed",
  bookedDelete: "Slot is booked and cannot be deleted",
  otherProvider: "Slot belongs to another provider",
  notFound: "Slot not found"
} as const

export class SlotList extends Schema.Class<SlotList>("SlotList")({
  available_slots: Schema.Array(AvailableSlot),
  pagination: Pagination
}) {}

export class SlotSearchResult extends Schema.Class<SlotSearchResult>("SlotSearchResult")({
  available_slots: Schema.Array(AvailableSlot)
}) {}

export class SlotResponse extends Schema.Class<SlotResponse>("SlotResponse")({ available_slot: AvailableSlot }) {}

export class SkippedOccurrence extends Schema.Class<SkippedOccurrence>("SkippedOccurrence")({
  start_time: Schema.Date,
  end_time: Schema.Date,
  error: Schema.String
}) {}

export class SlotCreated extends Schema.Class<SlotCreated>("SlotCreated")({
  available_slot: AvailableSlot,
  occurrences_created: Schema.Int.annotations({ description: "Later occurrences of a recurring slot created with it (0 for a one-off slot)" }),
  skipped_occurrences: Schema.Array(SkippedOccurrence).annotations({ description: "Occurrences not created because they overlap other availability" })
}) {}

const SlotListQuery = listQuery({
  size: "page_size",
  fields: {
    provider_id: Schema.optional(ProviderIdFromText),
    start_date: Schema.optional(IsoDate.annotations({ description: "Slots starting on or after this day (clinic time zone)" })),
    end_date: Schema.optional(IsoDate.annotations({ description: "Slots starting on or before this day (clinic time zone)" })),
    available: Schema.optional(BooleanFromQuery)
  }
})

const ProviderSlotsQuery = listQuery({
  size: "page_size",
  fields: {
    provider_id: ProviderIdFromText,
    start_date: Schema.optional(IsoDate),
    end_date: Schema.optional(IsoDate)
  }
})

const Minutes = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be an integer" }),
  Schema.greaterThan(0, { message: () => "must be greater than 0" }),
  Schema.lessThanOrEqualTo(maxDurationMinutes, { message: () => `must be less than or equal to ${maxDurationMinutes}` })
)

const SlotSearchQuery = Schema.Struct({
  provider_id: Schema.optional(ProviderIdFromText),
  date: Schema.optional(IsoDate.annotations({ description: "The day (clinic time zone); default today" })),
  duration: Schema.optional(Minutes.annotations({ description: "Minutes the slot must last at least" })),
  appointment_type: Schema.optional(AppointmentType)
}).annotations(reportAllErrors)

export class CreateSlotRequest extends Schema.Class<CreateSlotRequest>("CreateSlotRequest")({
  available_slot: Schema.Struct({
    provider_id: ProviderId,
    start_time: IsoTimestampInput,
    end_time: IsoTimestampInput,
    appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
    recurring: Schema.optional(Schema.Boolean),
    recurrence_pattern: Schema.optional(Schema.NullOr(RecurrencePattern)),
    recurrence_rule: Schema.optional(Schema.NullOr(BoundedString(maxRuleLength).annotations({
      description: "With recurrence_pattern custom: an RRULE (FREQ=DAILY|WEEKLY|MONTHLY, INTERVAL, BYDAY, and COUNT or UNTIL)"
    })))
  })
}, requestBody(
  { available_slot: { provider_id: 3, start_time: new Date("2030-03-04T09:00:00-08:00"), end_time: new Date("2030-03-04T10:00:00-08:00"), appointment_type: "therapy" } },
  { available_slot: { provider_id: 3, start_time: new Date("2030-03-04T09:00:00-08:00"), end_time: new Date("2030-03-04T09:50:00-08:00"), recurring: true, recurrence_pattern: "weekly" } },
  { available_slot: { provider_id: 3, start_time: new Date("2030-03-04T09:00:00-08:00"), end_time: new Date("2030-03-04T09:50:00-08:00"), recurring: true, recurrence_pattern: "custom", recurrence_rule: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10" } }
)) {}

export class UpdateSlotRequest extends Schema.Class<UpdateSlotRequest>("UpdateSlotRequest")({
  available_slot: Schema.Struct({
    start_time: Schema.optional(IsoTimestampInput),
    end_time: Schema.optional(IsoTimestampInput),
    appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
    available: Schema.optional(Schema.Boolean)
  })
}, requestBody({ available_slot: { start_time: new Date("2030-03-04T10:00:00-08:00"), end_time: new Date("2030-03-04T11:00:00-08:00"), available: true } })) {}

export class BatchCreateRequest extends Schema.Class<BatchCreateRequest>("BatchCreateRequest")({
  provider_id: ProviderId,
  slots: BoundedArray(Schema.Struct({
    start_time: IsoTimestampInput,
    end_time: IsoTimestampInput,
    appointment_type: Schema.optional(Schema.NullOr(AppointmentType))
  }), maxBatchSlots)
}, requestBody({
  provider_id: 3,
  slots: [
    { start_time: new Date("2030-03-04T09:00:00-08:00"), end_time: new Date("2030-03-04T10:00:00-08:00"), appointment_type: "therapy" },
    { start_time: new Date("2030-03-04T10:00:00-08:00"), end_time: new Date("2030-03-04T11:00:00-08:00") }
  ]
})) {}

export class BatchError extends Schema.Class<BatchError>("BatchError")({
  start_time: Schema.Date,
  end_time: Schema.Date,
  error: Schema.String
}) {}

export class BatchCreateResponse extends Schema.Class<BatchCreateResponse>("BatchCreateResponse")({
  created_slots: Schema.Int,
  failed_slots: Schema.Int,
  slot_ids: Schema.Array(AvailableSlotId),
  errors: Schema.Array(BatchError)
}) {}

export class BatchDeleteRequest extends Schema.Class<BatchDeleteRequest>("BatchDeleteRequest")({
  provider_id: ProviderId,
  slot_ids: BoundedArray(AvailableSlotId, maxBatchSlots)
}, requestBody({ provider_id: 3, slot_ids: [41, 42, 43] })) {}

export class BatchDeleteError extends Schema.Class<BatchDeleteError>("BatchDeleteError")({
  slot_id: AvailableSlotId,
  error: Schema.String
}) {}

export class BatchDeleteResponse extends Schema.Class<BatchDeleteResponse>("BatchDeleteResponse")({
  deleted_slots: Schema.Int,
  failed_slots: Schema.Int,
  errors: Schema.Array(BatchDeleteError)
}) {}

export class BookList extends Schema.Class<BookList>("BookList")({ books: Schema.Array(Book), pagination: Pagination }) {}
export class BookResponse extends Schema.Class<BookResponse>("BookResponse")({ book: Book }) {}

const BookListQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText),
    available_slot_id: Schema.optional(AvailableSlotIdFromText)
  }
})

export class CreateBookRequest extends Schema.Class<CreateBookRequest>("CreateBookRequest")({
  book: Schema.Struct({
    available_slot_id: AvailableSlotId,
    patient_id: PatientId,
    appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
    notes: Schema.optional(Schema.NullOr(BoundedString(maxNotesLength)))
  })
}, requestBody({ book: { available_slot_id: 41, patient_id: 7, appointment_type: "therapy", notes: "First session" } })) {}

const slotPath = Schema.Struct({ id: AvailableSlotIdFromText })
const base = "/admin/clinic/availability"

/** Admin availability (general §4.5). */
export class AvailabilityApi extends HttpApiGroup.make("availability")
  .add(
    HttpApiEndpoint.get("listSlots", `${base}/available_slots`)
      .setUrlParams(SlotListQuery)
      .addSuccess(SlotList)
      .annotateContext(operationDocs({
        summary: "List slots",
        description: `Slots by start time, ${slotsPageSize} a page by default; filters by provider, days (clinic time zone, ` +
          "both inclusive) and `available`.",
        access: Access.admin,
        spec: "general §2.5, §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.post("createSlot", `${base}/available_slots`)
      .setPayload(CreateSlotRequest)
      .addSuccess(SlotCreated, { status: 201 })
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Create a slot",
        description: "A slot of a provider, in the future, ending after it starts. An overlap with another slot of the " +
          `provider is 409 \`${slotMessages.conflict}\` (touching slots are fine). With \`recurring: true\` and a ` +
          "`recurrence_pattern` (daily, weekly, biweekly, monthly, or custom with `recurrence_rule`), the later occurrences " +
          `up to ${recurrenceHorizonDays} days ahead are created too, on the clinic's wall clock (CLINIC_TIME_ZONE): a weekly ` +
          "9:00 slot stays at 9:00 across daylight saving changes. Monthly on the 29th–31st skips months without that day. " +
          "Occurrences that would overlap are skipped and listed in `skipped_occurrences`.",
        access: Access.admin,
        spec: "general §2.5, §4.5",
        singleUse: "a provider's time is offered by one slot (overlaps are 409)"
      }))
  )
  .add(
    HttpApiEndpoint.get("searchSlots", `${base}/available_slots/search`)
      .setUrlParams(SlotSearchQuery)
      .addSuccess(SlotSearchResult)
      .annotateContext(operationDocs({
        summary: "Search free slots",
        description: "Free slots (available, unbooked, not yet started) of one day in the clinic's time zone (default today), " +
          "at least `duration` minutes long, of a provider and appointment type when given (a slot without a type fits any " +
          "type); by start time, at most 500.",
        access: Access.admin,
        spec: "general §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.get("showSlot", `${base}/available_slots/:id`)
      .setPath(slotPath)
      .addSuccess(SlotResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a slot",
        description: `One slot; 404 \`${slotMessages.notFound}\` for an unknown id.`,
        access: Access.admin,
        spec: "general §2.5, §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.put("updateSlot", `${base}/available_slots/:id`)
      .setPath(slotPath)
      .setPayload(UpdateSlotRequest)
      .addSuccess(SlotResponse)
      .addError(NotFound.schema)
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Update a slot",
        description: "Moves a slot, changes its type, or opens or closes it (`available`). The same rules as creation hold " +
          `(a moved slot starts in the future, ends after it starts, overlaps nothing: 409 \`${slotMessages.conflict}\`). ` +
          `A booked slot cannot be changed: 409 \`${slotMessages.bookedChange}\`.`,
        access: Access.admin,
        spec: "general §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteSlot", `${base}/available_slots/:id`)
      .setPath(slotPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(NotFound.schema)
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Delete a slot",
        description: `Deletes an unbooked slot; a booked one is 409 \`${slotMessages.bookedDelete}\` (cancel its appointment first).`,
        access: Access.admin,
        spec: "general §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.get("providerSlots", `${base}/providers/available_slots`)
      .setUrlParams(ProviderSlotsQuery)
      .addSuccess(SlotList)
      .annotateContext(operationDocs({
        summary: "List a provider's slots",
        description: "The slots of one provider (required), booked or not, by start time, within the days given " +
          `(clinic time zone, inclusive), ${slotsPageSize} a page by default.`,
        access: Access.admin,
        spec: "general §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.post("createSlotsInBatch", `${base}/providers/available_slots/create_in_batch`)
      .setPayload(BatchCreateRequest)
      .addSuccess(BatchCreateResponse)
      .annotateContext(operationDocs({
        summary: "Create slots in a batch",
        description: `Creates up to ${maxBatchSlots} slots of one provider. Each slot stands alone: one that ends before it ` +
          "starts, starts in the past or overlaps other availability (including another slot of the same batch: the " +
          "earlier in the list wins) is reported in `errors` and the others are still created. An unknown provider is 422.",
        access: Access.admin,
        spec: "general §2.5, §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.del("destroySlotsInBatch", `${base}/providers/available_slots/destroy_in_batch`)
      .setPayload(BatchDeleteRequest)
      .addSuccess(BatchDeleteResponse)
      .annotateContext(operationDocs({
        summary: "Delete slots in a batch",
        description: `Deletes up to ${maxBatchSlots} slots of one provider. Booked slots, unknown ids and slots of another ` +
          "provider are not deleted and are reported in `errors`; the rest are.",
        access: Access.admin,
        spec: "general §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.get("listBooks", `${base}/books`)
      .setUrlParams(BookListQuery)
      .addSuccess(BookList)
      .annotateContext(operationDocs({
        summary: "List books",
        description: `Books, newest first, ${slotsPageSize} a page by default; filters by patient and slot.`,
        access: Access.admin,
        spec: "general §2.5, §4.5"
      }))
  )
  .add(
    HttpApiEndpoint.post("createBook", `${base}/books`)
      .setPayload(CreateBookRequest)
      .addSuccess(BookResponse, { status: 201 })
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Book a slot",
        description: "In one transaction: the slot becomes unavailable, an appointment (status scheduled, at the slot's " +
          "start, for its length, with its provider) is made, and the book (status confirmed) records both. A booked, " +
          `unavailable or past slot is 409 (\`${slotMessages.booked}\`, \`${slotMessages.unavailable}\`, ` +
          `\`${slotMessages.pastSlot}\`); of concurrent bookings of one slot exactly one succeeds.`,
        access: Access.admin,
        spec: "general §2.5, §4.5",
        singleUse: "a slot is booked once"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Availability",
    description: "Provider availability as slots (recurring series are stored one slot per occurrence), and books: " +
      "booking a slot makes an appointment."
  }))
{}
