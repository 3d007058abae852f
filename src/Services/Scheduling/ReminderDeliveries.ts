/**
 * Delivery reports of reminders sent as SMS and calls: the telephony status webhooks hand over
 * what Twilio says about a message or call SID that is not an ECM communication, and the reminder
 * sent as that SID moves from `sending` to its final delivery status.
 *
 * Twilio may call back before the sender has recorded the SID it was given (it posts as soon as
 * the message moves, while our send is still reading Twilio's answer). Such an early report is
 * kept (`reminder_delivery_reports`) and applied when the sender records the SID. Both sides take
 * a transaction-scoped advisory lock on the SID first, so one of them always sees the other's work.
 *
 * Idempotent: a reminder moves once, out of `sending`; a repeated or late report changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import type { DeliveryReport } from "../../Domain/Scheduling/Reminders.js"
import { makeTransaction } from "../Repository.js"
import { annotatedOutside } from "../Spans.js"
import { now } from "../Time.js"
import { keepEarlyReport, lockSid, takeEarlyReport } from "./ReminderDeliveryReportsRepo.js"
import { applyDeliveryReport, isReminderSid, recordSentToProvider } from "./RemindersRepo.js"

/** Early reports whose SID no reminder took within this long belong to nothing of ours. */
const earlyReportLifetime = Duration.days(1)

export interface SentReminder {
  readonly id: number
  /** The job run holding the reminder's claim: only it records the send. */
  readonly claimedBy: string
  readonly providerMessageId: string
  readonly sentAt: Date
}

export class ReminderDeliveries extends Effect.Service<ReminderDeliveries>()("app/ReminderDeliveries", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = yield* makeTransaction
    /** The repositories' statements run on the service's own client (callers need none). */
    const inTransaction = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      transaction(Effect.provideService(effect, SqlClient.SqlClient, sql))

    /**
     * A final status of the message or call `sid` (the status webhooks, after the signature check
     * and after the ECM communications found no record of theirs). Whether a reminder moved.
     */
    const report = Effect.fn("ReminderDeliveries.report")(function*(sid: string, outcome: DeliveryReport) {
      const at = yield* now
      yield* lockSid(sid)
      if (yield* applyDeliveryReport({ sid, ...outcome, at })) return true
      // Already final (a repeat, or a late second report): nothing changes.
      if (yield* isReminderSid(sid)) return false
      const staleBefore = new Date(at.getTime() - Duration.toMillis(earlyReportLifetime))
      yield* keepEarlyReport({ sid, ...outcome, at, staleBefore })
      return false
    },
      inTransaction,
      annotatedOutside((_sid: string, outcome: DeliveryReport) => ({ "reminder.delivery": outcome.delivery }))
    )

    /**
     * The sender records that the provider took the reminder (`sent`, delivery `sending`) and
     * applies a report that came before it. False when the claim is no longer the sender's.
     */
    const recordSent = Effect.fn("ReminderDeliveries.recordSent")(function*(sent: SentReminder) {
      const sid = sent.providerMessageId
      yield* lockSid(sid)
      if (!(yield* recordSentToProvider({ id: sent.id, claimedBy: sent.claimedBy, sid, sentAt: sent.sentAt }))) return false
      const early = yield* takeEarlyReport(sid)
      if (early !== undefined) {
        yield* applyDeliveryReport({ sid, delivery: early.delivery_status, reason: early.status_reason, at: yield* now })
      }
      return true
    },
      inTransaction,
      annotatedOutside((sent: SentReminder) => ({ "reminder.id": sent.id }))
    )

    return { report, recordSent } as const
  })
}) {}
