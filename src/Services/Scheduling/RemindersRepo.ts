/** Rows of `appointment_reminders` and their representation (issue 17). */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { AppointmentId, AppointmentReminderId } from "../../Domain/Ids.js"
import {
  AppointmentReminder, type DeliveryReport, type DeliveryStatus, type ReminderChannel, type ReminderStatus
} from "../../Domain/Scheduling/Reminders.js"
import { orDefect } from "../Repository.js"

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

const Sid = Schema.String
const Delivery = Schema.Literal("delivered", "failed", "bounced", "unsubscribed")
const MovedRow = Schema.Struct({ id: Schema.Int })

/**
 * Moves the reminder sent as `sid` out of `sending` to its final delivery (ReminderDeliveries);
 * whether one moved. Never moves a reminder twice.
 */
export const applyDeliveryReport = (report: { readonly sid: string; readonly delivery: DeliveryReport["delivery"]; readonly reason: string | null; readonly at: Date }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Struct({ sid: Sid, delivery: Delivery, reason: Schema.NullOr(Schema.String), at: Schema.DateFromSelf }),
      Result: MovedRow,
      execute: (r) =>
        sql`UPDATE appointment_reminders SET delivery_status = ${r.delivery},
            status = ${r.delivery === "delivered" ? "delivered" : "failed"}, status_reason = ${r.reason}, updated_at = ${r.at}
          WHERE provider_message_id = ${r.sid} AND status = 'sent' AND delivery_status = 'sending'
          RETURNING id`
    })(report)
  ).pipe(Effect.map((rows) => rows.length > 0), orDefect)

/** Whether some reminder was sent as `sid`. */
export const isReminderSid = (sid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Sid,
      Result: MovedRow,
      execute: (s) => sql`SELECT id FROM appointment_reminders WHERE provider_message_id = ${s}`
    })(sid)
  ).pipe(Effect.map((rows) => rows.length > 0), orDefect)

/**
 * The claim's holder records that the provider took the reminder as `sid`: `sent`, delivery
 * `sending` until the provider reports. False when the claim is no longer `claimedBy`'s.
 */
export const recordSentToProvider = (sent: { readonly id: number; readonly claimedBy: string; readonly sid: string; readonly sentAt: Date }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.Int, claimedBy: Schema.String, sid: Sid, sentAt: Schema.DateFromSelf }),
      Result: MovedRow,
      execute: (s) =>
        sql`UPDATE appointment_reminders SET status = 'sent', delivery_status = 'sending',
            status_reason = NULL, sent_at = ${s.sentAt}, provider_message_id = ${s.sid},
            claimed_at = NULL, claimed_by = NULL, updated_at = ${s.sentAt}
          WHERE id = ${s.id} AND delivery_status = 'sending' AND claimed_by = ${s.claimedBy}
          RETURNING id`
    })(sent)
  ).pipe(Effect.map((rows) => rows.length > 0), orDefect)
