/** In-memory `Push` for tests: records what was sent; can reject the next send or a token. */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { Push, type PushMessage, PushError } from "../Services/Push.js"
import { fakePushId } from "./OutboxPush.js"

export interface SentPush extends PushMessage {
  readonly messageId: string
}

export class MemoryPush extends Context.Tag("app/MemoryPush")<MemoryPush, {
  readonly sent: Effect.Effect<ReadonlyArray<SentPush>>
  /** The next send fails with this error and is not recorded. */
  readonly failNext: (error: PushError) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}>() {
  static readonly layer: Layer.Layer<Push | MemoryPush> = Layer.effectContext(Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<SentPush>>([])
    const failure = yield* Ref.make(Option.none<PushError>())
    return Context.make(Push, {
      send: (message) =>
        Effect.gen(function*() {
          const error = yield* Ref.getAndSet(failure, Option.none())
          if (Option.isSome(error)) return yield* error.value
          const messageId = fakePushId()
          yield* Ref.update(sent, (all) => [...all, { ...message, messageId }])
          return { messageId }
        })
    }).pipe(Context.add(MemoryPush, {
      sent: Ref.get(sent),
      failNext: (error) => Ref.set(failure, Option.some(error)),
      clear: Ref.set(sent, [])
    }))
  }))
}

export { PushError }
