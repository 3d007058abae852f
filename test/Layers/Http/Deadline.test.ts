/** `withinMillis`, the health check's deadline: the value in time, None (and the work interrupted) after. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import { withinMillis } from "../../../src/Layers/Http/Routes.js"

describe("withinMillis", () => {
  it.effect("answers the effect's value when it finishes in time", () =>
    Effect.gen(function*() {
      expect(yield* withinMillis(Effect.succeed(42), 1_000)).toEqual(Option.some(42))
      expect(yield* withinMillis(Effect.as(Effect.promise(() => new Promise((r) => setTimeout(r, 20))), "late but in time"), 1_000))
        .toEqual(Option.some("late but in time"))
    }))

  it.effect("passes the effect's failure through", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(withinMillis(Effect.fail("refused"), 1_000))
      expect(exit).toEqual(Exit.fail("refused"))
    }))

  it.live("answers None at the deadline and interrupts the effect", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const started = performance.now()
      const result = yield* withinMillis(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)), 50)
      expect(result).toEqual(Option.none())
      expect(performance.now() - started).toBeGreaterThanOrEqual(45)
      yield* Deferred.await(interrupted)
    }))

  it.live("interrupting the caller interrupts the effect", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(withinMillis(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)), 60_000))
      yield* Effect.sleep("10 millis")
      expect(Exit.isInterrupted(yield* Fiber.interrupt(caller))).toBe(true)
      yield* Deferred.await(interrupted)
    }))
})
