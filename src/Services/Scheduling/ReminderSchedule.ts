/**
 * Scheduling reminders inside the caller's transaction: the reminder rows and their send jobs
 * commit together or not at all. Bookings schedule the default reminders, reschedules move the
 * pending ones (same job key: replaced), cancels and finished appointments cancel them.
 */
import { Effect } from "effect"
import { defaultLeadMinutes, everyDayChannels, remindableStatuses, type ReminderChannel, sendTimeFor } from "../../Domain/Scheduling/Reminders.js"
import { Jobs } from "../Jobs.js"
import { now } from "../Time.js"
import { type Reachability, reminderJobKey, reminderReasons, type ReminderRow, RemindersRepo } from "./RemindersRepo.js"
import { reminderMaxAttempts, sendReminderTask } from "./ReminderTasks.js"

export type { Reachability } from "./RemindersRepo.js"

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
  dependencies: [RemindersRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* RemindersRepo
    const jobs = yield* Jobs

    const reachabilityOf = repo.reachabilityOf

    /**
     * Inserts the reminders and enqueues their jobs; call it inside a transaction. An SMS to a
     * patient who opted out is recorded already cancelled, with its reason, and gets no job.
     */
    const insert = (appointmentId: number, reach: Reachability, reminders: ReadonlyArray<NewReminder>, options: {
      readonly automatic: boolean
      readonly actorId: number | null
    }) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows: Array<ReminderRow> = []
        for (const reminder of reminders) {
          const leadSeconds = reminder.sendAt === undefined
            ? defaultLeadMinutes[reminder.channel] * 60
            : Math.round((reach.scheduled_at.getTime() - reminder.sendAt.getTime()) / 1000)
          const sendAt = reminder.sendAt ?? sendTimeFor(reach.scheduled_at, leadSeconds, at)
          const optedOut = reminder.channel === "sms" && reach.sms_opted_out
          const row = yield* repo.insert({
            appointment_id: appointmentId,
            reminder_type: reminder.channel,
            status: optedOut ? "cancelled" : "scheduled",
            delivery_status: optedOut ? "unsubscribed" : "pending",
            send_at: sendAt,
            lead_seconds: leadSeconds,
            message: reminder.message,
            language: reminder.language,
            status_reason: optedOut ? reminderReasons.optedOut : null,
            automatic: options.automatic,
            created_by_id: options.actorId
          })
          if (!optedOut) {
            yield* jobs.enqueue(sendReminderTask, { reminder_id: row.id }, {
              runAt: sendAt,
              jobKey: reminderJobKey(row.id),
              maxAttempts: reminderMaxAttempts
            })
          }
          rows.push(row)
        }
        return rows
      })

    /**
     * A booking made an appointment: its default reminders (email, SMS, push) on every channel the
     * patient can be reached on, in the patient's language. Inside the booking's transaction.
     */
    const scheduleForBooking = Effect.fn("ReminderSchedule.scheduleForBooking")(function*(appointmentId: number, actorId: number | null) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": appointmentId })
      const reach = yield* reachabilityOf(appointmentId)
      if (reach === undefined) return
      const channels = everyDayChannels.filter((channel) => isReachable(reach, channel))
      yield* insert(appointmentId, reach, channels.map((channel) => ({ channel, message: null, language: reach.language })), {
        automatic: true,
        actorId
      })
    })

    /** Cancels the appointment's reminders not yet being sent, and their jobs. */
    const cancelPending = (appointmentId: number, reason: string) =>
      Effect.gen(function*() {
        const cancelled = yield* repo.cancelPendingOf(appointmentId, reason)
        for (const id of cancelled) yield* jobs.cancel(reminderJobKey(id))
      })

    /**
     * An appointment changed (inside its update's transaction): moved → its pending reminders keep
     * their lead before the new time (their jobs replaced, by key); moved into the past (a late
     * correction, a walk-in recorded afterwards) or no longer remindable (cancelled, no-show,
     * started, completed) → its pending reminders are cancelled with their jobs.
     */
    const appointmentChanged = Effect.fn("ReminderSchedule.appointmentChanged")(function*(appointmentId: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": appointmentId })
      const reach = yield* reachabilityOf(appointmentId)
      if (reach === undefined) return
      if (!remindableStatuses.includes(reach.status)) {
        return yield* cancelPending(appointmentId, reminderReasons.appointmentEnded(reach.status))
      }
      const at = yield* now
      // Without this, the move's `greatest(…, now)` would send every reminder at once for a day gone by.
      if (reach.scheduled_at.getTime() <= at.getTime()) return yield* cancelPending(appointmentId, reminderReasons.appointmentPassed)
      const moved = yield* repo.movePendingOf(appointmentId, reach.scheduled_at, at)
      for (const { id, send_at } of moved) {
        yield* jobs.enqueue(sendReminderTask, { reminder_id: id }, { runAt: send_at, jobKey: reminderJobKey(id), maxAttempts: reminderMaxAttempts })
      }
    })

    /** Cancels one scheduled reminder that is not being sent, and its job; false when it is not so. */
    const cancelOne = (id: number, reason: string) =>
      Effect.gen(function*() {
        if (!(yield* repo.cancel(id, reason))) return false
        yield* jobs.cancel(reminderJobKey(id))
        return true
      })

    return { reachabilityOf, insert, scheduleForBooking, appointmentChanged, cancelOne } as const
  })
}) {}
