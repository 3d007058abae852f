/**
 * The only SQL on `sign_in_throttles` (ARCHITECTURE "Persistence"): the per-email sign-in
 * back-off, keyed by the SHA-256 of the normalised email (no personal data at rest). The
 * back-off rule itself is `SignInThrottle`'s (`signInBackoff`); the claim computes it in SQL so
 * that one atomic statement both counts the attempt and decides.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Hash = Schema.Uint8ArrayFromSelf

/** The back-off rule in seconds: `freeAttempts` free, then `firstSeconds` doubling up to `maxSeconds`. */
export const BackoffRule = Schema.Struct({ freeAttempts: Schema.Int, firstSeconds: Schema.Number, maxSeconds: Schema.Number })

const Claim = Schema.Struct({
  emailHash: Hash,
  now: Schema.DateFromSelf,
  /** Attempts last made at or before this are forgotten: the count starts over. */
  forgottenBefore: Schema.DateFromSelf,
  /** `not_before` of a first attempt. */
  firstNotBefore: Schema.DateFromSelf,
  rule: BackoffRule
})

export class SignInThrottlesRepo extends Effect.Service<SignInThrottlesRepo>()("app/SignInThrottlesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const claim = SqlSchema.findOne({
      Request: Claim,
      Result: Schema.Struct({ attempts: Schema.Int }),
      execute: ({ emailHash, firstNotBefore, forgottenBefore, now, rule }) => {
        const attempts = sql`(CASE WHEN t.last_attempt_at <= ${forgottenBefore} THEN 1 ELSE t.attempts + 1 END)`
        const backoff = sql`make_interval(secs => CASE WHEN ${attempts} < ${rule.freeAttempts} THEN 0
          ELSE LEAST(${rule.maxSeconds}::float8, ${rule.firstSeconds}::float8 * power(2, LEAST(${attempts} - ${rule.freeAttempts}, 30))) END)`
        // The row lock of ON CONFLICT serialises concurrent attempts: each sees the one before.
        return sql`
          INSERT INTO sign_in_throttles AS t (email_hash, attempts, not_before, last_attempt_at)
          VALUES (${emailHash}, 1, ${firstNotBefore}, ${now})
          ON CONFLICT (email_hash) DO UPDATE SET
            attempts = ${attempts}, not_before = ${now}::timestamptz + ${backoff}, last_attempt_at = ${now}
          WHERE t.not_before <= ${now}
          RETURNING attempts`
      }
    })

    const notBefore = SqlSchema.findOne({
      Request: Hash,
      Result: Schema.Struct({ not_before: Schema.DateFromSelf }),
      execute: (emailHash) => sql`SELECT not_before FROM sign_in_throttles WHERE email_hash = ${emailHash}`
    })

    const deleteForgotten = SqlSchema.void({
      Request: Schema.DateFromSelf,
      execute: (before) => sql`DELETE FROM sign_in_throttles WHERE last_attempt_at < ${before}`
    })

    const deleteOne = SqlSchema.void({
      Request: Hash,
      execute: (emailHash) => sql`DELETE FROM sign_in_throttles WHERE email_hash = ${emailHash}`
    })

    return {
      /** Counts an attempt unless the email is waiting out its back-off; whether it was counted. */
      claim: (request: typeof Claim.Type) => Effect.map(orDefect(claim(request)), Option.isSome),
      /** Until when the email waits; None when it has no row. */
      notBefore: (emailHash: Uint8Array) => Effect.map(orDefect(notBefore(emailHash)), Option.map((row) => row.not_before)),
      /** Drops rows whose last attempt was before `before`. */
      deleteForgotten: (before: Date) => orDefect(deleteForgotten(before)),
      delete: (emailHash: Uint8Array) => orDefect(deleteOne(emailHash))
    } as const
  })
}) {}
