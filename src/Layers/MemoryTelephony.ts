/**
 * In-memory `Telephony` for tests: records what was sent and can be told to reject the next
 * send, the way a provider rejects an invalid number.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { Telephony, TelephonyError, type TelephonyReceipt } from "../Services/Telephony.js"
import { defaultFromNumber, fakeSid } from "./OutboxTelephony.js"

export interface SentTelephony extends TelephonyReceipt {
  readonly kind: "sms" | "call"
  readonly body?: string
  /** The webhook the provider would post statuses to, and a call's TwiML URL, as asked. */
  readonly statusCallback?: string
  readonly url?: string
}

/** The test's handle on the in-memory provider. */
export class MemoryTelephony extends Context.Tag("app/MemoryTelephony")<MemoryTelephony, {
  /** Everything accepted so far, oldest first. */
  readonly sent: Effect.Effect<ReadonlyArray<SentTelephony>>
  /** The next SMS or call fails with `TelephonyError({ reason })` and is not recorded. */
  readonly failNext: (reason: string) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}>() {
  /** Provides both `Telephony` and this handle, sharing one store. */
  static readonly layer: Layer.Layer<Telephony | MemoryTelephony> = Layer.effectContext(Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<SentTelephony>>([])
    const failure = yield* Ref.make(Option.none<string>())

    const record = (
      action: TelephonyError["action"],
      kind: SentTelephony["kind"],
      to: string,
      from: string | undefined,
      body?: string,
      callbacks: { readonly statusCallback?: string | undefined; readonly url?: string | undefined } = {}
    ) =>
      Effect.gen(function*() {
        const reason = yield* Ref.getAndSet(failure, Option.none())
        if (Option.isSome(reason)) return yield* new TelephonyError({ action, reason: reason.value })
        const receipt: SentTelephony = {
          kind,
          sid: fakeSid(kind === "sms" ? "SM" : "CA"),
          to,
          from: from ?? defaultFromNumber,
          status: "queued",
          createdAt: new Date(yield* Clock.currentTimeMillis),
          ...(body === undefined ? {} : { body }),
          ...(callbacks.statusCallback === undefined ? {} : { statusCallback: callbacks.statusCallback }),
          ...(callbacks.url === undefined ? {} : { url: callbacks.url })
        }
        yield* Ref.update(sent, (all) => [...all, receipt])
        return receipt
      })

    return Context.make(Telephony, {
      sendSms: (sms) => record("send_sms", "sms", sms.to, sms.from, sms.body, sms),
      // A reminder's spoken text is recorded as the call's body.
      placeCall: (call) => record("place_call", "call", call.to, call.from, call.say, call)
    }).pipe(Context.add(MemoryTelephony, {
      sent: Ref.get(sent),
      failNext: (reason) => Ref.set(failure, Option.some(reason)),
      clear: Ref.set(sent, [])
    }))
  }))
}

export const MemoryTelephonyLive = MemoryTelephony.layer
