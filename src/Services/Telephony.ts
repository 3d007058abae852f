/** Outbound SMS and voice calls through a telephony provider (Twilio in production). */
import { Context, type Effect, Schema } from "effect"

export interface OutboundSms {
  /** E.164 number. */
  readonly to: string
  readonly body: string
  /** Defaults to the configured sender number. */
  readonly from?: string
  /** Where the provider posts delivery statuses (our sms_status webhook); none: no callbacks. */
  readonly statusCallback?: string
}

export interface OutboundCall {
  readonly to: string
  readonly from?: string
  /** What the call says when answered (TwiML `<Say>` with Twilio): an appointment reminder's text. */
  readonly say?: string
  /** The TwiML the call runs once answered (our outbound-call route); none: the provider's default. */
  readonly url?: string
  /** Where the provider posts call statuses (our voice_status webhook). */
  readonly statusCallback?: string
}

export interface TelephonyReceipt {
  /** The provider's id for the message or call (Twilio's SID). */
  readonly sid: string
  readonly to: string
  readonly from: string
  readonly status: string
  readonly createdAt: Date
}

export class TelephonyError extends Schema.TaggedError<TelephonyError>()("TelephonyError", {
  action: Schema.Literal("send_sms", "place_call"),
  /** The provider's reason, safe to show to the caller. */
  reason: Schema.String
}) {}

export interface TelephonyShape {
  readonly sendSms: (sms: OutboundSms) => Effect.Effect<TelephonyReceipt, TelephonyError>
  readonly placeCall: (call: OutboundCall) => Effect.Effect<TelephonyReceipt, TelephonyError>
}

export class Telephony extends Context.Tag("app/Telephony")<Telephony, TelephonyShape>() {}
