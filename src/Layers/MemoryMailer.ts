/** In-memory `Mailer` for tests: records each message and can be told to fail the next send. */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { type Mail, MailError, Mailer } from "../Services/Mailer.js"

export interface SentMail extends Mail {
  readonly messageId: string
}

/** The test's handle on the in-memory mailer. */
export class MemoryMailer extends Context.Tag("app/MemoryMailer")<MemoryMailer, {
  /** Every accepted message, oldest first. */
  readonly sent: Effect.Effect<ReadonlyArray<SentMail>>
  /** The next send fails with `MailError({ reason })` and is not recorded. */
  readonly failNext: (reason: string) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}>() {
  /** Provides both `Mailer` and this handle, sharing one store. */
  static readonly layer: Layer.Layer<Mailer | MemoryMailer> = Layer.effectContext(Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<SentMail>>([])
    const failure = yield* Ref.make(Option.none<string>())
    return Context.make(Mailer, {
      send: (mail) =>
        Effect.gen(function*() {
          const reason = yield* Ref.getAndSet(failure, Option.none())
          if (Option.isSome(reason)) return yield* new MailError({ reason: reason.value })
          const messageId = `<${randomUUID()}@memory>`
          yield* Ref.update(sent, (all) => [...all, { ...mail, messageId }])
          return { messageId }
        })
    }).pipe(Context.add(MemoryMailer, {
      sent: Ref.get(sent),
      failNext: (reason) => Ref.set(failure, Option.some(reason)),
      clear: Ref.set(sent, [])
    }))
  }))
}

export const MemoryMailerLive = MemoryMailer.layer
