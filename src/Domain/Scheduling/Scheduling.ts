/** Availability, books and appointments (general §2.5, §2.13): representations and pure rules. */
import { Schema } from "effect"
import { AppointmentId, AvailableSlotId, BookId, PatientId, ProviderId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"
import { recurrencePatterns } from "./Recurrence.js"

export const AppointmentType = Schema.Literal(
  "therapy", "consultation", "follow_up", "assessment", "group_therapy", "medication_review"
).annotations({ message: () => "is not included in the list" })
export type AppointmentType = typeof AppointmentType.Type
export const appointmentTypes: ReadonlyArray<AppointmentType> = AppointmentType.literals

export const RecurrencePattern = Schema.Literal(...recurrencePatterns).annotations({ message: () => "is not included in the list" })

export const AppointmentStatus = Schema.Literal(
  "scheduled", "confirmed", "in_progress", "completed", "cancelled", "no_show", "rescheduled"
).annotations({ message: () => "is not included in the list" })
export type AppointmentStatus = typeof AppointmentStatus.Type
export const appointmentStatuses: ReadonlyArray<AppointmentStatus> = AppointmentStatus.literals

/**
 * The appointment status machine (general §2.13 lists the states; the moves are ours,
 * docs/spec-decisions.md): scheduled → confirmed → in_progress → completed; scheduled, confirmed
 * and rescheduled → cancelled | no_show | rescheduled; rescheduled (a moved appointment) →
 * confirmed as scheduled does. completed, cancelled and no_show are final.
 */
const moves: Readonly<Record<AppointmentStatus, ReadonlyArray<AppointmentStatus>>> = {
  scheduled: ["confirmed", "cancelled", "no_show", "rescheduled"],
  confirmed: ["in_progress", "cancelled", "no_show", "rescheduled"],
  rescheduled: ["confirmed", "cancelled", "no_show", "rescheduled"],
  in_progress: ["completed"],
  completed: [],
  cancelled: [],
  no_show: []
}

export const finalStatuses: ReadonlyArray<AppointmentStatus> = ["completed", "cancelled", "no_show"]
export const isFinal = (status: AppointmentStatus): boolean => finalStatuses.includes(status)
export const canMove = (from: AppointmentStatus, to: AppointmentStatus): boolean => from === to || moves[from].includes(to)
/** Statuses whose appointment holds the provider's time (the exclusion constraint's WHERE). */
export const activeStatuses: ReadonlyArray<AppointmentStatus> = ["scheduled", "confirmed", "in_progress", "completed", "rescheduled"]

export class PersonName extends Schema.Class<PersonName>("PersonName")({
  id: Schema.Int,
  first_name: Schema.String,
  last_name: Schema.String
}) {}

/** §2.5 available slot. */
export class AvailableSlot extends Schema.Class<AvailableSlot>("AvailableSlot")({
  id: AvailableSlotId,
  provider_id: ProviderId,
  start_time: IsoTimestamp,
  end_time: IsoTimestamp,
  appointment_type: Schema.NullOr(AppointmentType),
  available: Schema.Boolean,
  recurring: Schema.Boolean,
  recurrence_pattern: Schema.NullOr(RecurrencePattern),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  provider: PersonName
}) {}

export const BookStatus = Schema.Literal("confirmed", "cancelled")

/** §2.5 book, with the appointment it made. */
export class Book extends Schema.Class<Book>("Book")({
  id: BookId,
  available_slot_id: Schema.NullOr(AvailableSlotId),
  patient_id: PatientId,
  appointment_type: Schema.NullOr(AppointmentType),
  notes: Schema.NullOr(Schema.String),
  status: BookStatus,
  appointment_id: Schema.NullOr(AppointmentId),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

/** §2.13 appointment. */
export class Appointment extends Schema.Class<Appointment>("Appointment")({
  id: AppointmentId,
  patient_id: PatientId,
  provider_id: ProviderId,
  scheduled_at: IsoTimestamp,
  status: AppointmentStatus,
  appointment_type: Schema.NullOr(AppointmentType),
  duration_minutes: Schema.Int,
  notes: Schema.NullOr(Schema.String),
  no_show: Schema.Boolean,
  telephony_room_sid: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  patient: PersonName,
  provider: PersonName
}) {}
