/**
 * What the telephony provider tells us (ECM §4.3 webhooks): inbound SMS and calls, delivery and
 * call statuses, voicemail recordings and transcriptions. Each request is one transaction and is
 * idempotent — Twilio retries, and may deliver the same callback twice at once:
 * - inbound records are inserted `ON CONFLICT (telephony_sid) DO NOTHING`: the second delivery
 *   finds nothing to insert and writes nothing else;
 * - status callbacks lock the record and move it only forwards (src/Domain/Ecm/Communication.ts),
 *   so a repeat or a late `sent` after `delivered` changes nothing.
 * Status callbacks of a SID that is no communication of ours go to the appointment reminders
 * (ReminderDeliveries): reminder SMS and calls are sent with these same webhooks as callbacks.
 * The signature was checked before any of this runs (TwilioSignature middleware).
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { InboundSmsForm, InboundVoiceForm, RecordingForm, SmsStatusForm, VoiceStatusForm } from "../../Api/Ecm/Communications.js"
import {
  callCalledOff,
  callFailed,
  callMinutes,
  callMoves,
  CallStatus,
  callSucceeded,
  optChangeOf,
  smsFailed,
  smsMoves,
  smsSegments,
  SmsStatus,
  smsSucceeded
} from "../../Domain/Ecm/Communication.js"
import {
  emptyResponse,
  forwardResponse,
  messageResponse,
  sayResponse,
  voicemailResponse
} from "../../Domain/Ecm/Twiml.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { callDeliveryReport, smsDeliveryReport } from "../../Domain/Scheduling/Reminders.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Communications, webhookPaths } from "./Communications.js"
import { CommunicationsRepo } from "./CommunicationsRepo.js"
import { ReminderDeliveries } from "../Scheduling/ReminderDeliveries.js"
import { annotatedFromResult } from "../Spans.js"
import { makeTransaction } from "../Repository.js"

type Form<S extends Schema.Schema.Any> = Schema.Schema.Type<S>

const isSmsStatus = Schema.is(SmsStatus)
const isCallStatus = Schema.is(CallStatus)

/** E.164 when it parses (a short code or alphanumeric sender stays as sent). */
const phoneOf = (raw: string) => Option.getOrElse(normalizePhone(raw), () => raw.trim())

export const voicemailGreeting = "You have reached your care team. Please leave a message after the tone."
export const forwardGreeting = "Connecting you to your care manager."

export class TelephonyWebhooks extends Effect.Service<TelephonyWebhooks>()("app/EcmTelephonyWebhooks", {
  effect: Effect.gen(function*() {
    const transaction = yield* makeTransaction
    const repo = yield* CommunicationsRepo
    const communications = yield* Communications
    const audit = yield* AuditLog
    const config = yield* AppConfig
    const reminders = yield* ReminderDeliveries

    const base = config.publicBaseUrl.replace(/\/+$/, "")
    const autoReply = Option.flatMap(config.twilio, (t) => t.smsAutoReply)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Who an inbound communication is assigned to: the lead care manager, else the system user (unassigned). */
    const assigneeOf = (patientId: number) =>
      Effect.gen(function*() {
        const lcm = yield* repo.leadCareManagerOf(patientId)
        return { id: lcm?.id ?? (yield* repo.systemUserId), phone: lcm?.phone ?? null }
      })

    const inboundSms = Effect.fn("TelephonyWebhooks.inboundSms")(function*(form: Form<typeof InboundSmsForm>) {
      const at = yield* now
      const from = phoneOf(form.From)
      const text = form.Body ?? ""
      const change = optChangeOf(text)
      const mediaUrls = Array.from({ length: 10 }, (_, i) => form[`MediaUrl${i}` as keyof typeof form] as string | undefined)
        .filter((url): url is string => url !== undefined && url !== "")
      const patientId = yield* repo.patientByPhone(from)
      const spanAttributes: Record<string, unknown> = {}
      const row = yield* repo.insertInboundSms({
        sid: form.MessageSid,
        patientId: patientId ?? null,
        to: phoneOf(form.To),
        from,
        body: text,
        mediaUrls,
        segments: smsSegments(text),
        now: at
      })
      if (row !== undefined) {
        Object.assign(spanAttributes, { "sms.id": row.id, "patient.matched": patientId !== undefined })
        if (change === "opt_out") yield* repo.optOut(from, row.id, at)
        if (change === "opt_in") yield* repo.optIn(from)
        if (patientId !== undefined) {
          const system = yield* repo.systemUserId
          const assignee = yield* assigneeOf(patientId)
          const body = [text, ...mediaUrls.map((url) => `Media: ${url}`)].filter((line) => line !== "").join("\n")
          const activity = yield* repo.recordActivity({
            patient_id: patientId,
            activity_type: "sms",
            status: "created",
            subject: change === "opt_out"
              ? "Inbound SMS: opted out of SMS"
              : change === "opt_in"
              ? "Inbound SMS: opted back in to SMS"
              : "Inbound SMS",
            message: null,
            body: body === "" ? "(empty message)" : body,
            occurred_at: at,
            performed_by_id: system,
            assigned_to_id: assignee.id,
            text_message_id: row.id,
            voice_call_id: null
          }, at)
          yield* repo.linkActivity("sms_messages", row.id, activity.id)
          yield* audit.record({ actorId: system, action: "ecm_sms.receive", targetType: "sms_message", targetId: row.id })
        }
      }
      // Twilio answers STOP/START itself; otherwise the configured auto-reply, if any.
      const value = change === null && Option.isSome(autoReply) ? messageResponse(autoReply.value) : emptyResponse()
      return { value, spanAttributes }
    }, transaction, annotatedFromResult)

    const inboundVoice = Effect.fn("TelephonyWebhooks.inboundVoice")(function*(form: Form<typeof InboundVoiceForm>) {
      const at = yield* now
      const from = phoneOf(form.From)
      const patientId = yield* repo.patientByPhone(from)
      const assignee = patientId === undefined ? undefined : yield* assigneeOf(patientId)
      const forwardTo = assignee?.phone === null || assignee === undefined ? null : Option.getOrNull(normalizePhone(assignee.phone))
      const status = form.CallStatus !== undefined && isCallStatus(form.CallStatus) ? form.CallStatus : "ringing"
      const row = yield* repo.insertInboundCall({
        sid: form.CallSid,
        patientId: patientId ?? null,
        to: phoneOf(form.To),
        from,
        status,
        forwardedTo: forwardTo,
        now: at
      })
      // A repeated delivery answers what the first one did.
      const forwardedTo = row === undefined ? (yield* repo.callBySid(form.CallSid))?.forwarded_to ?? null : forwardTo
      const spanAttributes: Record<string, unknown> = {}
      if (row !== undefined && patientId !== undefined && assignee !== undefined) {
        const system = yield* repo.systemUserId
        Object.assign(spanAttributes, { "call.id": row.id })
        const activity = yield* repo.recordActivity({
          patient_id: patientId,
          activity_type: "call",
          status: "created",
          subject: "Inbound call",
          message: null,
          body: forwardTo === null ? "Voicemail" : "Forwarded to the lead care manager",
          occurred_at: at,
          performed_by_id: system,
          assigned_to_id: assignee.id,
          text_message_id: null,
          voice_call_id: row.id
        }, at)
        yield* repo.linkActivity("voice_calls", row.id, activity.id)
        yield* audit.record({ actorId: system, action: "ecm_call.receive", targetType: "voice_call", targetId: row.id })
      }
      const value = forwardedTo === null
        ? voicemailResponse(voicemailGreeting, `${base}${webhookPaths.recording}`)
        : forwardResponse(forwardGreeting, forwardedTo)
      return { value, spanAttributes }
    }, transaction, annotatedFromResult)

    /** A follow-up task for the activity's assignee to verify the patient's contact details. */
    const openFollowUp = (
      activity: { id: number; patient_id: number; assigned_to_id: number },
      record: { sms: number } | { call: number },
      what: string,
      at: Date
    ) =>
      Effect.gen(function*() {
        const system = yield* repo.systemUserId
        const task = yield* repo.recordActivity({
          patient_id: activity.patient_id,
          activity_type: "task",
          status: "created",
          subject: `Follow up: ${what}`,
          message: `${what} (activity ${activity.id}). Verify the patient's contact details and try again.`,
          body: null,
          occurred_at: at,
          performed_by_id: system,
          assigned_to_id: activity.assigned_to_id,
          text_message_id: null,
          voice_call_id: null
        }, at)
        // The record moved to its failed status under a row lock, once; the key is the backstop.
        if (!(yield* repo.claimFollowUp(task.id, record))) return yield* Effect.dieMessage("a second follow-up for one record")
        yield* audit.record({ actorId: system, action: "ecm_activity.create", targetType: "ecm_activity", targetId: task.id })
      })

    const smsStatus = Effect.fn("TelephonyWebhooks.smsStatus")(function*(smsId: number | undefined, form: Form<typeof SmsStatusForm>) {
      const reported = form.MessageStatus ?? form.SmsStatus
      // A status this service does not know (Twilio adds some over time) is acknowledged and ignored.
      if (reported === undefined || !isSmsStatus(reported)) return emptyResponse()
      // An outbound message whose step 3 never ran is completed first (Communications: reconciliation).
      const known = smsId === undefined ? yield* repo.smsBySid(form.MessageSid) : { id: smsId }
      if (known === undefined) {
        // Not a communication of ours: an appointment reminder's SMS, if the SID is one.
        const report = smsDeliveryReport(reported, form.ErrorCode)
        if (report !== undefined) yield* reminders.report(form.MessageSid, report)
        return emptyResponse()
      }
      const completed = yield* communications.completeSms(known.id, { sid: form.MessageSid, status: "queued" })
      if (completed === undefined) return emptyResponse()
      yield* Effect.gen(function*() {
        const at = yield* now
        const row = yield* repo.lockSms(completed.sms.id, form.MessageSid)
        if (row === undefined || !smsMoves(row.status, reported)) return
        yield* repo.setProviderState("sms_messages", row.id, { status: reported, errorCode: form.ErrorCode, errorMessage: form.ErrorMessage }, at)
        if (row.activity_id === null) return
        const activity = yield* repo.findActivity(row.activity_id)
        if (activity === undefined) return
        if (smsSucceeded(reported) && activity.status === "created") {
          yield* repo.updateActivity(activity.id, { status: "complete" }, at)
        }
        if (smsFailed(reported) && row.direction === "outbound") {
          const reason = form.ErrorMessage ?? (form.ErrorCode === undefined ? reported : `error ${form.ErrorCode}`)
          yield* openFollowUp(activity, { sms: row.id }, `SMS to ${row.to_number} was not delivered (${reason})`, at)
        }
      }).pipe(transaction)
      return emptyResponse()
    })

    const voiceStatus = Effect.fn("TelephonyWebhooks.voiceStatus")(function*(callId: number | undefined, form: Form<typeof VoiceStatusForm>) {
      const reported = form.CallStatus
      if (!isCallStatus(reported)) return emptyResponse()
      const known = callId === undefined ? yield* repo.callBySid(form.CallSid) : { id: callId }
      if (known === undefined) {
        // Not a communication of ours: an appointment reminder's call, if the SID is one.
        const report = callDeliveryReport(reported, form.ErrorCode)
        if (report !== undefined) yield* reminders.report(form.CallSid, report)
        return emptyResponse()
      }
      const completed = yield* communications.completeCall(known.id, { sid: form.CallSid, status: "queued" })
      if (completed === undefined) return emptyResponse()
      const seconds = form.CallDuration === undefined ? Number.NaN : Number(form.CallDuration)
      yield* Effect.gen(function*() {
        const at = yield* now
        const row = yield* repo.lockCall(completed.call.id, form.CallSid)
        if (row === undefined || !callMoves(row.status, reported)) return
        yield* repo.setProviderState("voice_calls", row.id, { status: reported, errorCode: form.ErrorCode, errorMessage: form.ErrorMessage }, at)
        const validSeconds = Number.isInteger(seconds) && seconds >= 0 && seconds <= 86_400
        if (validSeconds) yield* repo.setCallDetails(row.id, { durationSeconds: seconds }, at)
        if (row.activity_id === null) return
        const activity = yield* repo.findActivity(row.activity_id)
        if (activity === undefined) return
        if (callSucceeded(reported)) {
          yield* repo.updateActivity(activity.id, {
            ...(activity.status === "created" ? { status: "complete" as const } : {}),
            ...(validSeconds ? { duration: Math.min(callMinutes(seconds), 1440) } : {})
          }, at)
        }
        if (callCalledOff(reported) && activity.status === "created") {
          yield* repo.updateActivity(activity.id, { status: "cancelled" }, at)
        }
        if (callFailed(reported) && row.direction === "outbound") {
          yield* openFollowUp(activity, { call: row.id }, `Call to ${row.to_number} was not answered (${reported})`, at)
        }
      }).pipe(transaction)
      return emptyResponse()
    })

    /** The TwiML of a call we placed, when the patient answers: who calls, then the caller's phone. */
    const outboundCall = Effect.fn("TelephonyWebhooks.outboundCall")(function*(callId: number | undefined, form: Form<typeof InboundVoiceForm>) {
      const row = callId === undefined ? yield* repo.callBySid(form.CallSid) : (yield* repo.lockCall(callId, form.CallSid))
      const caller = row?.placed_by_id == null ? undefined : yield* repo.userPhone(row.placed_by_id)
      const phone = caller?.phone == null ? undefined : Option.getOrUndefined(normalizePhone(caller.phone))
      if (caller !== undefined && phone !== undefined) {
        return forwardResponse(`Hello, this is ${caller.first_name} from your care team. Connecting you now.`, phone)
      }
      return sayResponse("Hello, this is your care team. We are sorry we missed you. Please call us back at this number.")
    }, Effect.orDie)

    /** Voicemail recording (the `<Record>` action) and its transcription. */
    const recording = Effect.fn("TelephonyWebhooks.recording")(function*(form: Form<typeof RecordingForm>) {
      const at = yield* now
      const row = yield* repo.lockCall(undefined, form.CallSid)
      const transcript = form.TranscriptionStatus === undefined || form.TranscriptionStatus === "completed"
        ? form.TranscriptionText
        : undefined
      if (row !== undefined) {
        yield* repo.setCallDetails(row.id, {
          ...(form.RecordingUrl === undefined ? {} : { recordingUrl: form.RecordingUrl }),
          ...(transcript === undefined ? {} : { transcript })
        }, at)
        if (transcript !== undefined && row.activity_id !== null) yield* repo.updateActivity(row.activity_id, { transcript }, at)
      }
      // The `<Record>` action continues the call; a transcription callback only needs an acknowledgement.
      return form.TranscriptionText === undefined && form.TranscriptionStatus === undefined
        ? sayResponse("Thank you for your message. Goodbye.")
        : emptyResponse()
    }, transaction)

    return { inboundSms, inboundVoice, smsStatus, voiceStatus, outboundCall, recording } as const
  }),
  dependencies: [CommunicationsRepo.Default, ReminderDeliveries.Default]
}) {}
