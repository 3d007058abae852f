/**
 * Outbound ECM communications (ECM §4.3): an SMS or a call to a patient through `Telephony`.
 *
 * Never lose a message that was sent (docs/communications.md):
 * 1. the record is written first (status queued, no SID) and committed;
 * 2. the provider is called, with our record's id in the status-callback URL;
 * 3. one transaction stores the SID and status and creates the activity and its event.
 * A provider refusal marks the record failed (422, no activity). A crash or database failure
 * between 2 and 3 leaves the record without SID or activity; the provider's first status callback
 * (which names our id and its SID) completes step 3, and `telephony_sid IS NULL` finds the rest.
 */
import { Clock, Effect, Option } from "effect"
import { CallResponse, SmsResponse } from "../../Api/Ecm/Communications.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { smsMoves, smsSegments, smsSucceeded, callMoves, callSucceeded } from "../../Domain/Ecm/Communication.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Telephony } from "../Telephony.js"
import { makeTransaction } from "../Repository.js"
import {
  type CallRow,
  callRecordOf,
  communicationActivityOf,
  CommunicationsRepo,
  type SmsRow,
  smsRecordOf
} from "./CommunicationsRepo.js"

/** Sender used when no Twilio number is configured (the outbox's fictional number). */
const fallbackFromNumber = "+15550000000"

export const webhookPaths = {
  sms: "/v1/clinic/webhooks/telephony/sms",
  voice: "/v1/clinic/webhooks/telephony/voice",
  smsStatus: "/v1/clinic/webhooks/telephony/sms_status",
  voiceStatus: "/v1/clinic/webhooks/telephony/voice_status",
  outboundCall: "/v1/clinic/webhooks/telephony/outbound_call",
  recording: "/v1/clinic/webhooks/telephony/recording"
} as const

export const optedOutMessage = "Patient has opted out of SMS (replied STOP); they must text START to receive messages again"

export class Communications extends Effect.Service<Communications>()("app/EcmCommunications", {
  effect: Effect.gen(function*() {
    const transaction = yield* makeTransaction
    const repo = yield* CommunicationsRepo
    const telephony = yield* Telephony
    const audit = yield* AuditLog
    const config = yield* AppConfig

    const base = config.publicBaseUrl.replace(/\/+$/, "")
    const fromNumber = Option.match(config.twilio, { onNone: () => fallbackFromNumber, onSome: (t) => t.fromNumber })
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const destination = (input: string) =>
      Option.match(normalizePhone(input), {
        onNone: () => Effect.fail(ecmInvalid(["Phone number is invalid"])),
        onSome: Effect.succeed
      })

    const requirePatient = (patientId: number) =>
      Effect.flatMap(repo.patientPhone(patientId), (found) => (found === undefined ? Effect.fail(ecmNotFound("Patient")) : Effect.succeed(found)))

    /**
     * Step 3 for a message (or its reconciliation by a status callback): the SID once, the
     * status when it moves forwards, the activity and event once. Safe to run twice.
     */
    const completeSms = (smsId: number, provider: { sid: string; status: string }) =>
      Effect.gen(function*() {
        const at = yield* now
        const row = yield* repo.lockSms(smsId, provider.sid)
        if (row === undefined) return undefined
        const moves = smsMoves(row.status, provider.status as SmsRow["status"])
        yield* repo.setProviderState("sms_messages", row.id, { sid: provider.sid, ...(moves ? { status: provider.status } : {}) }, at)
        const status = moves ? provider.status as SmsRow["status"] : row.status
        const activity = row.activity_id !== null
          ? yield* repo.findActivity(row.activity_id)
          : row.patient_id === null || row.sent_by_id === null
          ? undefined
          : yield* Effect.tap(
            repo.recordActivity({
              patient_id: row.patient_id,
              activity_type: "sms",
              status: smsSucceeded(status) ? "complete" : "created",
              subject: null,
              message: null,
              body: row.body,
              occurred_at: row.created_at,
              performed_by_id: row.sent_by_id,
              assigned_to_id: row.sent_by_id,
              text_message_id: row.id,
              voice_call_id: null
            }, at),
            (created) =>
              Effect.zipRight(
                repo.linkActivity("sms_messages", row.id, created.id),
                audit.record({ actorId: row.sent_by_id, action: "ecm_sms.send", targetType: "sms_message", targetId: row.id })
              )
          )
        return { sms: { ...row, telephony_sid: row.telephony_sid ?? provider.sid, status }, activity }
      }).pipe(transaction)

    const completeCall = (callId: number, provider: { sid: string; status: string }) =>
      Effect.gen(function*() {
        const at = yield* now
        const row = yield* repo.lockCall(callId, provider.sid)
        if (row === undefined) return undefined
        const moves = callMoves(row.status, provider.status as CallRow["status"])
        yield* repo.setProviderState("voice_calls", row.id, { sid: provider.sid, ...(moves ? { status: provider.status } : {}) }, at)
        const status = moves ? provider.status as CallRow["status"] : row.status
        const activity = row.activity_id !== null
          ? yield* repo.findActivity(row.activity_id)
          : row.patient_id === null || row.placed_by_id === null
          ? undefined
          : yield* Effect.tap(
            repo.recordActivity({
              patient_id: row.patient_id,
              activity_type: "call",
              status: callSucceeded(status) ? "complete" : "created",
              subject: null,
              message: null,
              body: null,
              occurred_at: row.created_at,
              performed_by_id: row.placed_by_id,
              assigned_to_id: row.placed_by_id,
              text_message_id: null,
              voice_call_id: row.id
            }, at),
            (created) =>
              Effect.zipRight(
                repo.linkActivity("voice_calls", row.id, created.id),
                audit.record({ actorId: row.placed_by_id, action: "ecm_call.place", targetType: "voice_call", targetId: row.id })
              )
          )
        return { call: { ...row, telephony_sid: row.telephony_sid ?? provider.sid, status }, activity }
      }).pipe(transaction)

    const sendSms = Effect.fn("Communications.sendSms")(function*(callerId: number, patientId: number, phoneNumber: string, body: string) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const to = yield* destination(phoneNumber)
      const patient = yield* requirePatient(patientId)
      if (yield* repo.isOptedOut(patient.phone === null ? [to] : [to, patient.phone])) {
        return yield* Effect.fail(ecmInvalid([optedOutMessage]))
      }
      const row = yield* repo.insertOutboundSms({
        patientId,
        to,
        from: fromNumber,
        body,
        segments: smsSegments(body),
        sentById: callerId,
        now: yield* now
      })
      yield* Effect.annotateCurrentSpan("sms.id", row.id)
      const receipt = yield* telephony.sendSms({ to, body, statusCallback: `${base}${webhookPaths.smsStatus}?sms_id=${row.id}` }).pipe(
        Effect.catchTag("TelephonyError", (error) =>
          Effect.zipRight(
            Effect.flatMap(now, (at) => repo.markFailed("sms_messages", row.id, error.reason, at)),
            Effect.fail(ecmInvalid([`Failed to send SMS: ${error.reason}`]))
          ))
      )
      const completed = yield* completeSms(row.id, { sid: receipt.sid, status: receipt.status })
      if (completed === undefined || completed.activity === undefined) return yield* Effect.dieMessage("the sent SMS lost its record")
      return SmsResponse.make({
        message: "SMS sent successfully",
        sms: smsRecordOf({ ...completed.sms, from_number: receipt.from }),
        activity: communicationActivityOf(completed.activity)
      }, true)
    })

    const placeCall = Effect.fn("Communications.placeCall")(function*(callerId: number, patientId: number, phoneNumber: string) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const to = yield* destination(phoneNumber)
      yield* requirePatient(patientId)
      const row = yield* repo.insertOutboundCall({ patientId, to, from: fromNumber, placedById: callerId, now: yield* now })
      yield* Effect.annotateCurrentSpan("call.id", row.id)
      const receipt = yield* telephony.placeCall({
        to,
        url: `${base}${webhookPaths.outboundCall}?call_id=${row.id}`,
        statusCallback: `${base}${webhookPaths.voiceStatus}?call_id=${row.id}`
      }).pipe(
        Effect.catchTag("TelephonyError", (error) =>
          Effect.zipRight(
            Effect.flatMap(now, (at) => repo.markFailed("voice_calls", row.id, error.reason, at)),
            Effect.fail(ecmInvalid([`Failed to place call: ${error.reason}`]))
          ))
      )
      const completed = yield* completeCall(row.id, { sid: receipt.sid, status: receipt.status })
      if (completed === undefined || completed.activity === undefined) return yield* Effect.dieMessage("the placed call lost its record")
      return CallResponse.make({
        message: "Call initiated successfully",
        call: callRecordOf({ ...completed.call, from_number: receipt.from }),
        activity: communicationActivityOf(completed.activity)
      }, true)
    })

    const unmatchedSms = Effect.fn("Communications.unmatchedSms")((page: PageRequest) =>
      Effect.map(repo.unmatchedSms(page), ({ pagination, rows }) => ({ sms: rows, pagination }))
    )

    return { sendSms, placeCall, completeSms, completeCall, unmatchedSms } as const
  }),
  dependencies: [CommunicationsRepo.Default]
}) {}
