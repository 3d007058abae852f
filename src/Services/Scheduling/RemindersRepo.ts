/** Rows of `appointment_reminders` and their representation (issue 17). */
import type { AppointmentId, AppointmentReminderId } from "../../Domain/Ids.js"
import {
  AppointmentReminder, type DeliveryStatus, type ReminderChannel, type ReminderStatus
} from "../../Domain/Scheduling/Reminders.js"

export interface ReminderRow {
  readonly id: number
  readonly appointment_id: number
  readonly reminder_type: ReminderChannel
  readonly status: ReminderStatus
  readonly delivery_status: DeliveryStatus
  readonly send_at: Date
  readonly lead_seconds: string
  readonly sent_at: Date | null
  readonly message: string | null
  readonly language: string
  readonly status_reason: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const reminderColumns = `r.id, r.appointment_id, r.reminder_type, r.status, r.delivery_status, r.send_at, r.lead_seconds,
  r.sent_at, r.message, r.language, r.status_reason, r.created_at, r.updated_at`

export const toReminder = (row: ReminderRow): AppointmentReminder =>
  AppointmentReminder.make({
    id: row.id as AppointmentReminderId,
    appointment_id: row.appointment_id as AppointmentId,
    reminder_type: row.reminder_type,
    status: row.status,
    send_at: row.send_at,
    sent_at: row.sent_at,
    message: row.message,
    language: row.language,
    delivery_status: row.delivery_status,
    status_reason: row.status_reason,
    created_at: row.created_at,
    updated_at: row.updated_at
  })

/** One pending send job per reminder: enqueueing again (a reschedule) moves it; cancelling removes it. */
export const reminderJobKeyPrefix = "appointment_reminder:"
export const reminderJobKey = (id: number) => `${reminderJobKeyPrefix}${id}`

/** Fixed reasons recorded in `status_reason` (no personal data). */
export const reminderReasons = {
  optedOut: "patient opted out of SMS",
  noPhone: "patient has no phone number",
  invalidPhone: "patient's phone number is invalid",
  noEmail: "patient has no email address",
  noDevice: "patient's account has no registered device",
  cancelledByUser: "cancelled by a user",
  interrupted: "sending was interrupted: it may not have reached the patient, and is not sent again",
  appointmentEnded: (status: string) => `appointment is ${status}`,
  /** Moved into the past (a late correction), or due after the appointment began: too late to remind. */
  appointmentPassed: "appointment time has passed"
} as const
