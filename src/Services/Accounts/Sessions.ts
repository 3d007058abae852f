/**
 * Session tokens that end (issue 7 point 5): an idle timeout and an absolute lifetime, both from
 * `AppConfig`. Times come from Effect's `Clock` and reach SQL as parameters (never `now()`), so
 * tests move them with `TestClock`. Raw tokens are never stored: rows are keyed by their SHA-256.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import type { Role } from "../../Domain/Accounts/User.js"
import { AppConfig } from "../AppConfig.js"
import { prepared } from "../Repository.js"

export interface SessionLimits {
  /** Unused for this long, a token stops working. */
  readonly idle: Duration.Duration
  /** This long after sign-in, a token stops working however busy it is. */
  readonly maxAge: Duration.Duration
}

/**
 * How stale `last_used_at` may get before the lookup moves it: once a minute at most, and never
 * more than half the idle timeout, so a session in steady use cannot idle out between touches.
 */
export const touchInterval = (limits: SessionLimits): Duration.Duration =>
  Duration.min(Duration.minutes(1), Duration.unsafeDivide(limits.idle, 2))

/** The instants a token's timestamps are compared with at `now` (epoch milliseconds). */
export const sessionCutoffs = (limits: SessionLimits, now: number) => ({
  now: new Date(now),
  /** Last used at or before this: idle too long. */
  idleBefore: new Date(now - Duration.toMillis(limits.idle)),
  /** Created at or before this: too old. */
  createdBefore: new Date(now - Duration.toMillis(limits.maxAge)),
  /** Last used before this: record this use. */
  touchBefore: new Date(now - Duration.toMillis(touchInterval(limits)))
})

export class Sessions extends Effect.Service<Sessions>()("app/Sessions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const limits: SessionLimits = {
      idle: Duration.minutes(config.sessionIdleMinutes),
      maxAge: Duration.hours(config.sessionMaxHours)
    }
    const cutoffs = Effect.map(Clock.currentTimeMillis, (now) => sessionCutoffs(limits, now))
    // Every authenticated request sends the lookup: prepared.
    const lookupPrepared = prepared("session_lookup")

    /**
     * The live session's user, in one statement: an expired token is deleted and matches nothing
     * (the caller answers 401 as for an unknown token); a live one has `last_used_at` moved only
     * when it is older than the touch interval. Both writes are conditional UPDATE/DELETE on the
     * row itself, so concurrent requests with one token settle in PostgreSQL (a second touch
     * re-checks the condition after the first commits and writes nothing).
     */
    const lookup = (tokenHash: Buffer) =>
      Effect.gen(function*() {
        const at = yield* cutoffs
        const rows = yield* lookupPrepared(sql<{ id: number; role: Role }>`
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
        return Option.fromNullable(rows[0])
      }).pipe(Effect.orDie)

    /**
     * Records a new session (inside the caller's transaction, if any) with the clock's time, and
     * drops this user's expired tokens: tokens that are never presented again go at the owner's
     * next sign-in rather than lingering.
     */
    const start = (tokenHash: Buffer, userId: number) =>
      Effect.gen(function*() {
        const at = yield* cutoffs
        yield* sql`DELETE FROM user_tokens WHERE user_id = ${userId}
          AND (last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore})`
        yield* sql`INSERT INTO user_tokens (token_hash, user_id, created_at, last_used_at)
          VALUES (${tokenHash}, ${userId}, ${at.now}, ${at.now})`
      }).pipe(Effect.orDie)

    /** Ends one session (sign out). */
    const end = (tokenHash: Buffer) =>
      sql`DELETE FROM user_tokens WHERE token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

    /** Ends every session of the user, or every one but `keep` (the session making the change). */
    const endAll = (userId: number, keep?: Buffer) =>
      (keep === undefined
        ? sql`DELETE FROM user_tokens WHERE user_id = ${userId}`
        : sql`DELETE FROM user_tokens WHERE user_id = ${userId} AND token_hash <> ${keep}`
      ).pipe(Effect.asVoid, Effect.orDie)

    /**
     * Deletes every expired token (the hourly `sessions.sweep_expired` job): tokens never
     * presented again after expiring would otherwise stay until their owner signs in again.
     */
    const sweepExpired = Effect.gen(function*() {
      const at = yield* cutoffs
      const [row] = yield* sql<{ deleted: number }>`WITH swept AS (
          DELETE FROM user_tokens WHERE last_used_at <= ${at.idleBefore} OR created_at <= ${at.createdBefore} RETURNING 1
        ) SELECT count(*)::int AS deleted FROM swept`
      return row?.deleted ?? 0
    }).pipe(Effect.orDie)

    return { limits, lookup, start, end, endAll, sweepExpired } as const
  })
}) {}
