/**
 * ECM communications (ECM §2.9, §4.3): outbound SMS and calls through the telephony provider, the
 * admin list of inbound messages no patient matched, and the provider's webhooks (Twilio's
 * form-encoded requests, authenticated by `X-Twilio-Signature` only, answered with TwiML).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ActivityStatus, ActivityType } from "../../Domain/Ecm/Activity.js"
import { Direction, maxSmsLength } from "../../Domain/Ecm/Communication.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import {
  EcmForbidden, EcmNotFound, EcmPayloadTooLarge, EcmServiceUnavailable, EcmValidationFailed, reportAllErrors, withEcmGroupErrors
} from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedString, IdParam, RequiredString } from "../Schemas.js"
import { EcmAdminAuthentication, EcmStaffAuthentication } from "../Security.js"

export const phoneNumberMaxLength = 40

/** §2.9 sms record. `telephony_sid` is null only while a message is handed to the provider. */
export class SmsRecord extends Schema.Class<SmsRecord>("SmsRecord")({
  id: Schema.Int,
  telephony_sid: Schema.NullOr(Schema.String),
  to: Schema.String,
  from: Schema.String,
  body: Schema.String,
  status: Schema.String,
  direction: Direction,
  /** How many segments the provider bills (160 GSM-7 characters, 70 otherwise). */
  segments: Schema.Int,
  created_at: IsoTimestamp
}) {}

/** §2.9 call record. */
export class CallRecord extends Schema.Class<CallRecord>("CallRecord")({
  id: Schema.Int,
  telephony_sid: Schema.NullOr(Schema.String),
  to: Schema.String,
  from: Schema.String,
  status: Schema.String,
  direction: Direction,
  created_at: IsoTimestamp
}) {}

/** §4.3: the activity a communication created. */
export class CommunicationActivity extends Schema.Class<CommunicationActivity>("CommunicationActivity")({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  patient_id: Schema.Int,
  performed_by_id: Schema.NullOr(Schema.Int),
  assigned_to_id: Schema.Int
}) {}

export class SmsResponse extends Schema.Class<SmsResponse>("SmsResponse")({
  message: Schema.String,
  sms: SmsRecord,
  activity: CommunicationActivity
}) {}

export class CallResponse extends Schema.Class<CallResponse>("CallResponse")({
  message: Schema.String,
  call: CallRecord,
  activity: CommunicationActivity
}) {}

const PhoneNumber = RequiredString(phoneNumberMaxLength).annotations({
  description: "E.164 (`+15551234567`) recommended; national, dashed and parenthesised US forms are normalised"
})

export class SendSmsRequest extends Schema.Class<SendSmsRequest>("SendSmsRequest")({
  sms: Schema.Struct({
    phone_number: PhoneNumber,
    body: RequiredString(maxSmsLength).annotations({
      description: `At most ${maxSmsLength} characters; over 160 (70 with non-GSM characters) it is sent in several segments`
    })
  }).annotations(reportAllErrors)
}, requestBody({ sms: { phone_number: "+15551234567", body: "Hi, this is your care team. Can we talk tomorrow at 10?" } })) {}

export class PlaceCallRequest extends Schema.Class<PlaceCallRequest>("PlaceCallRequest")({
  call: Schema.Struct({ phone_number: PhoneNumber }).annotations(reportAllErrors)
}, requestBody({ call: { phone_number: "(555) 123-4567" } })) {}

const PatientPath = Schema.Struct({ patient_id: IdParam })

export class EcmCommunicationsApi extends HttpApiGroup.make("ecmCommunications")
  .add(
    HttpApiEndpoint.post("sendSms", "/clinic/ecm/communications/patients/:patient_id/sms")
      .setPath(PatientPath)
      .setPayload(SendSmsRequest)
      .addSuccess(SmsResponse, { status: 201 })
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Send an SMS to a patient",
        description: "Sends the message through the telephony provider and records it: the sms record, an sms " +
          "activity (status created, performed by and assigned to the caller, `text_message_id` set) and its event. " +
          "The number is normalised to E.164 (US default); an invalid one is 422 `Phone number is invalid`. A number " +
          "that answered STOP is 422 until it answers START. A provider refusal is 422 " +
          "`Failed to send SMS: <reason>`: the record stays, failed, with no activity. Delivery statuses arrive " +
          "through the sms_status webhook and complete the activity.",
        access: Access.staff,
        spec: "ECM §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.post("placeCall", "/clinic/ecm/communications/patients/:patient_id/call")
      .setPath(PatientPath)
      .setPayload(PlaceCallRequest)
      .addSuccess(CallResponse, { status: 201 })
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Call a patient",
        description: "Places a call through the telephony provider: when the patient answers, they hear who is " +
          "calling and are connected to the caller's phone (or hear a message asking them to call back when the " +
          "caller has no phone on file). Records the call, a call activity (status created, `voice_call_id` set) " +
          "and its event. A provider refusal is 422 `Failed to place call: <reason>`.",
        access: Access.staff,
        spec: "ECM §4.3"
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Communications",
    description: "Texts and calls to members through the telephony provider (Twilio), each recorded as an activity " +
      "and an event. Statuses and inbound messages arrive through the telephony webhooks."
  }))
{}

/** An inbound message from a number no patient has: kept for admins to route by hand. */
export class UnmatchedSms extends Schema.Class<UnmatchedSms>("UnmatchedSms")({
  id: Schema.Int,
  telephony_sid: Schema.NullOr(Schema.String),
  from: Schema.String,
  to: Schema.String,
  body: Schema.String,
  media_urls: Schema.Array(Schema.String),
  status: Schema.String,
  created_at: IsoTimestamp
}) {}

export class UnmatchedSmsList extends Schema.Class<UnmatchedSmsList>("UnmatchedSmsList")({
  sms: Schema.Array(UnmatchedSms),
  pagination: Pagination
}) {}

export const unmatchedPageSize = 25

export class EcmCommunicationsAdminApi extends HttpApiGroup.make("ecmCommunicationsAdmin")
  .add(
    HttpApiEndpoint.get("unmatchedSms", "/admin/clinic/ecm/communications/unmatched_sms")
      .setUrlParams(listQuery({ size: "per_page" }))
      .addSuccess(UnmatchedSmsList)
      .annotateContext(operationDocs({
        summary: "List inbound SMS from unknown numbers",
        description: "Inbound messages whose sender matched no patient's phone, newest first, 25 a page " +
          "(`per_page`). They are never dropped: an admin can see them and follow up.",
        access: Access.admin,
        spec: "ECM §4.3"
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Communications",
    description: "What the telephony webhooks received that matched no patient."
  }))
{}

/**
 * The provider's signature (`X-Twilio-Signature`) over the public URL and the posted parameters,
 * checked with TWILIO_AUTH_TOKEN; missing, wrong or uncheckable (no token configured): 403.
 */
export class TwilioSignature extends HttpApiMiddleware.Tag<TwilioSignature>()("app/TwilioSignature", {
  failure: EcmForbidden.schema
}) {}

/** TwiML, as Twilio expects it. */
export const Twiml = HttpApiSchema.Text({ contentType: "text/xml" }).annotations({
  identifier: "Twiml",
  description: "TwiML (`text/xml`): `<Response/>` or the instructions for the call or a reply"
})

/** A webhook's form: 1,600 characters of text, each up to 12 bytes percent-encoded, and Twilio's other fields. */
export const webhookBodyBytes = 64 * 1024

/** The extension the harness reads to sign requests (test/harness/README.md). */
export const webhookSignatureExtension = "x-webhook-signature"

/** A Twilio SID: two letters and 32 hex digits. */
const Sid = RequiredString(64)
const TwilioPhone = BoundedString(phoneNumberMaxLength)
const ErrorCode = BoundedString(16)
const ErrorMessage = BoundedString(1000)
const Url = BoundedString(2048)

/** Twilio's parameters are CamelCase and undeclared ones are ignored (Twilio adds fields). */

const mediaFields = Object.fromEntries(
  Array.from({ length: 10 }, (_, i) => [`MediaUrl${i}`, Schema.optional(Url)])
) as Record<`MediaUrl${0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}`, Schema.optional<typeof Url>>

export const InboundSmsForm = HttpApiSchema.withEncoding(Schema.Struct({
  MessageSid: Sid,
  AccountSid: Schema.optional(BoundedString(64)),
  From: TwilioPhone,
  To: TwilioPhone,
  Body: Schema.optional(BoundedString(maxSmsLength)),
  NumMedia: Schema.optional(BoundedString(4)),
  ...mediaFields
}).annotations({ ...reportAllErrors, identifier: "InboundSmsForm", examples: [{ MessageSid: "SM0123456789abcdef0123456789abcdef", AccountSid: "AC0123456789abcdef0123456789abcdef", From: "+14155550132", To: "+15550001111", Body: "Can you call me tomorrow?", NumMedia: "0" }] }), { kind: "UrlParams" })

export const InboundVoiceForm = HttpApiSchema.withEncoding(Schema.Struct({
  CallSid: Sid,
  AccountSid: Schema.optional(BoundedString(64)),
  From: TwilioPhone,
  To: TwilioPhone,
  CallStatus: Schema.optional(BoundedString(32))
}).annotations({ ...reportAllErrors, identifier: "InboundVoiceForm", examples: [{ CallSid: "CA0123456789abcdef0123456789abcdef", AccountSid: "AC0123456789abcdef0123456789abcdef", From: "+14155550132", To: "+15550001111", CallStatus: "ringing" }] }), { kind: "UrlParams" })

export const SmsStatusForm = HttpApiSchema.withEncoding(Schema.Struct({
  MessageSid: Sid,
  MessageStatus: Schema.optional(BoundedString(32)),
  SmsStatus: Schema.optional(BoundedString(32)),
  ErrorCode: Schema.optional(ErrorCode),
  ErrorMessage: Schema.optional(ErrorMessage)
}).annotations({ ...reportAllErrors, identifier: "SmsStatusForm", examples: [{ MessageSid: "SM0123456789abcdef0123456789abcdef", MessageStatus: "undelivered", ErrorCode: "30003", ErrorMessage: "Unreachable destination handset" }] }), { kind: "UrlParams" })

export const VoiceStatusForm = HttpApiSchema.withEncoding(Schema.Struct({
  CallSid: Sid,
  CallStatus: BoundedString(32),
  CallDuration: Schema.optional(BoundedString(10)),
  ErrorCode: Schema.optional(ErrorCode),
  ErrorMessage: Schema.optional(ErrorMessage)
}).annotations({ ...reportAllErrors, identifier: "VoiceStatusForm", examples: [{ CallSid: "CA0123456789abcdef0123456789abcdef", CallStatus: "completed", CallDuration: "75" }] }), { kind: "UrlParams" })

export const RecordingForm = HttpApiSchema.withEncoding(Schema.Struct({
  CallSid: Sid,
  RecordingUrl: Schema.optional(Url),
  RecordingDuration: Schema.optional(BoundedString(10)),
  TranscriptionText: Schema.optional(BoundedString(8000)),
  TranscriptionStatus: Schema.optional(BoundedString(32))
}).annotations({ ...reportAllErrors, identifier: "RecordingForm", examples: [{ CallSid: "CA0123456789abcdef0123456789abcdef", TranscriptionText: "Please call me back about my ride.", TranscriptionStatus: "completed" }] }), { kind: "UrlParams" })

/** Our record a status callback or outbound-call TwiML request is about (we put it in the URL). */
const SmsQuery = Schema.Struct({ sms_id: Schema.optional(IdParam) }).annotations(reportAllErrors)
const CallQuery = Schema.Struct({ call_id: Schema.optional(IdParam) }).annotations(reportAllErrors)

const hook = <Name extends string, Path extends HttpApiEndpoint.PathSegment>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path).addSuccess(Twiml)

const webhookDocs = (summary: string, description: string) =>
  operationDocs({
    summary,
    description,
    access: "The telephony provider: requests signed with `X-Twilio-Signature` (HMAC-SHA1 of PUBLIC_BASE_URL + " +
      "path + query and the posted parameters, keyed by TWILIO_AUTH_TOKEN). No `X-User-Token`.",
    spec: "ECM §4.3, §5.6",
    extensions: { [webhookSignatureExtension]: "twilio" }
  })

export class TelephonyWebhooksApi extends HttpApiGroup.make("telephonyWebhooks")
  .add(
    hook("inboundSms", "/clinic/webhooks/telephony/sms")
      .setPayload(InboundSmsForm)
      .annotateContext(webhookDocs(
        "Receive an SMS",
        "Keeps the message (an unknown sender's too, for admins), matches `From` to a patient's phone and " +
          "records an inbound sms activity, performed by the system user and assigned to the patient's lead care " +
          "manager, with its event. STOP/STOPALL/UNSUBSCRIBE/CANCEL/END/QUIT opt the number out of SMS, " +
          "START/UNSTOP back in. Answers `<Response/>`, or the configured auto-reply. A repeated delivery " +
          "(same MessageSid) changes nothing."
      ))
  )
  .add(
    hook("inboundVoice", "/clinic/webhooks/telephony/voice")
      .setPayload(InboundVoiceForm)
      .annotateContext(webhookDocs(
        "Receive a call",
        "Matches the caller to a patient and records an inbound call activity and its event; answers TwiML " +
          "that forwards the call to the lead care manager's phone when known, else takes a voicemail (its " +
          "recording and transcription fill the activity's `transcript`)."
      ))
  )
  .add(
    hook("smsStatus", "/clinic/webhooks/telephony/sms_status")
      .setPayload(SmsStatusForm)
      .setUrlParams(SmsQuery)
      .annotateContext(webhookDocs(
        "Receive an SMS status",
        "Moves the message's status forwards only (a late `sent` after `delivered` is ignored; final statuses " +
          "stay) and keeps ErrorCode/ErrorMessage. Delivered completes the activity; failed or undelivered opens " +
          "a follow-up task to verify the contact details. Repeats change nothing. A SID that is no message of " +
          "ours but an appointment reminder's moves that reminder's delivery_status (delivered, bounced, failed " +
          "or unsubscribed), once."
      ))
  )
  .add(
    hook("voiceStatus", "/clinic/webhooks/telephony/voice_status")
      .setPayload(VoiceStatusForm)
      .setUrlParams(CallQuery)
      .annotateContext(webhookDocs(
        "Receive a call status",
        "Moves the call's status forwards only; CallDuration becomes the event's duration in minutes (rounded " +
          "up). Completed completes the activity; busy, no-answer or failed on an outbound call opens a follow-up " +
          "task. Repeats change nothing. A SID that is no call of ours but an appointment reminder's moves that " +
          "reminder's delivery_status (completed: delivered; busy, no-answer, failed: failed), once."
      ))
  )
  .add(
    hook("outboundCall", "/clinic/webhooks/telephony/outbound_call")
      .setPayload(InboundVoiceForm)
      .setUrlParams(CallQuery)
      .annotateContext(webhookDocs(
        "Answer an outbound call",
        "The TwiML of a call the API placed, fetched when the patient answers: says who is calling and " +
          "connects the caller's phone, or asks the patient to call back."
      ))
  )
  .add(
    hook("recording", "/clinic/webhooks/telephony/recording")
      .setPayload(RecordingForm)
      .annotateContext(webhookDocs(
        "Receive a voicemail or its transcription",
        "The recording (`RecordingUrl`) and transcription (`TranscriptionText`) callbacks of a voicemail: kept " +
          "on the call, the transcription also as the activity's `transcript`. Answers TwiML that says goodbye."
      ))
  )
  .middleware(TwilioSignature)
  .addError(EcmValidationFailed.schema)
  .addError(EcmServiceUnavailable.schema)
  .addError(EcmPayloadTooLarge.schema)
  .annotate(BodyLimit, webhookBodyBytes)
  .annotateContext(groupDocs({
    tag: "ECM · Telephony webhooks",
    description: "Called by Twilio, not by clients: form-encoded requests signed with `X-Twilio-Signature`, " +
      "answered with TwiML (`text/xml`). Unsigned or wrongly signed requests get 403 and change nothing."
  }))
{}
