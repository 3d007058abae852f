/**
 * The only SQL on `user_tokens`, the sessions (ARCHITECTURE "Persistence"): rows are keyed by the
 * SHA-256 of the token, never the token. The instants a statement compares with come from
 * `Sessions` (the Effect clock), never SQL `now()`.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Role } from "../../Domain/Accounts/User.js"
import { UserId } from "../../Domain/Ids.js"
import { orDefect, prepared, SqlSchema } from "../Repository.js"

const Hash = Schema.Uint8ArrayFromSelf

/** The instants a token's timestamps are compared with (see `sessionCutoffs`). */
export const SessionCutoffs = Schema.Struct({
  now: Schema.DateFromSelf,
  /** Last used at or before this: idle too long. */
  idleBefore: Schema.DateFromSelf,
  /** Created at or before this: too old. */
  createdBefore: Schema.DateFromSelf,
  /** Last used before this: record this use. */
  touchBefore: Schema.DateFromSelf
})
export type SessionCutoffs = typeof SessionCutoffs.Type

/** The user a live session belongs to. */
export const SessionUser = Schema.Struct({ id: UserId, role: Role })

export class UserTokensRepo extends Effect.Service<UserTokensRepo>()("app/UserTokensRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The token lookup, run on every request: one fixed-shape statement. An expired token is
     * deleted and matches nothing; a live one has `last_used_at` moved only when it is older than
     * the touch interval. Both writes are conditional UPDATE/DELETE on the row itself, so
     * concurrent requests with one token settle in PostgreSQL (a second touch re-checks the
     * condition after the first commits and writes nothing).
     */
    // Named (prepared): its plan is fixed, and planning is most of its server time.
    const sessionLookup = prepared("session_lookup")
    const lookup = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Hash, at: SessionCutoffs }),
      Result: SessionUser,
      execute: ({ at, tokenHash }) =>
        sessionLookup(sql`
          WITH token AS (
            SELECT user_id, (last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore}) AS expired
            FROM user_tokens WHERE token_hash = ${tokenHash}
          ), expired AS (
            DELETE FROM user_tokens WHERE token_hash = ${tokenHash}
              AND (last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore})
          ), touched AS (
            UPDATE user_tokens SET last_used_at = ${at.now} WHERE token_hash = ${tokenHash}
              AND last_used_at < ${at.touchBefore} AND last_used_at > ${at.idleBefore} AND created_at > ${at.createdBefore}
          )
          SELECT u.id, u.role FROM token t JOIN users u ON u.id = t.user_id
          WHERE NOT t.expired AND u.status = 'active' AND u.deleted_at IS NULL`)
    })

    const deleteExpiredOf = SqlSchema.void({
      Request: Schema.Struct({ userId: Schema.Number, at: SessionCutoffs }),
      execute: ({ at, userId }) =>
        sql`DELETE FROM user_tokens WHERE user_id = ${userId}
          AND (last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore})`
    })

    const insert = SqlSchema.void({
      Request: Schema.Struct({ tokenHash: Hash, userId: Schema.Number, at: Schema.DateFromSelf }),
      execute: ({ at, tokenHash, userId }) =>
        sql`INSERT INTO user_tokens (token_hash, user_id, created_at, last_used_at) VALUES (${tokenHash}, ${userId}, ${at}, ${at})`
    })

    const deleteOne = SqlSchema.void({
      Request: Hash,
      execute: (tokenHash) => sql`DELETE FROM user_tokens WHERE token_hash = ${tokenHash}`
    })

    const deleteAllOf = SqlSchema.void({
      Request: Schema.Struct({ userId: Schema.Number, keep: Schema.NullOr(Hash) }),
      execute: ({ keep, userId }) =>
        keep === null
          ? sql`DELETE FROM user_tokens WHERE user_id = ${userId}`
          : sql`DELETE FROM user_tokens WHERE user_id = ${userId} AND token_hash <> ${keep}`
    })

    const sweepExpired = SqlSchema.single({
      Request: SessionCutoffs,
      Result: Schema.Struct({ deleted: Schema.Int }),
      execute: (at) =>
        sql`WITH swept AS (
            DELETE FROM user_tokens WHERE last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore} RETURNING 1
          ) SELECT count(*)::int AS deleted FROM swept`
    })

    return {
      /** The live session's user (id and role); None for an unknown, expired or inactive one. */
      lookup: (tokenHash: Uint8Array, at: SessionCutoffs) => orDefect(lookup({ tokenHash, at })),
      /** Drops the user's expired tokens. */
      deleteExpiredOf: (userId: number, at: SessionCutoffs) => orDefect(deleteExpiredOf({ userId, at })),
      /** A new session started at `at`. */
      insert: (tokenHash: Uint8Array, userId: number, at: Date) => orDefect(insert({ tokenHash, userId, at })),
      delete: (tokenHash: Uint8Array) => orDefect(deleteOne(tokenHash)),
      /** Every session of the user, or every one but `keep`. */
      deleteAllOf: (userId: number, keep?: Uint8Array) => orDefect(deleteAllOf({ userId, keep: keep ?? null })),
      /** Deletes every expired token; how many went. */
      sweepExpired: (at: SessionCutoffs) => Effect.map(orDefect(sweepExpired(at)), (row) => row.deleted)
    } as const
  })
}) {}
