/**
 * Fixed-window rate limits kept in PostgreSQL, so every instance counts the same hits. Bucket
 * keys are hashed: they may be built from client addresses, emails or phone numbers.
 *
 * A hit is counted by one atomic upsert before the work it guards, so concurrent requests cannot
 * all slip under the limit. Inside a transaction the hit is undone with it (a registration that
 * fails does not use up its phone number's budget).
 */
import { Clock, Duration, Effect } from "effect"
import { createHash } from "node:crypto"
import { tooManyRequests } from "../Api/Errors.js"
import { RateLimitsRepo } from "./RateLimitsRepo.js"
import { dayMs } from "../Domain/Time.js"

export const limitMessage = "Too many requests; try again later"

/** At most `limit` hits per fixed `window`. */
export interface Limit {
  readonly limit: number
  readonly window: Duration.DurationInput
}

export interface Taken {
  /** Whether this hit was within the limit. */
  readonly allowed: boolean
  /** When the bucket has room again: the end of the current window. */
  readonly retryAfter: Duration.Duration
  /** Gives the hit back (e.g. a sign-in that turned out to be the owner's). */
  readonly giveBack: Effect.Effect<void>
}

export class RateLimiter extends Effect.Service<RateLimiter>()("app/RateLimiter", {
  effect: Effect.gen(function*() {
    const repo = yield* RateLimitsRepo

    /** Counts one hit in the bucket's current window. */
    const take = Effect.fn("RateLimiter.take", { captureStackTrace: false })(function*(bucket: string, { limit, window }: Limit) {
      const windowMs = Duration.toMillis(window)
      const now = yield* Clock.currentTimeMillis
      const windowStart = new Date(now - (now % windowMs))
      const key = createHash("sha256").update(bucket).digest("hex")
      const hits = yield* repo.hit(key, windowStart)
      // Old windows are useless: drop them now and then rather than with a scheduler.
      if (Math.random() < 0.01) yield* repo.deleteBefore(new Date(now - dayMs))
      const giveBack = repo.unhit(key, windowStart).pipe(Effect.withSpan("RateLimiter.giveBack", { captureStackTrace: false }))
      const retryAfter = Duration.millis(windowStart.getTime() + windowMs - now)
      return { allowed: hits <= limit, retryAfter, giveBack } satisfies Taken
    })

    /**
     * Counts one hit; beyond the limit fails with 429 and the time left in the window (sent as
     * `Retry-After`).
     */
    const enforce = (bucket: string, rule: Limit, message: string = limitMessage) =>
      Effect.filterOrFail(take(bucket, rule), (taken) => taken.allowed, (taken) => tooManyRequests(message, taken.retryAfter))

    return { take, enforce } as const
  }),
  dependencies: [RateLimitsRepo.Default]
}) {}
