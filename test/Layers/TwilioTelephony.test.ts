/**
 * TwilioTelephony against a local HTTP stand-in for Twilio's REST API, reached by the official
 * `twilio` client (its own RequestClient, redirected by TWILIO_API_BASE_URL): the requests it
 * really makes — path, Basic auth, form fields — and Twilio's JSON answers, a 4xx included.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted } from "effect"
import { makeTwilioTelephony } from "../../src/Layers/TwilioTelephony.js"
import type { TwilioSettings } from "../../src/Services/AppConfig.js"
import { twilioStandIn } from "./twilioStandIn.js"

const standIn = twilioStandIn()

const settings = (apiBaseUrl: string, overrides: Partial<TwilioSettings> = {}): TwilioSettings => ({
  accountSid: "AC11111111111111111111111111111111",
  authToken: Redacted.make("secret-auth-token"),
  fromNumber: "+15550001111",
  apiBaseUrl: Option.some(apiBaseUrl),
  messagingServiceSid: Option.none(),
  smsAutoReply: Option.none(),
  ...overrides
})

const basicAuth = `Basic ${Buffer.from("AC11111111111111111111111111111111:secret-auth-token").toString("base64")}`

describe("TwilioTelephony", () => {
  it.scoped("messages.create: the account's Messages resource, Basic auth, To/From/Body/StatusCallback", () =>
    Effect.gen(function*() {
      const twilio = yield* standIn
      const telephony = makeTwilioTelephony(settings(twilio.url))
      const receipt = yield* telephony.sendSms({
        to: "+14155550132",
        body: "See you tomorrow",
        statusCallback: "https://api.example.org/v1/clinic/webhooks/telephony/sms_status?sms_id=7"
      })
      expect(receipt).toEqual({
        sid: "SM0123456789abcdef0123456789abcdef",
        to: "+14155550132",
        from: "+15550001111",
        status: "queued",
        createdAt: new Date("2026-11-23T14:00:00.000Z")
      })
      expect(twilio.captured).toEqual([{
        method: "POST",
        path: "/2010-04-01/Accounts/AC11111111111111111111111111111111/Messages.json",
        authorization: basicAuth,
        contentType: "application/x-www-form-urlencoded",
        form: {
          To: ["+14155550132"],
          From: ["+15550001111"],
          Body: ["See you tomorrow"],
          StatusCallback: ["https://api.example.org/v1/clinic/webhooks/telephony/sms_status?sms_id=7"]
        }
      }])
    }))

  it.scoped("a messaging service SID replaces the From number", () =>
    Effect.gen(function*() {
      const twilio = yield* standIn
      const telephony = makeTwilioTelephony(settings(twilio.url, { messagingServiceSid: Option.some("MG22222222222222222222222222222222") }))
      yield* telephony.sendSms({ to: "+14155550132", body: "hi" })
      expect(twilio.captured[0]!.form).toEqual({ To: ["+14155550132"], Body: ["hi"], MessagingServiceSid: ["MG22222222222222222222222222222222"] })
    }))

  it.scoped("calls.create: TwiML URL and status callback with its events", () =>
    Effect.gen(function*() {
      const twilio = yield* standIn
      const telephony = makeTwilioTelephony(settings(twilio.url))
      const receipt = yield* telephony.placeCall({
        to: "+14155550132",
        url: "https://api.example.org/v1/clinic/webhooks/telephony/outbound_call?call_id=3",
        statusCallback: "https://api.example.org/v1/clinic/webhooks/telephony/voice_status?call_id=3"
      })
      expect(receipt.sid).toBe("CA0123456789abcdef0123456789abcdef")
      expect(twilio.captured[0]).toMatchObject({
        method: "POST",
        path: "/2010-04-01/Accounts/AC11111111111111111111111111111111/Calls.json",
        authorization: basicAuth
      })
      expect(twilio.captured[0]!.form).toEqual({
        To: ["+14155550132"],
        From: ["+15550001111"],
        Url: ["https://api.example.org/v1/clinic/webhooks/telephony/outbound_call?call_id=3"],
        Method: ["POST"],
        StatusCallback: ["https://api.example.org/v1/clinic/webhooks/telephony/voice_status?call_id=3"],
        StatusCallbackMethod: ["POST"],
        StatusCallbackEvent: ["initiated", "ringing", "answered", "completed"]
      })
    }))

  it.scoped("calls.create without a URL: TwiML that says the caller's text (a reminder's), XML-escaped", () =>
    Effect.gen(function*() {
      const twilio = yield* standIn
      const telephony = makeTwilioTelephony(settings(twilio.url))
      yield* telephony.placeCall({ to: "+14155550132", say: "Bring your card <b> & ID." })
      yield* telephony.placeCall({ to: "+14155550132" })
      expect(twilio.captured.map((c) => c.form.Twiml)).toEqual([
        [`<?xml version="1.0" encoding="UTF-8"?><Response><Say>Bring your card &lt;b&gt; &amp; ID.</Say><Hangup/></Response>`],
        [`<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello from your care team.</Say><Hangup/></Response>`]
      ])
    }))

  it.scoped("a 4xx from Twilio: TelephonyError with Twilio's message", () =>
    Effect.gen(function*() {
      const twilio = yield* standIn
      twilio.failures.push({ status: 400, code: 21211, message: "The 'To' number +1415555 is not a valid phone number." })
      twilio.failures.push({ status: 401, code: 20003, message: "Authenticate" })
      const telephony = makeTwilioTelephony(settings(twilio.url))
      const sms = yield* Effect.exit(telephony.sendSms({ to: "+1415555", body: "hi" }))
      expect(sms).toEqual(Exit.fail(expect.objectContaining({ _tag: "TelephonyError", action: "send_sms", reason: "The 'To' number +1415555 is not a valid phone number." })))
      const call = yield* Effect.exit(telephony.placeCall({ to: "+14155550132" }))
      expect(call).toEqual(Exit.fail(expect.objectContaining({ _tag: "TelephonyError", action: "place_call", reason: "Authenticate" })))
    }))

  it.scoped("an unreachable API: TelephonyError that says nothing internal", () =>
    Effect.gen(function*() {
      const telephony = makeTwilioTelephony(settings("http://127.0.0.1:9"))
      const exit = yield* Effect.exit(telephony.sendSms({ to: "+14155550132", body: "hi" }))
      expect(exit).toEqual(Exit.fail(expect.objectContaining({ reason: "the telephony provider could not be reached" })))
    }))
})
