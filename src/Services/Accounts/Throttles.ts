/**
 * The limits that keep account endpoints from being abused (docs/spec-decisions.md, Accounts),
 * and the per-email sign-in back-off.
 *
 * Every check here counts the attempt first, in one atomic statement, and decides from what that
 * statement returns: concurrent requests are settled by PostgreSQL, never by a count read earlier.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { hashToken } from "../Tokens.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import type { Limit } from "../RateLimiter.js"

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

/** The back-off after `attempts` unsuccessful attempts (the same rule as the SQL below). */
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

export class SignInThrottle extends Effect.Service<SignInThrottle>()("app/SignInThrottle", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const free = signInBackoff.freeAttempts
    const firstSeconds = Duration.toSeconds(signInBackoff.firstDelay)
    const maxSeconds = Duration.toSeconds(signInBackoff.maxDelay)

    /**
     * Counts an attempt for the email before its password is checked. None: go ahead (the attempt
     * stays counted unless `succeeded` follows). Some(ms): refused, the back-off ends in `ms`.
     */
    const claim = (email: string) =>
      Effect.gen(function*() {
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        const key = emailHash(email)
        const forgotten = new Date(nowMs - Duration.toMillis(signInBackoff.forgetAfter))
        const attempts = sql`(CASE WHEN t.last_attempt_at <= ${forgotten} THEN 1 ELSE t.attempts + 1 END)`
        const backoff = sql`make_interval(secs => CASE WHEN ${attempts} < ${free} THEN 0
          ELSE LEAST(${maxSeconds}::float8, ${firstSeconds}::float8 * power(2, LEAST(${attempts} - ${free}, 30))) END)`
        // The row lock of ON CONFLICT serialises concurrent attempts: each sees the one before.
        const claimed = yield* sql<{ attempts: number }>`
          INSERT INTO sign_in_throttles AS t (email_hash, attempts, not_before, last_attempt_at)
          VALUES (${key}, 1, ${new Date(nowMs + Duration.toMillis(backoffAfter(1)))}, ${now})
          ON CONFLICT (email_hash) DO UPDATE SET
            attempts = ${attempts}, not_before = ${now}::timestamptz + ${backoff}, last_attempt_at = ${now}
          WHERE t.not_before <= ${now}
          RETURNING attempts`
        if (Math.random() < 0.01) yield* sql`DELETE FROM sign_in_throttles WHERE last_attempt_at < ${forgotten}`
        if (claimed.length > 0) return Option.none<number>()
        const [blocked] = yield* sql<{ not_before: Date }>`SELECT not_before FROM sign_in_throttles WHERE email_hash = ${key}`
        return Option.some(Math.max(0, (blocked?.not_before.getTime() ?? nowMs) - nowMs))
      }).pipe(Effect.orDie, Effect.withSpan("SignInThrottle.claim"))

    /** The right password was given: the email starts over. */
    const succeeded = (email: string) =>
      sql`DELETE FROM sign_in_throttles WHERE email_hash = ${emailHash(email)}`.pipe(
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("SignInThrottle.succeeded")
      )

    return { claim, succeeded } as const
  })
}) {}
