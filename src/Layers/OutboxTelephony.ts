/**
 * The local default `Telephony`: nothing leaves the machine. Each SMS or call is appended as one
 * JSON line to DATA_DIR/outbox/telephony.jsonl, so a developer can see what would have been sent.
 */
import { Clock, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import {
  type OutboundCall,
  type OutboundSms,
  Telephony,
  TelephonyError,
  type TelephonyReceipt
} from "../Services/Telephony.js"
import { AppConfig, type AppSettings } from "../Services/AppConfig.js"

/** Sender used when no Twilio number is configured (a reserved fictional number). */
export const defaultFromNumber = "+15550000000"

/** Shaped like Twilio's SIDs: "SM" (messages) or "CA" (calls) and 32 hex digits. */
export const fakeSid = (prefix: "SM" | "CA"): string => prefix + randomBytes(16).toString("hex")

export interface OutboxLine {
  readonly kind: "sms" | "call"
  readonly to: string
  readonly from: string
  readonly body?: string
  readonly sid: string
  readonly created_at: string
}

export const telephonyOutboxFile = (dataDir: string) => path.join(dataDir, "outbox", "telephony.jsonl")

/**
 * Only when a test asks: after recording a message or call that names a status callback, the
 * outbox posts that callback the way Twilio would (form-encoded, signed with `authToken`), so the
 * whole round trip runs without Twilio. Never on by default.
 */
export interface OutboxStatusCallbacks {
  readonly authToken: string
  /** What each message reports (default `delivered`). */
  readonly smsStatus?: string
  /** What each call reports (default `completed`, 30 seconds). */
  readonly callStatus?: string
  /** Where the callback is sent (the test server) instead of the URL it is signed for. */
  readonly deliverTo?: (url: string) => string
}

const postStatusCallback = (callbacks: OutboxStatusCallbacks, url: string, params: Record<string, string>) =>
  Effect.promise(async () => {
    const { getExpectedTwilioSignature } = await import("twilio/lib/webhooks/webhooks.js")
    const response = await fetch(callbacks.deliverTo?.(url) ?? url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(callbacks.authToken, url, params)
      },
      body: new URLSearchParams(params).toString()
    })
    await response.arrayBuffer()
    return response.status
  }).pipe(Effect.flatMap((status) => Effect.annotateCurrentSpan("telephony.callback_status", status)))

export const makeOutboxTelephony = (settings: Pick<AppSettings, "dataDir" | "twilio">, callbacks?: OutboxStatusCallbacks) => {
  const file = telephonyOutboxFile(settings.dataDir)
  const defaultFrom = Option.match(settings.twilio, { onNone: () => defaultFromNumber, onSome: (t) => t.fromNumber })

  const record = (action: TelephonyError["action"], kind: OutboxLine["kind"], to: string, from: string | undefined, body?: string) =>
    Effect.gen(function*() {
      const createdAt = new Date(yield* Clock.currentTimeMillis)
      const line: OutboxLine = {
        kind,
        to,
        from: from ?? defaultFrom,
        ...(body === undefined ? {} : { body }),
        sid: fakeSid(kind === "sms" ? "SM" : "CA"),
        created_at: createdAt.toISOString()
      }
      // One appendFile call per whole line: O_APPEND writes of a line do not interleave.
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(path.dirname(file), { recursive: true })
          await fs.appendFile(file, JSON.stringify(line) + "\n")
        },
        catch: () => new TelephonyError({ action, reason: "Could not write to the local telephony outbox" })
      })
      yield* Effect.annotateCurrentSpan("telephony.sid", line.sid)
      return { sid: line.sid, to, from: line.from, status: "queued", createdAt } satisfies TelephonyReceipt
    })

  const report = (receipt: TelephonyReceipt, kind: OutboxLine["kind"], statusCallback: string | undefined) =>
    callbacks === undefined || statusCallback === undefined
      ? Effect.void
      : postStatusCallback(
        callbacks,
        statusCallback,
        kind === "sms"
          ? { MessageSid: receipt.sid, MessageStatus: callbacks.smsStatus ?? "delivered", To: receipt.to, From: receipt.from }
          : { CallSid: receipt.sid, CallStatus: callbacks.callStatus ?? "completed", CallDuration: "30", To: receipt.to, From: receipt.from }
      )

  return Telephony.of({
    sendSms: Effect.fn("Telephony.sendSms")(function*(sms: OutboundSms) {
      const receipt = yield* record("send_sms", "sms", sms.to, sms.from, sms.body)
      yield* report(receipt, "sms", sms.statusCallback)
      return receipt
    }),
    placeCall: Effect.fn("Telephony.placeCall")(function*(call: OutboundCall) {
      const receipt = yield* record("place_call", "call", call.to, call.from, call.say)
      yield* report(receipt, "call", call.statusCallback)
      return receipt
    })
  })
}

export const OutboxTelephonyLive: Layer.Layer<Telephony, never, AppConfig> = Layer.effect(
  Telephony,
  Effect.map(AppConfig, (config) => makeOutboxTelephony(config))
)

/** The outbox that also posts each status callback to the app (tests of the round trip). */
export const OutboxTelephonyWithCallbacks = (callbacks: OutboxStatusCallbacks): Layer.Layer<Telephony, never, AppConfig> =>
  Layer.effect(Telephony, Effect.map(AppConfig, (config) => makeOutboxTelephony(config, callbacks)))
