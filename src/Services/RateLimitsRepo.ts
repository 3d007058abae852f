/** The only SQL on `rate_limits` (ARCHITECTURE "Persistence"): hit counters per bucket and window. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "./Repository.js"

const BucketWindow = Schema.Struct({ bucket: Schema.String, windowStart: Schema.DateFromSelf })

export class RateLimitsRepo extends Effect.Service<RateLimitsRepo>()("app/RateLimitsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One atomic upsert: the bucket's hits in this window, this one included. */
    const hit = SqlSchema.single({
      Request: BucketWindow,
      Result: Schema.Struct({ hits: Schema.Number }),
      execute: ({ bucket, windowStart }) =>
        sql`INSERT INTO rate_limits (bucket, window_start, hits) VALUES (${bucket}, ${windowStart}, 1)
          ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1
          RETURNING hits`
    })

    /** Takes one hit back, never below zero. */
    const unhit = SqlSchema.void({
      Request: BucketWindow,
      execute: ({ bucket, windowStart }) =>
        sql`UPDATE rate_limits SET hits = hits - 1
          WHERE bucket = ${bucket} AND window_start = ${windowStart} AND hits > 0`
    })

    /** Drops the windows that started before `before`. */
    const deleteBefore = SqlSchema.void({
      Request: Schema.DateFromSelf,
      execute: (before) => sql`DELETE FROM rate_limits WHERE window_start < ${before}`
    })

    return {
      hit: (bucket: string, windowStart: Date) => Effect.map(orDefect(hit({ bucket, windowStart })), (row) => row.hits),
      unhit: (bucket: string, windowStart: Date) => orDefect(unhit({ bucket, windowStart })),
      deleteBefore: (before: Date) => orDefect(deleteBefore(before))
    } as const
  })
}) {}
