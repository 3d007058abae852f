/**
 * The only SQL on `password_reset_tokens` (ARCHITECTURE "Persistence"): rows are keyed by the
 * SHA-256 of the token, never the token; a token is used once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Hash = Schema.Uint8ArrayFromSelf
const UserOf = Schema.Struct({ user_id: Schema.Number })
const LiveAt = Schema.Struct({ tokenHash: Hash, at: Schema.DateFromSelf })

export class PasswordResetTokensRepo extends Effect.Service<PasswordResetTokensRepo>()("app/PasswordResetTokensRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: Schema.Struct({ tokenHash: Hash, userId: Schema.Number, expiresAt: Schema.DateFromSelf }),
      execute: ({ expiresAt, tokenHash, userId }) =>
        sql`INSERT INTO password_reset_tokens (token_hash, user_id, expires_at) VALUES (${tokenHash}, ${userId}, ${expiresAt})`
    })

    const findLive = SqlSchema.findOne({
      Request: LiveAt,
      Result: UserOf,
      execute: ({ at, tokenHash }) =>
        sql`SELECT user_id FROM password_reset_tokens WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at}`
    })

    const claim = SqlSchema.findOne({
      Request: LiveAt,
      Result: UserOf,
      execute: ({ at, tokenHash }) =>
        sql`UPDATE password_reset_tokens SET used_at = ${at}
          WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at} RETURNING user_id`
    })

    const deleteOf = SqlSchema.void({
      Request: Schema.Struct({ userId: Schema.Number, unusedOnly: Schema.Boolean }),
      execute: ({ unusedOnly, userId }) =>
        unusedOnly
          ? sql`DELETE FROM password_reset_tokens WHERE user_id = ${userId} AND used_at IS NULL`
          : sql`DELETE FROM password_reset_tokens WHERE user_id = ${userId}`
    })

    const userIdOf = Option.map((row: typeof UserOf.Type) => row.user_id)

    return {
      insert: (tokenHash: Uint8Array, userId: number, expiresAt: Date) => orDefect(insert({ tokenHash, userId, expiresAt })),
      /** The user of a token that is unused and unexpired at `at`. */
      findLive: (tokenHash: Uint8Array, at: Date) => Effect.map(orDefect(findLive({ tokenHash, at })), userIdOf),
      /** Marks a live token used at `at` and returns its user; of concurrent claims one gets it. */
      claim: (tokenHash: Uint8Array, at: Date) => Effect.map(orDefect(claim({ tokenHash, at })), userIdOf),
      /** Deletes the user's tokens, or only the unused ones. */
      deleteOf: (userId: number, options: { readonly unusedOnly: boolean }) => orDefect(deleteOf({ userId, ...options }))
    } as const
  })
}) {}
