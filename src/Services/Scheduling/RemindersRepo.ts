/**
 * The only SQL on `appointment_reminders` (ARCHITECTURE "Persistence"): rows decoded with schemas,
 * SQL errors defects. It owns the reminder status machine's writes — scheduled, cancelled, moved
 * with its appointment, claimed for a send, and the send's outcome — and the reads reminders need
 * of an appointment's patient (how they can be reached). Who sees which reminder is the access
 * module's scope (`Access.scope.appointments`), applied here. The reads and the removal of push
 * devices (`user_devices`) stay here until the accounts area has a repository of its own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { AppointmentId, AppointmentReminderId } from "../../Domain/Ids.js"
import { AppointmentReminder, type DeliveryReport, DeliveryStatus, ReminderStatus } from "../../Domain/Scheduling/Reminders.js"
import { Access, type Viewer } from "../Access/Access.js"
import { jobCanNoLongerRun, staleCutoff } from "../HeartbeatsRepo.js"
import { makeListPage } from "../Lists.js"
import { failStale, orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

/** A reminder goes out on one channel (`all` is expanded when it is created). */
export const ReminderChannel = Schema.Literal("sms", "email", "push", "voice")

export const ReminderRow = Schema.Struct({
  id: AppointmentReminderId,
  appointment_id: AppointmentId,
  reminder_type: ReminderChannel,
  status: ReminderStatus,
  delivery_status: DeliveryStatus,
  send_at: Timestamp,
  /** bigint: text. */
  lead_seconds: Text,
  sent_at: Schema.NullOr(Timestamp),
  message: NullText,
  language: Text,
  status_reason: NullText,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type ReminderRow = typeof ReminderRow.Type

const reminderColumns = `r.id, r.appointment_id, r.reminder_type, r.status, r.delivery_status, r.send_at, r.lead_seconds,
  r.sent_at, r.message, r.language, r.status_reason, r.created_at, r.updated_at`

export const toReminder = (row: ReminderRow): AppointmentReminder =>
  AppointmentReminder.make({
    id: row.id,
    appointment_id: row.appointment_id,
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

/** A reminder with its patient's account (whose family may see it). */
export const ReminderWithPatient = Schema.Struct({ ...ReminderRow.fields, patient_user_id: Schema.NullOr(Schema.Number) })
export type ReminderWithPatient = typeof ReminderWithPatient.Type

/** Who and what an appointment's reminders can reach. */
export const Reachability = Schema.Struct({
  scheduled_at: Timestamp,
  status: Text,
  patient_user_id: Schema.NullOr(Schema.Number),
  language: Text,
  has_phone: Schema.Boolean,
  has_email: Schema.Boolean,
  has_device: Schema.Boolean,
  sms_opted_out: Schema.Boolean
})
export type Reachability = typeof Reachability.Type

/** A reminder to write: scheduled with its job, or (an SMS to a patient who opted out) already cancelled. */
export const NewReminder = Schema.Struct({
  appointment_id: Schema.Number,
  reminder_type: ReminderChannel,
  status: Schema.Literal("scheduled", "cancelled"),
  delivery_status: Schema.Literal("pending", "unsubscribed"),
  send_at: Timestamp,
  lead_seconds: Schema.Number,
  message: NullText,
  language: Text,
  status_reason: NullText,
  automatic: Schema.Boolean,
  created_by_id: Schema.NullOr(Schema.Number)
})
export type NewReminder = typeof NewReminder.Type

/** Everything a send needs, read with its claim. */
export const SendContext = Schema.Struct({
  reminder_type: ReminderChannel,
  message: NullText,
  language: Text,
  appointment_id: AppointmentId,
  scheduled_at: Timestamp,
  appointment_status: Text,
  provider_name: Text,
  phone: NullText,
  email: NullText,
  sms_opted_out: Schema.Boolean,
  user_id: Schema.NullOr(Schema.Number)
})
export type SendContext = typeof SendContext.Type

/** The outcome a send records on its claimed reminder. */
export const SendOutcome = Schema.Struct({
  status: Text,
  delivery: Text,
  reason: NullText,
  sentAt: Schema.NullOr(Timestamp),
  providerMessageId: NullText
})
export type SendOutcome = typeof SendOutcome.Type

const Device = Schema.Struct({ id: Schema.Number, token: Text })
const Moved = Schema.Struct({ id: AppointmentReminderId, send_at: Timestamp })
const Claim = Schema.Struct({ id: Schema.Number, claimedBy: Text })

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

/**
 * Fails reminders left `sending` whose job can no longer run (`jobCanNoLongerRun`) and claimed
 * longer than the stale time ago (../Recovery.ts); how many. Jobs with runs left settle their own
 * reminder on their next run.
 */
export const failStrandedReminders = (staleAfterSeconds: number) =>
  failStale((sql) => ({
    table: "appointment_reminders",
    set: sql`status = 'failed', delivery_status = 'failed', status_reason = ${reminderReasons.interrupted},
      claimed_at = NULL, claimed_by = NULL`,
    where: sql`r.status = 'scheduled' AND r.delivery_status = 'sending' AND r.claimed_at < ${staleCutoff(sql, staleAfterSeconds)}
      AND ${jobCanNoLongerRun(sql, reminderJobKeyPrefix)}`
  }))

export class RemindersRepo extends Effect.Service<RemindersRepo>()("app/RemindersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(reminderColumns)
    const withPatient = sql.literal(`appointment_reminders r JOIN appointments a ON a.id = r.appointment_id
      JOIN patients pa ON pa.id = a.patient_id`)

    const findReachability = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Reachability,
      execute: (appointmentId) =>
        sql`SELECT a.scheduled_at, a.status, u.id AS patient_user_id, pa.language,
            coalesce(nullif(pa.phone, ''), nullif(u.phone, '')) IS NOT NULL AS has_phone,
            coalesce(nullif(pa.email, ''), nullif(u.email, '')) IS NOT NULL AS has_email,
            EXISTS (SELECT 1 FROM user_devices d WHERE d.user_id = u.id) AS has_device,
            EXISTS (SELECT 1 FROM sms_opt_outs o WHERE o.phone_number IN (pa.phone, u.phone)) AS sms_opted_out
          FROM appointments a JOIN patients pa ON pa.id = a.patient_id
          LEFT JOIN users u ON u.id = pa.user_id AND u.deleted_at IS NULL
          WHERE a.id = ${appointmentId}`
    })

    const insertOne = SqlSchema.single({
      Request: NewReminder,
      Result: ReminderRow,
      execute: (reminder) => sql`INSERT INTO appointment_reminders AS r ${sql.insert(reminder)} RETURNING ${columns}`
    })

    const findWithPatient = SqlSchema.findOne({
      Request: Schema.Number,
      Result: ReminderWithPatient,
      execute: (id) => sql`SELECT ${columns}, pa.user_id AS patient_user_id FROM ${withPatient} WHERE r.id = ${id}`
    })

    const bySendAt = { send_at: sql`r.send_at` }
    /** A page of the reminders of appointments the viewer may see (`Access.scope.appointments`), by send time. */
    const list = (viewer: Viewer, at: Date, appointmentId: number | null, page: PageRequest) =>
      listPage({
        select: columns,
        from: withPatient,
        row: ReminderRow,
        scope: Access.scope.appointments(sql, viewer, at),
        filters: [appointmentId !== null && sql`r.appointment_id = ${appointmentId}`],
        sort: { columns: bySendAt, by: "send_at", dir: "ASC", id: sql`r.id` }
      }, page)

    const cancelPendingOf = SqlSchema.findAll({
      Request: Schema.Struct({ appointmentId: Schema.Number, reason: Text, at: Timestamp }),
      Result: Schema.Struct({ id: AppointmentReminderId }),
      execute: ({ appointmentId, at, reason }) =>
        sql`UPDATE appointment_reminders SET status = 'cancelled', status_reason = ${reason}, updated_at = ${at}
          WHERE appointment_id = ${appointmentId} AND status = 'scheduled' AND delivery_status = 'pending'
          RETURNING id`
    })

    // Each pending reminder keeps its lead before the new time, and is not due before `at`.
    const movePendingOf = SqlSchema.findAll({
      Request: Schema.Struct({ appointmentId: Schema.Number, scheduledAt: Timestamp, at: Timestamp }),
      Result: Moved,
      execute: ({ appointmentId, at, scheduledAt }) => {
        const due = sql`greatest(${scheduledAt}::timestamptz - make_interval(secs => lead_seconds), ${at}::timestamptz)`
        return sql`UPDATE appointment_reminders SET send_at = ${due}, updated_at = ${at}
          WHERE appointment_id = ${appointmentId} AND status = 'scheduled' AND delivery_status = 'pending'
            AND send_at IS DISTINCT FROM ${due}
          RETURNING id, send_at`
      }
    })

    const cancelOne = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.Number, reason: Text, at: Timestamp }),
      Result: MovedRow,
      execute: ({ at, id, reason }) =>
        sql`UPDATE appointment_reminders SET status = 'cancelled', status_reason = ${reason}, updated_at = ${at}
          WHERE id = ${id} AND status = 'scheduled' AND delivery_status = 'pending' RETURNING id`
    })

    const claimOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, claimedBy: Text, at: Timestamp, dueBy: Timestamp }),
      Result: SendContext,
      execute: ({ at, claimedBy, dueBy, id }) =>
        sql`WITH claimed AS (
            UPDATE appointment_reminders SET delivery_status = 'sending', claimed_at = ${at},
              claimed_by = ${claimedBy}, attempts = attempts + 1, updated_at = ${at}
            WHERE id = ${id} AND status = 'scheduled' AND send_at <= ${dueBy} AND delivery_status = 'pending'
            RETURNING appointment_id, reminder_type, message, language)
          SELECT r.reminder_type, r.message, r.language, a.id AS appointment_id, a.scheduled_at,
            a.status AS appointment_status, pu.first_name || ' ' || pu.last_name AS provider_name,
            coalesce(nullif(pa.phone, ''), nullif(u.phone, '')) AS phone, coalesce(nullif(pa.email, ''), nullif(u.email, '')) AS email,
            EXISTS (SELECT 1 FROM sms_opt_outs o WHERE o.phone_number IN (pa.phone, u.phone)) AS sms_opted_out, u.id AS user_id
          FROM claimed r
          JOIN appointments a ON a.id = r.appointment_id
          JOIN patients pa ON pa.id = a.patient_id
          JOIN providers p ON p.id = a.provider_id
          JOIN users pu ON pu.id = p.user_id
          LEFT JOIN users u ON u.id = pa.user_id AND u.deleted_at IS NULL`
    })

    const finishOne = SqlSchema.void({
      Request: Schema.Struct({ claim: Claim, outcome: SendOutcome, at: Timestamp }),
      execute: ({ at, claim, outcome: o }) =>
        sql`UPDATE appointment_reminders SET status = ${o.status}, delivery_status = ${o.delivery},
            status_reason = ${o.reason}, sent_at = ${o.sentAt}, provider_message_id = ${o.providerMessageId},
            claimed_at = NULL, claimed_by = NULL, updated_at = ${at}
          WHERE id = ${claim.id} AND delivery_status = 'sending' AND claimed_by = ${claim.claimedBy}`
    })

    const settleOne = SqlSchema.findAll({
      Request: Schema.Struct({ claim: Claim, staleBefore: Timestamp, at: Timestamp }),
      Result: MovedRow,
      execute: ({ at, claim, staleBefore }) =>
        sql`UPDATE appointment_reminders SET status = 'failed', delivery_status = 'failed',
            status_reason = ${reminderReasons.interrupted}, claimed_at = NULL, claimed_by = NULL, updated_at = ${at}
          WHERE id = ${claim.id} AND status = 'scheduled' AND delivery_status = 'sending'
            AND (claimed_by = ${claim.claimedBy} OR claimed_at < ${staleBefore})
          RETURNING id`
    })

    const releaseOne = SqlSchema.void({
      Request: Schema.Struct({ claim: Claim, reason: Text, at: Timestamp }),
      execute: ({ at, claim, reason }) =>
        sql`UPDATE appointment_reminders SET delivery_status = 'pending', status_reason = ${reason},
            claimed_at = NULL, claimed_by = NULL, updated_at = ${at}
          WHERE id = ${claim.id} AND delivery_status = 'sending' AND claimed_by = ${claim.claimedBy}`
    })

    const findDevices = SqlSchema.findAll({
      Request: Schema.Number,
      Result: Device,
      execute: (userId) => sql`SELECT id, token FROM user_devices WHERE user_id = ${userId} ORDER BY id LIMIT 20`
    })

    const deleteDevice = SqlSchema.void({
      Request: Schema.Number,
      execute: (id) => sql`DELETE FROM user_devices WHERE id = ${id}`
    })

    return {
      /** How the appointment's patient can be reached; none for an unknown appointment. */
      reachabilityOf: (appointmentId: number) => Effect.map(orDefect(findReachability(appointmentId)), Option.getOrUndefined),
      insert: (reminder: NewReminder) => orDefect(insertOne(reminder)),
      /** The reminder with its patient's account; none for an unknown id. */
      findWithPatient: (id: number) => Effect.map(orDefect(findWithPatient(id)), Option.getOrUndefined),
      /** One page of the reminders the viewer may see at `at` (of one appointment, or all), by send time. */
      list,
      /** Cancels the appointment's reminders not yet being sent; their ids. */
      cancelPendingOf: (appointmentId: number, reason: string) =>
        Effect.flatMap(now, (at) => cancelPendingOf({ appointmentId, reason, at })).pipe(
          Effect.map((rows) => rows.map((row) => row.id)),
          orDefect
        ),
      /** The appointment's pending reminders follow it to `scheduledAt` (none due before `at`); the ones that moved. */
      movePendingOf: (appointmentId: number, scheduledAt: Date, at: Date) => orDefect(movePendingOf({ appointmentId, scheduledAt, at })),
      /** Cancels one scheduled reminder that is not being sent; whether it did. */
      cancel: (id: number, reason: string) =>
        Effect.flatMap(now, (at) => cancelOne({ id, reason, at })).pipe(Effect.map((rows) => rows.length > 0), orDefect),
      /**
       * Claims a due reminder for `claimedBy` (`scheduled`, `pending` → `sending`) and reads what its
       * send needs, in one statement; none when it is not claimable.
       */
      claim: (id: number, claimedBy: string, at: Date, dueBy: Date) =>
        Effect.map(orDefect(claimOne({ id, claimedBy, at, dueBy })), Option.getOrUndefined),
      /** The claim's holder records the outcome (only it, and only once). */
      finish: (id: number, claimedBy: string, outcome: SendOutcome) =>
        Effect.flatMap(now, (at) => finishOne({ claim: { id, claimedBy }, outcome, at })).pipe(orDefect),
      /** Fails a claim `claimedBy` left or one older than `staleBefore` (an interrupted send); whether it did. */
      settleInterrupted: (id: number, claimedBy: string, staleBefore: Date) =>
        Effect.flatMap(now, (at) => settleOne({ claim: { id, claimedBy }, staleBefore, at })).pipe(
          Effect.map((rows) => rows.length > 0),
          orDefect
        ),
      /** Gives the claim back (`pending`) with the reason the send failed. */
      release: (id: number, claimedBy: string, reason: string) =>
        Effect.flatMap(now, (at) => releaseOne({ claim: { id, claimedBy }, reason, at })).pipe(orDefect),
      /** The user's push devices (at most 20). */
      devicesOf: (userId: number) => orDefect(findDevices(userId)),
      /** Forgets a device whose token the push provider no longer knows. */
      forgetDevice: (id: number) => orDefect(deleteDevice(id))
    } as const
  })
}) {}
