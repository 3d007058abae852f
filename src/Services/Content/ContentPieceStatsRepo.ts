/**
 * The only SQL on `content_piece_stats` (ARCHITECTURE "Persistence"), and the popularity it puts on
 * `content_pieces` in the same statement (the ranking index reads it there).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

export class ContentPieceStatsRepo extends Effect.Service<ContentPieceStatsRepo>()("app/ContentPieceStatsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const refresh = SqlSchema.single({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ pieces: Schema.Int }),
      execute: (at) =>
        sql`WITH counts AS (
            SELECT cp.id AS piece_id, count(up.id)::int AS n
            FROM content_pieces cp LEFT JOIN content_user_pieces up ON up.content_piece_id = cp.id AND up.status = 'completed'
              AND up.completed_at >= ${at}::timestamptz - interval '90 days'
            GROUP BY cp.id
          ),
          top AS (SELECT coalesce(max(n), 0) AS max FROM counts),
          figures AS (
            SELECT c.piece_id, c.n, CASE WHEN top.max = 0 THEN 0 ELSE least(1, ln(1 + c.n) / ln(1 + top.max)) END AS popularity
            FROM counts c CROSS JOIN top
          ),
          ranked AS (
            UPDATE content_pieces cp SET popularity = f.popularity FROM figures f
            WHERE cp.id = f.piece_id AND cp.popularity IS DISTINCT FROM f.popularity
            RETURNING 1
          ),
          written AS (
            INSERT INTO content_piece_stats (piece_id, completions_90d, refreshed_at)
            SELECT f.piece_id, f.n, ${at} FROM figures f
            ON CONFLICT (piece_id) DO UPDATE SET completions_90d = excluded.completions_90d, refreshed_at = excluded.refreshed_at
            RETURNING 1
          )
          SELECT count(*)::int AS pieces FROM written`
    })

    return {
      /**
       * Completions of each piece in the 90 days before `at` and its popularity
       * ln(1 + n) / ln(1 + max), written onto the piece where it changed: one statement, safe to
       * run twice. Returns how many pieces were counted.
       */
      refresh: (at: Date) => Effect.map(orDefect(refresh(at)), (row) => row.pieces)
    } as const
  })
}) {}
