/**
 * Fixed-window rate limits kept in PostgreSQL, so every instance counts the same hits. Bucket
 * keys are hashed: they may be built from client addresses or emails.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { createHash } from "node:crypto"

export class RateLimiter extends Effect.Service<RateLimiter>()("app/RateLimiter", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Counts one hit; true while the bucket is within `limit` hits per `window`. */
    const hit = (bucket: string, limit: number, window: Duration.DurationInput) =>
      Effect.gen(function*() {
        const windowMs = Duration.toMillis(window)
        const now = yield* Clock.currentTimeMillis
        const windowStart = new Date(now - (now % windowMs))
        const key = createHash("sha256").update(bucket).digest("hex")
        const rows = yield* sql<{ hits: number }>`
          INSERT INTO rate_limits (bucket, window_start, hits) VALUES (${key}, ${windowStart}, 1)
          ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1
          RETURNING hits`
        // Old windows are useless: drop them now and then rather than with a scheduler.
        if (Math.random() < 0.01) yield* sql`DELETE FROM rate_limits WHERE window_start < ${new Date(now - 86_400_000)}`
        return (rows[0]?.hits ?? 0) <= limit
      }).pipe(Effect.orDie, Effect.withSpan("RateLimiter.hit"))

    return { hit } as const
  })
}) {}
