/** Outbound SMS and voice calls through a telephony provider (Twilio in production). */
import { Context, type Effect, Schema } from "effect"

export interface OutboundSms {
  /** E.164 number. */
  readonly to: string
  readonly body: string
  /** Defaults to the configured sender number. */
  readonly from?: string
}

export interface OutboundCall {
  readonly to: string
  readonly from?: string
  /** What the call says when answered (TwiML `<Say>` with Twilio): an appointment reminder's text. */
  readonly say?: string
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
