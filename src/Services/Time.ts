/**
 * The one clock (ARCHITECTURE "Time"). Every state timestamp a service or repository writes
 * (`updated_at`, `signed_at`, `locked_at` …) comes from here rather than SQL `now()`, so a test's
 * `TestClock` moves all of them together.
 */
import { Clock, Effect } from "effect"

/** The current instant of the Effect clock. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The current instant in milliseconds since the epoch. */
export const nowMillis: Effect.Effect<number> = Clock.currentTimeMillis
