/**
 * Session tokens that end: an idle timeout and an absolute lifetime, both from `AppConfig`.
 * Times come from Effect's `Clock` and reach SQL as parameters (never `now()`), so tests move
 * them with `TestClock`. Raw tokens are never stored: rows are keyed by their SHA-256.
 */
import { Duration, Effect } from "effect"
import { AppConfig } from "../AppConfig.js"
import * as Time from "../Time.js"
import { UserTokensRepo } from "./UserTokensRepo.js"

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
    const tokens = yield* UserTokensRepo
    const config = yield* AppConfig
    const limits: SessionLimits = {
      idle: Duration.minutes(config.sessionIdleMinutes),
      maxAge: Duration.hours(config.sessionMaxHours)
    }
    const cutoffs = Effect.map(Time.nowMillis, (now) => sessionCutoffs(limits, now))

    /**
     * The live session's user, in one statement (`UserTokensRepo.lookup`): an expired token is
     * deleted and matches nothing (the caller answers 401 as for an unknown token); a live one
     * has `last_used_at` moved only when it is older than the touch interval.
     */
    const lookup = (tokenHash: Buffer) => Effect.flatMap(cutoffs, (at) => tokens.lookup(tokenHash, at))

    /**
     * Records a new session (inside the caller's transaction, if any) with the clock's time, and
     * drops this user's expired tokens: tokens that are never presented again go at the owner's
     * next sign-in rather than lingering.
     */
    const start = (tokenHash: Buffer, userId: number) =>
      Effect.gen(function*() {
        const at = yield* cutoffs
        yield* tokens.deleteExpiredOf(userId, at)
        yield* tokens.insert(tokenHash, userId, at.now)
      })

    /** Ends one session (sign out). */
    const end = (tokenHash: Buffer) => tokens.delete(tokenHash)

    /** Ends every session of the user, or every one but `keep` (the session making the change). */
    const endAll = (userId: number, keep?: Buffer) => tokens.deleteAllOf(userId, keep)

    /**
     * Deletes every expired token (the hourly `sessions.sweep_expired` job): tokens never
     * presented again after expiring would otherwise stay until their owner signs in again.
     */
    const sweepExpired = Effect.flatMap(cutoffs, tokens.sweepExpired)

    return { limits, lookup, start, end, endAll, sweepExpired } as const
  }),
  dependencies: [UserTokensRepo.Default]
}) {}
