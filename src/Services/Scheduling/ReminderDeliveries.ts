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
import { Clock, Duration, Effect } from "effect"
import type { DeliveryReport } from "../../Domain/Scheduling/Reminders.js"

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
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Serialises the webhook and the sender on one SID until the transaction ends. */
    const lockSid = (sid: string) => sql`SELECT pg_advisory_xact_lock(hashtext('reminder-delivery:' || ${sid}))`

    /** Moves the reminder sent as `sid` out of `sending`; false when there is none in that state. */
    const apply = (sid: string, report: DeliveryReport, at: Date) =>
      sql`UPDATE appointment_reminders SET delivery_status = ${report.delivery},
          status = ${report.delivery === "delivered" ? "delivered" : "failed"}, status_reason = ${report.reason}, updated_at = ${at}
        WHERE provider_message_id = ${sid} AND status = 'sent' AND delivery_status = 'sending'
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

    /**
     * A final status of the message or call `sid` (the status webhooks, after the signature check
     * and after the ECM communications found no record of theirs). Whether a reminder moved.
     */
    const report = (sid: string, outcome: DeliveryReport) =>
      Effect.gen(function*() {
        const at = yield* now
        yield* lockSid(sid)
        if (yield* apply(sid, outcome, at)) return true
        const known = yield* sql`SELECT 1 FROM appointment_reminders WHERE provider_message_id = ${sid}`
        // Already final (a repeat, or a late second report): nothing changes.
        if (known.length > 0) return false
        yield* sql`DELETE FROM reminder_delivery_reports
          WHERE received_at < ${new Date(at.getTime() - Duration.toMillis(earlyReportLifetime))}`
        // The first final report wins, as it does on the reminder itself.
        yield* sql`INSERT INTO reminder_delivery_reports (provider_message_id, delivery_status, status_reason, received_at)
          VALUES (${sid}, ${outcome.delivery}, ${outcome.reason}, ${at}) ON CONFLICT (provider_message_id) DO NOTHING`
        return false
      }).pipe(
        sql.withTransaction,
        Effect.orDie,
        Effect.withSpan("ReminderDeliveries.report", { attributes: { "reminder.delivery": outcome.delivery } })
      )

    /**
     * The sender records that the provider took the reminder (`sent`, delivery `sending`) and
     * applies a report that came before it. False when the claim is no longer the sender's.
     */
    const recordSent = (sent: SentReminder) =>
      Effect.gen(function*() {
        yield* lockSid(sent.providerMessageId)
        const recorded = yield* sql`UPDATE appointment_reminders SET status = 'sent', delivery_status = 'sending',
            status_reason = NULL, sent_at = ${sent.sentAt}, provider_message_id = ${sent.providerMessageId},
            claimed_at = NULL, claimed_by = NULL, updated_at = ${sent.sentAt}
          WHERE id = ${sent.id} AND delivery_status = 'sending' AND claimed_by = ${sent.claimedBy}
          RETURNING id`
        if (recorded.length === 0) return false
        const [early] = yield* sql<{ delivery_status: DeliveryReport["delivery"]; status_reason: string | null }>`
          DELETE FROM reminder_delivery_reports WHERE provider_message_id = ${sent.providerMessageId}
          RETURNING delivery_status, status_reason`
        if (early !== undefined) {
          yield* apply(sent.providerMessageId, { delivery: early.delivery_status, reason: early.status_reason }, yield* now)
        }
        return true
      }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("ReminderDeliveries.recordSent", { attributes: { "reminder.id": sent.id } }))

    return { report, recordSent } as const
  })
}) {}
