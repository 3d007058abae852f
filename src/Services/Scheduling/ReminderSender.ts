/**
 * Sends one appointment reminder (the `reminders.send` job, issue 17). Idempotent: the job first
 * claims the reminder with a compare-and-swap on its row (`scheduled` and `pending`), so a retry
 * or a second worker never sends it twice; only the claimer records the outcome.
 *
 * A claim left `sending` by a run that died (a crash, found by the job's next run or, when the
 * job has no run left, by the recovery sweep) has an unknown outcome: the provider may have
 * accepted the message before the crash, and none here takes an idempotency key. It is never sent
 * again: it is marked `failed` with `reminderReasons.interrupted`, so staff see it and can follow
 * up (docs/spec-decisions.md, reminders).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Data, Duration, Effect, Option } from "effect"
import { normalizePhone } from "../../Domain/Phone.js"
import { remindableStatuses, type ReminderChannel, renderReminder } from "../../Domain/Scheduling/Reminders.js"
import { AppConfig } from "../AppConfig.js"
import type { JobContext } from "../Jobs.js"
import { Mailer } from "../Mailer.js"
import { Push } from "../Push.js"
import { Telephony } from "../Telephony.js"
import { staleCutoff } from "../HeartbeatsRepo.js"
import { webhookPaths } from "../Ecm/Communications.js"
import { ReminderDeliveries } from "./ReminderDeliveries.js"
import { reminderJobKeyPrefix, reminderReasons } from "./RemindersRepo.js"

/** A claim older than this is an interrupted send whichever job finds it: far longer than one send may take. */
export const claimTimeout = Duration.minutes(10)
/** One provider call; a slower one counts as failed (and is retried). */
const sendTimeout = Duration.seconds(30)
/** The queue's clock (PostgreSQL) and ours may differ a little: a job this early is still due. */
const dueTolerance = Duration.minutes(1)

/** A provider refused or timed out; the job is retried (ids only: the reason is on the row). */
export class ReminderSendFailed extends Data.TaggedError("ReminderSendFailed")<{
  readonly reminderId: number
  readonly attempt: number
}> {}

interface SendContext {
  readonly reminder_type: ReminderChannel
  readonly message: string | null
  readonly language: string
  readonly appointment_id: number
  readonly scheduled_at: Date
  readonly appointment_status: string
  readonly provider_name: string
  readonly phone: string | null
  readonly email: string | null
  readonly sms_opted_out: boolean
  readonly user_id: number | null
}

/** What a send came to: a provider's id, or why it cannot be sent at all (no retry). */
type Outcome =
  | { readonly _tag: "Sent"; readonly providerMessageId: string }
  | { readonly _tag: "Impossible"; readonly status: "failed" | "cancelled"; readonly delivery: "failed" | "unsubscribed" | "pending"; readonly reason: string }
  | { readonly _tag: "ProviderFailed"; readonly reason: string }

const impossible = (reason: string, status: "failed" | "cancelled" = "failed", delivery: "failed" | "unsubscribed" | "pending" = "failed"): Outcome =>
  ({ _tag: "Impossible", status, delivery, reason })

/** Channels whose provider reports delivery later (the SMS and voice status webhooks: ReminderDeliveries). */
const reportedLater: ReadonlyArray<ReminderChannel> = ["sms", "voice"]

/**
 * Fails reminders left `sending` whose job can no longer run (out of runs after crashes, or gone)
 * and claimed longer than the stale time ago (../Recovery.ts); how many. Jobs with runs left
 * settle their own reminder on their next run.
 */
export const failStrandedReminders = (staleAfterSeconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: number }>`UPDATE appointment_reminders r SET status = 'failed', delivery_status = 'failed',
        status_reason = ${reminderReasons.interrupted}, claimed_at = NULL, claimed_by = NULL, updated_at = now()
      WHERE r.status = 'scheduled' AND r.delivery_status = 'sending' AND r.claimed_at < ${staleCutoff(sql, staleAfterSeconds)}
        AND NOT EXISTS (SELECT 1 FROM graphile_worker.jobs j
          WHERE j.key = ${reminderJobKeyPrefix} || r.id AND (j.locked_at IS NOT NULL OR j.attempts < j.max_attempts))
      RETURNING r.id`
  ).pipe(Effect.map((rows) => rows.length), Effect.orDie)

export class ReminderSender extends Effect.Service<ReminderSender>()("app/ReminderSender", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const telephony = yield* Telephony
    const mailer = yield* Mailer
    const push = yield* Push
    const config = yield* AppConfig
    const deliveries = yield* ReminderDeliveries
    const timeZone = config.clinicTimeZone
    /**
     * Twilio reports delivery to the telephony status webhooks; with no record id in the URL
     * (those are the ECM communications'), they find the reminder by the message or call SID.
     */
    const base = config.publicBaseUrl.replace(/\/+$/, "")
    const callbacks = { sms: `${base}${webhookPaths.smsStatus}`, voice: `${base}${webhookPaths.voiceStatus}` } as const

    /**
     * The claim and everything the send needs, in one statement (a job is a handful of round trips
     * at most: 10,000 reminders due at once are sent within a minute by one instance). Nothing when
     * the reminder is not claimable: already sent or cancelled, moved later, or claimed.
     */
    const claim = (id: number, job: JobContext, at: Date) =>
      sql<SendContext>`WITH claimed AS (
          UPDATE appointment_reminders SET delivery_status = 'sending', claimed_at = ${at},
            claimed_by = ${job.id}, attempts = attempts + 1, updated_at = now()
          WHERE id = ${id} AND status = 'scheduled'
            AND send_at <= ${new Date(at.getTime() + Duration.toMillis(dueTolerance))}
            AND delivery_status = 'pending'
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
        LEFT JOIN users u ON u.id = pa.user_id AND u.deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]))

    /** Only the claim's holder records the outcome (`claimed_by`), and only once. */
    const finish = (id: number, job: JobContext, set: {
      readonly status: string
      readonly delivery: string
      readonly reason: string | null
      readonly sentAt: Date | null
      readonly providerMessageId: string | null
    }) =>
      sql`UPDATE appointment_reminders SET status = ${set.status}, delivery_status = ${set.delivery},
          status_reason = ${set.reason}, sent_at = ${set.sentAt}, provider_message_id = ${set.providerMessageId},
          claimed_at = NULL, claimed_by = NULL, updated_at = now()
        WHERE id = ${id} AND delivery_status = 'sending' AND claimed_by = ${job.id}`

    /**
     * A claim an earlier run of this job left (it died mid-send), or anyone's claim past
     * `claimTimeout`: its outcome is unknown, so it is failed rather than sent again. Whether one was.
     */
    const settleInterrupted = (id: number, job: JobContext, at: Date) =>
      sql<{ id: number }>`UPDATE appointment_reminders SET status = 'failed', delivery_status = 'failed',
          status_reason = ${reminderReasons.interrupted}, claimed_at = NULL, claimed_by = NULL, updated_at = now()
        WHERE id = ${id} AND status = 'scheduled' AND delivery_status = 'sending'
          AND (claimed_by = ${job.id} OR claimed_at < ${new Date(at.getTime() - Duration.toMillis(claimTimeout))})
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

    /** Gives the claim back so the retry (or another worker) can take it at once. */
    const release = (id: number, job: JobContext, reason: string) =>
      sql`UPDATE appointment_reminders SET delivery_status = 'pending', status_reason = ${reason},
          claimed_at = NULL, claimed_by = NULL, updated_at = now()
        WHERE id = ${id} AND delivery_status = 'sending' AND claimed_by = ${job.id}`

    const viaProvider = <E extends { readonly reason: string }>(call: Effect.Effect<string, E>): Effect.Effect<Outcome> =>
      call.pipe(
        Effect.timeoutFail({ duration: sendTimeout, onTimeout: () => ({ reason: "provider did not answer in time" }) }),
        Effect.map((providerMessageId): Outcome => ({ _tag: "Sent", providerMessageId })),
        Effect.catchAll((error) => Effect.succeed<Outcome>({ _tag: "ProviderFailed", reason: error.reason.slice(0, 500) }))
      )

    const phoneOf = (context: SendContext) =>
      context.phone === null ? Option.none() : normalizePhone(context.phone)

    const deliver = (id: number, context: SendContext): Effect.Effect<Outcome, SqlError> =>
      Effect.gen(function*() {
        const text = renderReminder({
          scheduledAt: context.scheduled_at,
          timeZone,
          providerName: context.provider_name,
          message: context.message,
          language: context.language
        })
        switch (context.reminder_type) {
          case "sms": {
            if (context.sms_opted_out) return impossible(reminderReasons.optedOut, "cancelled", "unsubscribed")
            if (context.phone === null) return impossible(reminderReasons.noPhone)
            const to = phoneOf(context)
            if (Option.isNone(to)) return impossible(reminderReasons.invalidPhone)
            return yield* viaProvider(Effect.map(telephony.sendSms({ to: to.value, body: text.sms, statusCallback: callbacks.sms }), (r) => r.sid))
          }
          case "voice": {
            if (context.phone === null) return impossible(reminderReasons.noPhone)
            const to = phoneOf(context)
            if (Option.isNone(to)) return impossible(reminderReasons.invalidPhone)
            return yield* viaProvider(Effect.map(telephony.placeCall({ to: to.value, say: text.voice, statusCallback: callbacks.voice }), (r) => r.sid))
          }
          case "email": {
            if (context.email === null) return impossible(reminderReasons.noEmail)
            return yield* viaProvider(Effect.map(
              mailer.send({ to: [context.email], subject: text.emailSubject, text: text.emailText, html: text.emailHtml }),
              (r) => r.messageId
            ))
          }
          case "push": {
            const devices = context.user_id === null ? [] : yield* sql<{ id: number; token: string }>`
              SELECT id, token FROM user_devices WHERE user_id = ${context.user_id} ORDER BY id LIMIT 20`
            if (devices.length === 0) return impossible(reminderReasons.noDevice)
            const data = { appointment_id: String(context.appointment_id), appointment_reminder_id: String(id) }
            let sent: string | undefined
            let lastFailure = "push failed"
            for (const device of devices) {
              const result = yield* Effect.either(push.send({ token: device.token, title: text.pushTitle, body: text.pushBody, data }).pipe(
                Effect.timeoutFail({ duration: sendTimeout, onTimeout: () => ({ reason: "provider did not answer in time", unregistered: false }) })
              ))
              if (result._tag === "Right") {
                sent ??= result.right.messageId
              } else {
                lastFailure = result.left.reason.slice(0, 500)
                // A dead token is never coming back: forget the device (no more pushes to it).
                if (result.left.unregistered) yield* sql`DELETE FROM user_devices WHERE id = ${device.id}`
              }
            }
            return sent === undefined ? { _tag: "ProviderFailed", reason: lastFailure } : { _tag: "Sent", providerMessageId: sent }
          }
        }
      })

    const send = (id: number, job: JobContext) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        const context = yield* claim(id, job, at)
        if (context === undefined) {
          if (yield* settleInterrupted(id, job, at)) {
            yield* Effect.logWarning("reminder send was interrupted earlier: marked failed, not sent again")
          } else {
            yield* Effect.logDebug("reminder not claimable: already sent, cancelled, moved or being sent")
          }
          return
        }
        yield* Effect.annotateCurrentSpan({ "appointment.id": context.appointment_id, "reminder.type": context.reminder_type })
        const ended = !remindableStatuses.includes(context.appointment_status)
        // Belt and braces: whatever scheduled it, a reminder is never sent once the appointment began.
        const passed = context.scheduled_at.getTime() <= at.getTime()
        const outcome = ended
          ? impossible(reminderReasons.appointmentEnded(context.appointment_status), "cancelled", "pending")
          : passed
          ? impossible(reminderReasons.appointmentPassed, "cancelled", "pending")
          : yield* deliver(id, context)
        switch (outcome._tag) {
          case "Sent": {
            const sentAt = new Date(yield* Clock.currentTimeMillis)
            if (reportedLater.includes(context.reminder_type)) {
              yield* deliveries.recordSent({ id, claimedBy: job.id, providerMessageId: outcome.providerMessageId, sentAt })
              return
            }
            yield* finish(id, job, { status: "sent", delivery: "delivered", reason: null, sentAt, providerMessageId: outcome.providerMessageId })
            return
          }
          case "Impossible":
            yield* finish(id, job, { status: outcome.status, delivery: outcome.delivery, reason: outcome.reason, sentAt: null, providerMessageId: null })
            return
          case "ProviderFailed":
            if (job.attempt < job.maxAttempts) {
              yield* release(id, job, outcome.reason)
              return yield* new ReminderSendFailed({ reminderId: id, attempt: job.attempt })
            }
            yield* finish(id, job, { status: "failed", delivery: "failed", reason: outcome.reason, sentAt: null, providerMessageId: null })
        }
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("ReminderSender.send", { attributes: { "reminder.id": id, "job.attempt": job.attempt } })
      )

    return { send } as const
  }),
  dependencies: [ReminderDeliveries.Default]
}) {}
