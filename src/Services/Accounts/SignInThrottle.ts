/**
 * The limits that keep account endpoints from being abused (docs/spec-decisions.md, Accounts),
 * and the per-email sign-in back-off.
 *
 * Every check here counts the attempt first, in one atomic statement, and decides from what that
 * statement returns: concurrent requests are settled by PostgreSQL, never by a count read earlier.
 */
import { Duration, Effect, Option } from "effect"
import * as Time from "../Time.js"
import { hashToken } from "../Tokens.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import type { Limit } from "../RateLimiter.js"
import { SignInThrottlesRepo } from "./SignInThrottlesRepo.js"

/**
 * Fixed windows per phone number (RateLimiter buckets); the per client address ones are settings
 * (src/Services/AddressLimits.ts).
 */
export const accountLimits = {
  /** Confirmation codes texted to one phone number, by registration or resend. */
  codesPerPhone: { limit: 5, window: "1 hour" }
} as const satisfies Record<string, Limit>

/**
 * Per email: the first `freeAttempts` failures cost nothing; from then on each failure makes the
 * next attempt wait `firstDelay`, doubling up to `maxDelay`. A success, or `forgetAfter` without
 * attempts, starts over. The owner is slowed down, never locked out for longer than `maxDelay`.
 */
export const signInBackoff = {
  freeAttempts: 5,
  firstDelay: Duration.seconds(1),
  maxDelay: Duration.minutes(15),
  forgetAfter: Duration.hours(24)
} as const

/** The back-off after `attempts` unsuccessful attempts (the same rule as `SignInThrottlesRepo.claim`'s SQL). */
export const backoffAfter = (attempts: number): Duration.Duration =>
  attempts < signInBackoff.freeAttempts
    ? Duration.zero
    : Duration.min(
      signInBackoff.maxDelay,
      Duration.times(signInBackoff.firstDelay, 2 ** Math.min(attempts - signInBackoff.freeAttempts, 30))
    )

/** "32 seconds", "15 minutes": how long to wait, rounded up. */
export const waitText = (ms: number): string => {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`
  return ms <= 60_000 ? plural(Math.max(1, Math.ceil(ms / 1000)), "second") : plural(Math.ceil(ms / 60_000), "minute")
}

const emailHash = (email: string) => hashToken(normalizeEmail(email))

const backoffRule = {
  freeAttempts: signInBackoff.freeAttempts,
  firstSeconds: Duration.toSeconds(signInBackoff.firstDelay),
  maxSeconds: Duration.toSeconds(signInBackoff.maxDelay)
}

export class SignInThrottle extends Effect.Service<SignInThrottle>()("app/SignInThrottle", {
  effect: Effect.gen(function*() {
    const throttles = yield* SignInThrottlesRepo

    /**
     * Counts an attempt for the email before its password is checked. None: go ahead (the attempt
     * stays counted unless `succeeded` follows). Some(ms): refused, the back-off ends in `ms`.
     */
    const claim = Effect.fn("SignInThrottle.claim")(function*(email: string) {
      const nowMs = yield* Time.nowMillis
      const now = new Date(nowMs)
      const key = emailHash(email)
      const forgottenBefore = new Date(nowMs - Duration.toMillis(signInBackoff.forgetAfter))
      const claimed = yield* throttles.claim({
        emailHash: key,
        now,
        forgottenBefore,
        firstNotBefore: new Date(nowMs + Duration.toMillis(backoffAfter(1))),
        rule: backoffRule
      })
      if (Math.random() < 0.01) yield* throttles.deleteForgotten(forgottenBefore)
      if (claimed) return Option.none<number>()
      const blocked = yield* throttles.notBefore(key)
      return Option.some(Math.max(0, Option.match(blocked, { onNone: () => nowMs, onSome: (at) => at.getTime() }) - nowMs))
    })

    /** The right password was given: the email starts over. */
    const succeeded = Effect.fn("SignInThrottle.succeeded")((email: string) => throttles.delete(emailHash(email)))

    return { claim, succeeded } as const
  }),
  dependencies: [SignInThrottlesRepo.Default]
}) {}
