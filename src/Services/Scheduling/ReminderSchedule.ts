/**
 * Scheduling reminders inside the caller's transaction (issue 17): the reminder rows and their send
 * jobs commit together or not at all. Bookings schedule the default reminders, reschedules move the
 * pending ones (same job key: replaced), cancels and finished appointments cancel them.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { defaultLeadMinutes, everyDayChannels, remindableStatuses, type ReminderChannel, sendTimeFor } from "../../Domain/Scheduling/Reminders.js"
import { Jobs } from "../Jobs.js"
import { reminderColumns, reminderJobKey, reminderReasons, type ReminderRow } from "./RemindersRepo.js"
import { reminderMaxAttempts, sendReminderTask } from "./ReminderTasks.js"

/** Who and what an appointment's reminders can reach. */
export interface Reachability {
  readonly scheduled_at: Date
  readonly status: string
  readonly patient_user_id: number | null
  readonly language: string
  readonly has_phone: boolean
  readonly has_email: boolean
  readonly has_device: boolean
  readonly sms_opted_out: boolean
}

export const isReachable = (reach: Reachability, channel: ReminderChannel): boolean =>
  channel === "email" ? reach.has_email : channel === "push" ? reach.has_device : reach.has_phone

export interface NewReminder {
  readonly channel: ReminderChannel
  /** None: the default schedule. */
  readonly sendAt?: Date | undefined
  readonly message: string | null
  readonly language: string
}

export class ReminderSchedule extends Effect.Service<ReminderSchedule>()("app/ReminderSchedule", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* Jobs
    const columns = sql.literal(reminderColumns)

    const reachabilityOf = (appointmentId: number) =>
      sql<Reachability>`SELECT a.scheduled_at, a.status, u.id AS patient_user_id, pa.language,
          coalesce(nullif(pa.phone, ''), nullif(u.phone, '')) IS NOT NULL AS has_phone,
          coalesce(nullif(pa.email, ''), nullif(u.email, '')) IS NOT NULL AS has_email,
          EXISTS (SELECT 1 FROM user_devices d WHERE d.user_id = u.id) AS has_device,
          EXISTS (SELECT 1 FROM sms_opt_outs o WHERE o.phone_number IN (pa.phone, u.phone)) AS sms_opted_out
        FROM appointments a JOIN patients pa ON pa.id = a.patient_id
        LEFT JOIN users u ON u.id = pa.user_id AND u.deleted_at IS NULL
        WHERE a.id = ${appointmentId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /**
     * Inserts the reminders and enqueues their jobs; call it inside `sql.withTransaction`. An SMS
     * to a patient who opted out is recorded already cancelled, with its reason, and gets no job.
     */
    const insert = (appointmentId: number, reach: Reachability, reminders: ReadonlyArray<NewReminder>, options: {
      readonly automatic: boolean
      readonly actorId: number | null
    }) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows: Array<ReminderRow> = []
        for (const reminder of reminders) {
          const leadSeconds = reminder.sendAt === undefined
            ? defaultLeadMinutes[reminder.channel] * 60
            : Math.round((reach.scheduled_at.getTime() - reminder.sendAt.getTime()) / 1000)
          const sendAt = reminder.sendAt ?? sendTimeFor(reach.scheduled_at, leadSeconds, now)
          const optedOut = reminder.channel === "sms" && reach.sms_opted_out
          const [row] = yield* sql<ReminderRow>`INSERT INTO appointment_reminders AS r
              (appointment_id, reminder_type, status, delivery_status, send_at, lead_seconds, message, language,
               status_reason, automatic, created_by_id)
            VALUES (${appointmentId}, ${reminder.channel}, ${optedOut ? "cancelled" : "scheduled"},
              ${optedOut ? "unsubscribed" : "pending"}, ${sendAt}, ${leadSeconds}, ${reminder.message}, ${reminder.language},
              ${optedOut ? reminderReasons.optedOut : null}, ${options.automatic}, ${options.actorId})
            RETURNING ${columns}`
          if (!optedOut) {
            yield* jobs.enqueue(sendReminderTask, { reminder_id: row!.id }, {
              runAt: sendAt,
              jobKey: reminderJobKey(row!.id),
              maxAttempts: reminderMaxAttempts
            })
          }
          rows.push(row!)
        }
        return rows
      }).pipe(Effect.orDie)

    /**
     * A booking made an appointment: its default reminders (email, SMS, push) on every channel the
     * patient can be reached on, in the patient's language. Inside the booking's transaction.
     */
    const scheduleForBooking = (appointmentId: number, actorId: number | null) =>
      Effect.gen(function*() {
        const reach = yield* reachabilityOf(appointmentId)
        if (reach === undefined) return
        const channels = everyDayChannels.filter((channel) => isReachable(reach, channel))
        yield* insert(appointmentId, reach, channels.map((channel) => ({ channel, message: null, language: reach.language })), {
          automatic: true,
          actorId
        })
      }).pipe(Effect.withSpan("ReminderSchedule.scheduleForBooking", { attributes: { "appointment.id": appointmentId } }))

    /** Cancels the appointment's reminders not yet being sent, and their jobs. */
    const cancelPending = (appointmentId: number, reason: string) =>
      Effect.gen(function*() {
        const cancelled = yield* sql<{ id: number }>`UPDATE appointment_reminders SET status = 'cancelled',
            status_reason = ${reason}, updated_at = now()
          WHERE appointment_id = ${appointmentId} AND status = 'scheduled' AND delivery_status = 'pending'
          RETURNING id`
        for (const { id } of cancelled) yield* jobs.cancel(reminderJobKey(id))
      })

    /**
     * An appointment changed (inside its update's transaction): moved → its pending reminders keep
     * their lead before the new time (their jobs replaced, by key); moved into the past (a late
     * correction, a walk-in recorded afterwards) or no longer remindable (cancelled, no-show,
     * started, completed) → its pending reminders are cancelled with their jobs.
     */
    const appointmentChanged = (appointmentId: number) =>
      Effect.gen(function*() {
        const reach = yield* reachabilityOf(appointmentId)
        if (reach === undefined) return
        if (!remindableStatuses.includes(reach.status)) {
          return yield* cancelPending(appointmentId, reminderReasons.appointmentEnded(reach.status))
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        // Without this, `greatest(…, now)` below would send every reminder at once for a day gone by.
        if (reach.scheduled_at.getTime() <= now.getTime()) return yield* cancelPending(appointmentId, reminderReasons.appointmentPassed)
        const moved = yield* sql<{ id: number; send_at: Date }>`UPDATE appointment_reminders
            SET send_at = greatest(${reach.scheduled_at}::timestamptz - make_interval(secs => lead_seconds), ${now}::timestamptz),
              updated_at = now()
            WHERE appointment_id = ${appointmentId} AND status = 'scheduled' AND delivery_status = 'pending'
              AND send_at IS DISTINCT FROM greatest(${reach.scheduled_at}::timestamptz - make_interval(secs => lead_seconds), ${now}::timestamptz)
            RETURNING id, send_at`
        for (const { id, send_at } of moved) {
          yield* jobs.enqueue(sendReminderTask, { reminder_id: id }, { runAt: send_at, jobKey: reminderJobKey(id), maxAttempts: reminderMaxAttempts })
        }
      }).pipe(Effect.orDie, Effect.withSpan("ReminderSchedule.appointmentChanged", { attributes: { "appointment.id": appointmentId } }))

    /** Cancels one scheduled reminder that is not being sent, and its job; false when it is not so. */
    const cancelOne = (id: number, reason: string) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE appointment_reminders SET status = 'cancelled', status_reason = ${reason}, updated_at = now()
          WHERE id = ${id} AND status = 'scheduled' AND delivery_status = 'pending' RETURNING id`
        if (rows.length === 0) return false
        yield* jobs.cancel(reminderJobKey(id))
        return true
      }).pipe(Effect.orDie)

    return { reachabilityOf, insert, scheduleForBooking, appointmentChanged, cancelOne } as const
  })
}) {}
