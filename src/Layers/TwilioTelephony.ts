/**
 * `Telephony` through Twilio's REST API with the official `twilio` client: `messages.create` and
 * `calls.create`, with the status callbacks and TwiML URL the caller gives. Loaded only when
 * TWILIO_* settings select it (src/Layers/Adapters.ts), so other instances never load the SDK.
 *
 * A rejection by Twilio (a 4xx with its `message`) becomes `TelephonyError` with Twilio's reason;
 * anything else (network, 5xx) too, with a generic reason: the caller's answer must not echo
 * transport details.
 */
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import twilio from "twilio"
import {
  type OutboundCall,
  type OutboundSms,
  Telephony,
  TelephonyError,
  type TelephonyReceipt
} from "../Services/Telephony.js"
import { AppConfig, type TwilioSettings } from "../Services/AppConfig.js"
import { sayResponse } from "../Domain/Ecm/Twiml.js"


/**
 * Twilio's own HTTP client, sending every request to `baseUrl` instead of `*.twilio.com` (a
 * local stand-in in tests): the path, query, form body and authentication stay as Twilio's.
 */
export class RedirectingRequestClient extends twilio.RequestClient {
  constructor(private readonly baseUrl: string) {
    super()
  }

  override request<TData>(options: Parameters<twilio.RequestClient["request"]>[0] & { data?: TData }) {
    const target = new URL(options.uri)
    const base = new URL(this.baseUrl)
    target.protocol = base.protocol
    target.host = base.host
    return super.request<TData>({ ...options, uri: target.href } as typeof options)
  }
}

/** Twilio's reason for a refusal (`RestException.message`), else a reason that says nothing internal. */
const reasonOf = (error: unknown): string => {
  if (error instanceof twilio.RestException && typeof error.message === "string" && error.message !== "") {
    return error.message.slice(0, 500)
  }
  return "the telephony provider could not be reached"
}

export const makeTwilioTelephony = (settings: TwilioSettings) => {
  const client = twilio(settings.accountSid, Redacted.value(settings.authToken), {
    ...Option.match(settings.apiBaseUrl, {
      onNone: () => ({}),
      onSome: (baseUrl) => ({ httpClient: new RedirectingRequestClient(baseUrl) })
    }),
    autoRetry: false
  })

  const receiptOf = (
    resource: { sid: string; to: string; from: string | null; status: string; dateCreated: Date | null },
    fallbackFrom: string,
    now: number
  ): TelephonyReceipt => ({
    sid: resource.sid,
    to: resource.to,
    from: resource.from ?? fallbackFrom,
    status: String(resource.status),
    createdAt: resource.dateCreated ?? new Date(now)
  })

  const sendSms = Effect.fn("Telephony.sendSms", { kind: "client" })(function*(sms: OutboundSms) {
    const from = sms.from ?? settings.fromNumber
    const message = yield* Effect.tryPromise({
      try: () =>
        client.messages.create({
          to: sms.to,
          body: sms.body,
          // A messaging service picks the sender from its pool; otherwise our number.
          ...Option.match(settings.messagingServiceSid, {
            onNone: () => ({ from }),
            onSome: (messagingServiceSid) => (sms.from === undefined ? { messagingServiceSid } : { from, messagingServiceSid })
          }),
          ...(sms.statusCallback === undefined ? {} : { statusCallback: sms.statusCallback })
        }),
      catch: (error) => new TelephonyError({ action: "send_sms", reason: reasonOf(error) })
    })
    yield* Effect.annotateCurrentSpan("telephony.sid", message.sid)
    return receiptOf(message, from, yield* Clock.currentTimeMillis)
  })

  const placeCall = Effect.fn("Telephony.placeCall", { kind: "client" })(function*(call: OutboundCall) {
    const from = call.from ?? settings.fromNumber
    const placed = yield* Effect.tryPromise({
      try: () =>
        client.calls.create({
          to: call.to,
          from,
          // Without a URL of ours, TwiML saying the caller's text (a reminder's), else a short
          // greeting: Twilio needs one or the other.
          ...(call.url === undefined
            ? { twiml: sayResponse(call.say ?? "Hello from your care team.") }
            : { url: call.url, method: "POST" }),
          ...(call.statusCallback === undefined
            ? {}
            : {
              statusCallback: call.statusCallback,
              statusCallbackMethod: "POST",
              statusCallbackEvent: ["initiated", "ringing", "answered", "completed"]
            })
        }),
      catch: (error) => new TelephonyError({ action: "place_call", reason: reasonOf(error) })
    })
    yield* Effect.annotateCurrentSpan("telephony.sid", placed.sid)
    return receiptOf(placed, from, yield* Clock.currentTimeMillis)
  })

  return Telephony.of({ sendSms, placeCall })
}

/** Selected by AdaptersLive when `config.twilio` is Some. */
export const TwilioTelephonyLive: Layer.Layer<Telephony, never, AppConfig> = Layer.effect(
  Telephony,
  Effect.flatMap(AppConfig, (config) =>
    Option.match(config.twilio, {
      onNone: () => Effect.dieMessage("TwilioTelephonyLive needs the TWILIO_* settings"),
      onSome: (settings) => Effect.succeed(makeTwilioTelephony(settings))
    }))
)
