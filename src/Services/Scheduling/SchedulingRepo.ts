/** SQL shared by the scheduling services: rows with the people's names, and their representations. */
import type { AppointmentId, AvailableSlotId, BookId, PatientId, ProviderId } from "../../Domain/Ids.js"
import {
  Appointment, type AppointmentStatus, type AppointmentType, AvailableSlot, Book, PersonName
} from "../../Domain/Scheduling/Scheduling.js"
import type { RecurrencePattern } from "../../Domain/Scheduling/Recurrence.js"

export interface SlotRow {
  readonly id: number
  readonly provider_id: number
  readonly start_time: Date
  readonly end_time: Date
  readonly appointment_type: AppointmentType | null
  readonly available: boolean
  readonly recurring: boolean
  readonly recurrence_pattern: RecurrencePattern | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly provider_first_name: string
  readonly provider_last_name: string
}

/** `FROM available_slots s JOIN providers p ON p.id = s.provider_id JOIN users pu ON pu.id = p.user_id`. */
export const slotColumns = `s.id, s.provider_id, s.start_time, s.end_time, s.appointment_type, s.available, s.recurring,
  s.recurrence_pattern, s.created_at, s.updated_at, pu.first_name AS provider_first_name, pu.last_name AS provider_last_name`
export const slotFrom = `available_slots s JOIN providers p ON p.id = s.provider_id JOIN users pu ON pu.id = p.user_id`

export const toSlot = (row: SlotRow): AvailableSlot =>
  AvailableSlot.make({
    id: row.id as AvailableSlotId,
    provider_id: row.provider_id as ProviderId,
    start_time: row.start_time,
    end_time: row.end_time,
    appointment_type: row.appointment_type,
    available: row.available,
    recurring: row.recurring,
    recurrence_pattern: row.recurrence_pattern,
    created_at: row.created_at,
    updated_at: row.updated_at,
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

export interface BookRow {
  readonly id: number
  readonly available_slot_id: number | null
  readonly patient_id: number
  readonly appointment_type: AppointmentType | null
  readonly notes: string | null
  readonly status: "confirmed" | "cancelled"
  readonly appointment_id: number | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const bookColumns = `b.id, b.available_slot_id, b.patient_id, b.appointment_type, b.notes, b.status, b.appointment_id,
  b.created_at, b.updated_at`

export const toBook = (row: BookRow): Book =>
  Book.make({
    id: row.id as BookId,
    available_slot_id: row.available_slot_id as AvailableSlotId | null,
    patient_id: row.patient_id as PatientId,
    appointment_type: row.appointment_type,
    notes: row.notes,
    status: row.status,
    appointment_id: row.appointment_id as AppointmentId | null,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

export interface AppointmentRow {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number
  readonly available_slot_id: number | null
  readonly scheduled_at: Date
  readonly status: AppointmentStatus
  readonly appointment_type: AppointmentType | null
  readonly duration_minutes: number
  readonly notes: string | null
  readonly no_show: boolean
  readonly telephony_room_sid: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly patient_user_id: number | null
  readonly provider_first_name: string
  readonly provider_last_name: string
  readonly provider_user_id: number
}

export const appointmentColumns = `a.id, a.patient_id, a.provider_id, a.available_slot_id, a.scheduled_at, a.status,
  a.appointment_type, a.duration_minutes, a.notes, a.no_show, a.telephony_room_sid, a.created_at, a.updated_at,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name, pa.user_id AS patient_user_id,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.user_id AS provider_user_id`
export const appointmentFrom = `appointments a JOIN patients pa ON pa.id = a.patient_id
  JOIN providers p ON p.id = a.provider_id JOIN users pu ON pu.id = p.user_id`

export const toAppointment = (row: AppointmentRow): Appointment =>
  Appointment.make({
    id: row.id as AppointmentId,
    patient_id: row.patient_id as PatientId,
    provider_id: row.provider_id as ProviderId,
    scheduled_at: row.scheduled_at,
    status: row.status,
    appointment_type: row.appointment_type,
    duration_minutes: row.duration_minutes,
    notes: row.notes,
    no_show: row.no_show,
    telephony_room_sid: row.telephony_room_sid,
    created_at: row.created_at,
    updated_at: row.updated_at,
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** Text a request gave, trimmed; blank → null. */
export const blankToNull = (s: string | null | undefined): string | null => {
  const trimmed = s?.trim() ?? ""
  return trimmed.length === 0 ? null : trimmed
}
