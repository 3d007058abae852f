/**
 * Confirmation codes (docs/spec-decisions.md, Accounts): one live code per user, stored hashed.
 * Every step is one atomic statement whose returned rows decide what happens, so concurrent
 * requests cannot check more codes, or confirm or send more often, than the rules allow.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Either } from "effect"
import { randomInt } from "node:crypto"
import { hashToken } from "../Tokens.js"

export const confirmationRules = {
  lifetime: Duration.minutes(15),
  /** Wrong tries per user within `attemptWindow`, however many codes were sent meanwhile. */
  maxWrongAttempts: 5,
  attemptWindow: Duration.minutes(15),
  resendInterval: Duration.seconds(60)
} as const

/** What checking a code came to. */
export type CodeCheck =
  | { readonly _tag: "Confirmed" }
  /** A try was counted and the code did not match. */
  | { readonly _tag: "Wrong" }
  /** Not checked: no code (or it was just used), an expired one, or the tries are used up. */
  | { readonly _tag: "NoCode" }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "TooManyTries"; readonly retryInMs: number }

const codeHash = (userId: number, code: string) => hashToken(`${userId}:${code}`)
const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0")

export class ConfirmationCodes extends Effect.Service<ConfirmationCodes>()("app/ConfirmationCodes", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const clock = Effect.map(Clock.currentTimeMillis, (ms) => ({ ms, date: new Date(ms) }))

    /** The first code of a new user; returns the code to send. */
    const create = (userId: number) =>
      Effect.gen(function*() {
        const now = yield* clock
        const code = newCode()
        yield* sql`INSERT INTO confirmation_codes (user_id, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${userId}, ${codeHash(userId, code)}, ${new Date(now.ms + Duration.toMillis(confirmationRules.lifetime))}, 0, ${now.date})`
        return code
      }).pipe(Effect.orDie, Effect.withSpan("ConfirmationCodes.create", { attributes: { "user.id": userId } }))

    /**
     * A fresh code (Right) unless the last one was sent less than `resendInterval` ago (Left: how
     * long until one may be sent). Only the request whose upsert returns a row may send; the
     * wrong-try count is kept.
     */
    const replace = (userId: number) =>
      Effect.gen(function*() {
        const now = yield* clock
        const code = newCode()
        const interval = Duration.toMillis(confirmationRules.resendInterval)
        const rows = yield* sql`INSERT INTO confirmation_codes AS c (user_id, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${userId}, ${codeHash(userId, code)}, ${new Date(now.ms + Duration.toMillis(confirmationRules.lifetime))}, 0, ${now.date})
          ON CONFLICT (user_id) DO UPDATE SET
            code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
          WHERE c.created_at <= ${new Date(now.ms - interval)}
          RETURNING c.user_id`
        if (rows.length > 0) return Either.right(code)
        // Only names the wait: the upsert above has already decided. A code deleted meanwhile
        // (confirmed) leaves the full interval, which errs on the side of waiting.
        const [last] = yield* sql<{ created_at: Date }>`SELECT created_at FROM confirmation_codes WHERE user_id = ${userId}`
        const sentAt = last?.created_at.getTime() ?? now.ms
        return Either.left(Duration.millis(Math.max(0, sentAt + interval - now.ms)))
      }).pipe(Effect.orDie, Effect.withSpan("ConfirmationCodes.replace", { attributes: { "user.id": userId } }))

    /**
     * Claims one try (counting it before the comparison), then consumes the code if it matches.
     * Run inside the caller's transaction, with whatever confirming changes.
     */
    const check = (userId: number, code: string) =>
      Effect.gen(function*() {
        const now = yield* clock
        const windowStart = new Date(now.ms - Duration.toMillis(confirmationRules.attemptWindow))
        const newWindow = sql`(c.failures_since IS NULL OR c.failures_since <= ${windowStart})`
        const [claimed] = yield* sql<{ code_hash: Buffer }>`UPDATE confirmation_codes c SET
            failed_attempts = CASE WHEN ${newWindow} THEN 1 ELSE c.failed_attempts + 1 END,
            failures_since = CASE WHEN ${newWindow} THEN ${now.date}::timestamptz ELSE c.failures_since END
          WHERE c.user_id = ${userId} AND c.expires_at > ${now.date}
            AND (${newWindow} OR c.failed_attempts < ${confirmationRules.maxWrongAttempts})
          RETURNING c.code_hash`
        if (claimed === undefined) return yield* whyNotClaimed(userId, now.ms, windowStart)
        const given = codeHash(userId, code.trim())
        if (!Buffer.from(claimed.code_hash).equals(given)) return { _tag: "Wrong" } as const
        const consumed = yield* sql`DELETE FROM confirmation_codes WHERE user_id = ${userId} AND code_hash = ${given} RETURNING user_id`
        return consumed.length > 0 ? { _tag: "Confirmed" } as const : { _tag: "NoCode" } as const
      }).pipe(Effect.orDie, Effect.withSpan("ConfirmationCodes.check", { attributes: { "user.id": userId } }))

    /** Only names the refusal: the claim above has already decided. */
    const whyNotClaimed = (userId: number, nowMs: number, windowStart: Date) =>
      Effect.map(
        sql<{ expires_at: Date; failed_attempts: number; failures_since: Date | null }>`
          SELECT expires_at, failed_attempts, failures_since FROM confirmation_codes WHERE user_id = ${userId}`,
        ([row]): CodeCheck => {
          if (row === undefined) return { _tag: "NoCode" }
          if (row.failed_attempts >= confirmationRules.maxWrongAttempts && row.failures_since !== null && row.failures_since > windowStart) {
            return { _tag: "TooManyTries", retryInMs: row.failures_since.getTime() - windowStart.getTime() }
          }
          return row.expires_at.getTime() <= nowMs ? { _tag: "Expired" } : { _tag: "NoCode" }
        }
      )

    return { create, replace, check } as const
  })
}) {}
