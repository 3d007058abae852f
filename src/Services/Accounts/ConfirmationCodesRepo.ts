/**
 * The only SQL on `confirmation_codes` (ARCHITECTURE "Persistence"): one live code per user,
 * stored hashed. Each write is one atomic statement whose returned rows tell `ConfirmationCodes`
 * what happened; the instants come from its clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Hash = Schema.Uint8ArrayFromSelf

const NewCode = Schema.Struct({
  userId: Schema.Number,
  codeHash: Hash,
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf
})
export type NewCode = typeof NewCode.Type

/** What the code row says when a try could not be claimed. */
export const CodeState = Schema.Struct({
  expires_at: Schema.DateFromSelf,
  failed_attempts: Schema.Int,
  failures_since: Schema.NullOr(Schema.DateFromSelf)
})

const TryClaim = Schema.Struct({
  userId: Schema.Number,
  now: Schema.DateFromSelf,
  windowStart: Schema.DateFromSelf,
  maxWrongAttempts: Schema.Int
})

export class ConfirmationCodesRepo extends Effect.Service<ConfirmationCodesRepo>()("app/ConfirmationCodesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: NewCode,
      execute: (code) =>
        sql`INSERT INTO confirmation_codes (user_id, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${code.userId}, ${code.codeHash}, ${code.expiresAt}, 0, ${code.createdAt})`
    })

    const replaceIfDue = SqlSchema.findOne({
      Request: Schema.Struct({ code: NewCode, sentBefore: Schema.DateFromSelf }),
      Result: Schema.Struct({ user_id: Schema.Number }),
      execute: ({ code, sentBefore }) =>
        sql`INSERT INTO confirmation_codes AS c (user_id, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${code.userId}, ${code.codeHash}, ${code.expiresAt}, 0, ${code.createdAt})
          ON CONFLICT (user_id) DO UPDATE SET
            code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
          WHERE c.created_at <= ${sentBefore}
          RETURNING c.user_id`
    })

    const sentAt = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ created_at: Schema.DateFromSelf }),
      execute: (userId) => sql`SELECT created_at FROM confirmation_codes WHERE user_id = ${userId}`
    })

    const claimTry = SqlSchema.findOne({
      Request: TryClaim,
      Result: Schema.Struct({ code_hash: Hash }),
      execute: ({ maxWrongAttempts, now, userId, windowStart }) => {
        const newWindow = sql`(c.failures_since IS NULL OR c.failures_since <= ${windowStart})`
        return sql`UPDATE confirmation_codes c SET
            failed_attempts = CASE WHEN ${newWindow} THEN 1 ELSE c.failed_attempts + 1 END,
            failures_since = CASE WHEN ${newWindow} THEN ${now}::timestamptz ELSE c.failures_since END
          WHERE c.user_id = ${userId} AND c.expires_at > ${now}
            AND (${newWindow} OR c.failed_attempts < ${maxWrongAttempts})
          RETURNING c.code_hash`
      }
    })

    const consume = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.Number, codeHash: Hash }),
      Result: Schema.Struct({ user_id: Schema.Number }),
      execute: ({ codeHash, userId }) =>
        sql`DELETE FROM confirmation_codes WHERE user_id = ${userId} AND code_hash = ${codeHash} RETURNING user_id`
    })

    const state = SqlSchema.findOne({
      Request: Schema.Number,
      Result: CodeState,
      execute: (userId) => sql`SELECT expires_at, failed_attempts, failures_since FROM confirmation_codes WHERE user_id = ${userId}`
    })

    const deleteOf = SqlSchema.void({
      Request: Schema.Number,
      execute: (userId) => sql`DELETE FROM confirmation_codes WHERE user_id = ${userId}`
    })

    return {
      insert: (code: NewCode) => orDefect(insert(code)),
      /**
       * Stores `code` unless the last one was created after `sentBefore`; whether it was stored
       * (only then may it be sent). The wrong-try count is kept.
       */
      replaceIfDue: (code: NewCode, sentBefore: Date) => Effect.map(orDefect(replaceIfDue({ code, sentBefore })), Option.isSome),
      /** When the user's current code was created. */
      sentAt: (userId: number) => Effect.map(orDefect(sentAt(userId)), Option.map((row) => row.created_at)),
      /**
       * Counts one try against a live code (a new window after `windowStart`; refused at
       * `maxWrongAttempts` within one) and returns the stored hash to compare with; None when no
       * try was claimed.
       */
      claimTry: (request: typeof TryClaim.Type) => Effect.map(orDefect(claimTry(request)), Option.map((row) => row.code_hash)),
      /** Deletes the code if it is this one; whether it was. */
      consume: (userId: number, codeHash: Uint8Array) => Effect.map(orDefect(consume({ userId, codeHash })), Option.isSome),
      state: (userId: number) => orDefect(state(userId)),
      deleteOf: (userId: number) => orDefect(deleteOf(userId))
    } as const
  })
}) {}
