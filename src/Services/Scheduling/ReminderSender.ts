/**
 * Sends one appointment reminder (the `reminders.send` job). Idempotent: the job first
 * claims the reminder with a compare-and-swap on its row (`scheduled` and `pending`), so a retry
 * or a second worker never sends it twice; only the claimer records the outcome.
 *
 * A claim left `sending` by a run that died (a crash, found by the job's next run or, when the
 * job has no run left, by the recovery sweep) has an unknown outcome: the provider may have
 * accepted the message before the crash, and none here takes an idempotency key. It is never sent
 * again: it is marked `failed` with `reminderReasons.interrupted`, so staff see it and can follow
 * up (docs/spec-decisions.md, reminders).
 */
import { Data, Duration, Effect, Option } from "effect"
import { normalizePhone } from "../../Domain/Phone.js"
import { remindableStatuses, type ReminderChannel, renderReminder } from "../../Domain/Scheduling/Reminders.js"
import { AppConfig } from "../AppConfig.js"
import type { JobContext } from "../Jobs.js"
import { Mailer } from "../Mailer.js"
import { Push } from "../Push.js"
import { Telephony } from "../Telephony.js"
import { webhookPaths } from "../Ecm/Communications.js"
import { now } from "../Time.js"
import { ReminderDeliveries } from "./ReminderDeliveries.js"
import { reminderReasons, RemindersRepo, type SendContext } from "./RemindersRepo.js"

export { failStrandedReminders } from "./RemindersRepo.js"

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

/** What a send came to: a provider's id, or why it cannot be sent at all (no retry). */
type Outcome =
  | { readonly _tag: "Sent"; readonly providerMessageId: string }
  | { readonly _tag: "Impossible"; readonly status: "failed" | "cancelled"; readonly delivery: "failed" | "unsubscribed" | "pending"; readonly reason: string }
  | { readonly _tag: "ProviderFailed"; readonly reason: string }

const impossible = (reason: string, status: "failed" | "cancelled" = "failed", delivery: "failed" | "unsubscribed" | "pending" = "failed"): Outcome =>
  ({ _tag: "Impossible", status, delivery, reason })

/** Channels whose provider reports delivery later (the SMS and voice status webhooks: ReminderDeliveries). */
const reportedLater: ReadonlyArray<ReminderChannel> = ["sms", "voice"]

export class ReminderSender extends Effect.Service<ReminderSender>()("app/ReminderSender", {
  effect: Effect.gen(function*() {
    const repo = yield* RemindersRepo
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
      repo.claim(id, job.id, at, new Date(at.getTime() + Duration.toMillis(dueTolerance)))

    /**
     * A claim an earlier run of this job left (it died mid-send), or anyone's claim past
     * `claimTimeout`: its outcome is unknown, so it is failed rather than sent again. Whether one was.
     */
    const settleInterrupted = (id: number, job: JobContext, at: Date) =>
      repo.settleInterrupted(id, job.id, new Date(at.getTime() - Duration.toMillis(claimTimeout)))

    const viaProvider = <E extends { readonly reason: string }>(call: Effect.Effect<string, E>): Effect.Effect<Outcome> =>
      call.pipe(
        Effect.timeoutFail({ duration: sendTimeout, onTimeout: () => ({ reason: "provider did not answer in time" }) }),
        Effect.map((providerMessageId): Outcome => ({ _tag: "Sent", providerMessageId })),
        Effect.catchAll((error) => Effect.succeed<Outcome>({ _tag: "ProviderFailed", reason: error.reason.slice(0, 500) }))
      )

    const phoneOf = (context: SendContext) =>
      context.phone === null ? Option.none() : normalizePhone(context.phone)

    const deliver = (id: number, context: SendContext): Effect.Effect<Outcome> =>
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
            const devices = context.user_id === null ? [] : yield* repo.devicesOf(context.user_id)
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
                if (result.left.unregistered) yield* repo.forgetDevice(device.id)
              }
            }
            return sent === undefined ? { _tag: "ProviderFailed", reason: lastFailure } : { _tag: "Sent", providerMessageId: sent }
          }
        }
      })

    const send = Effect.fn("ReminderSender.send")(function*(id: number, job: JobContext) {
      yield* Effect.annotateCurrentSpan({ "reminder.id": id, "job.attempt": job.attempt })
      const at = yield* now
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
          const sentAt = yield* now
          if (reportedLater.includes(context.reminder_type)) {
            yield* deliveries.recordSent({ id, claimedBy: job.id, providerMessageId: outcome.providerMessageId, sentAt })
            return
          }
          yield* repo.finish(id, job.id, { status: "sent", delivery: "delivered", reason: null, sentAt, providerMessageId: outcome.providerMessageId })
          return
        }
        case "Impossible":
          yield* repo.finish(id, job.id, { status: outcome.status, delivery: outcome.delivery, reason: outcome.reason, sentAt: null, providerMessageId: null })
          return
        case "ProviderFailed":
          if (job.attempt < job.maxAttempts) {
            yield* repo.release(id, job.id, outcome.reason)
            return yield* new ReminderSendFailed({ reminderId: id, attempt: job.attempt })
          }
          yield* repo.finish(id, job.id, { status: "failed", delivery: "failed", reason: outcome.reason, sentAt: null, providerMessageId: null })
      }
    })

    return { send } as const
  }),
  dependencies: [ReminderDeliveries.Default, RemindersRepo.Default]
}) {}
