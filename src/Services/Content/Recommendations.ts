/**
 * Content recommendations (general §4.11; the algorithm and its reasons: docs/content.md). One SQL
 * statement of CTEs ranks the candidates and returns the top pieces with what counted; the nightly
 * `content.refresh_stats` job keeps the popularity figures it reads.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { defaultRecommendations, maxRecommendations, RecommendationList } from "../../Api/Content/Content.js"
import { type ContentType, type DifficultyLevel, difficultyRank, RecommendedPiece } from "../../Domain/Content/Content.js"
import { defineTask } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { Access, type Viewer } from "../Access/Access.js"
import { Schema } from "effect"
import { Assignees } from "./Assignees.js"
import { importLockKey } from "./ContentImport.js"
import { pieceColumns, pieceFieldsOf, type PieceRow } from "./Library.js"

interface RankedRow extends PieceRow {
  readonly score: number
  readonly popularity: number
  readonly fit: number
  readonly shared: ReadonlyArray<string> | null
  readonly signals: ReadonlyArray<string> | null
  readonly patient_age_group: string | null
}

/** The reasons a piece was suggested, in a fixed order. */
export const reasonsOf = (row: {
  readonly shared: ReadonlyArray<string> | null
  readonly signals: ReadonlyArray<string> | null
  readonly popularity: number
  readonly fit: number
  readonly difficulty_level: DifficultyLevel
  readonly age_group: string
  readonly patient_age_group: string | null
}): Array<string> => {
  const reasons: Array<string> = []
  if (row.shared !== null && row.shared.length > 0) reasons.push(`shares tags: ${row.shared.join(", ")}`)
  for (const label of row.signals ?? []) reasons.push(`matches a recent ${label} result`)
  if (row.popularity > 0) reasons.push("popular with other families")
  if (row.fit > 0) reasons.push(`${row.difficulty_level} level`)
  if (row.age_group !== "all" && row.age_group === row.patient_age_group) reasons.push(`for age group ${row.age_group}`)
  return reasons
}

/** A difficulty column's rank (`difficultyRank`: beginner 1 … advanced 3), as SQL. */
const rankOf = (column: string) =>
  `CASE ${column} ${Object.entries(difficultyRank).map(([level, rank]) => `WHEN '${level}' THEN ${rank}`).join(" ")} END`
const completedRank = rankOf("cp.difficulty_level")
const candidateRank = rankOf("c.difficulty_level")
/** The levels as a VALUES list: `('beginner'), …`. */
const levelValues = Object.keys(difficultyRank).map((level) => `('${level}')`).join(", ")

export class Recommendations extends Effect.Service<Recommendations>()("app/Recommendations", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ObjectStore
    const access = yield* Access
    const assignees = yield* Assignees
    const toFields = pieceFieldsOf(store)

    const forPatient = (
      caller: Viewer,
      query: { readonly patientId?: number | undefined; readonly limit?: number | undefined; readonly contentType?: ContentType | undefined }
    ) =>
      Effect.gen(function*() {
        const patientId = yield* access.defaultPatientFor(caller, query.patientId)
        const limit = Math.min(query.limit ?? defaultRecommendations, maxRecommendations)
        const contentType = query.contentType ?? null
        const { at, today } = yield* assignees.now
        const rows = yield* sql<RankedRow>`
          WITH patient AS (
            SELECT p.id, CASE
                WHEN p.date_of_birth IS NULL THEN NULL
                WHEN date_part('year', age(${today}::date, p.date_of_birth)) < 13 THEN 'child'
                WHEN date_part('year', age(${today}::date, p.date_of_birth)) < 18 THEN 'teen'
                ELSE 'adult' END AS age_group
            FROM patients p WHERE p.id = ${patientId}
          ),
          history AS (
            SELECT up.content_piece_id, up.status, up.rating FROM content_user_pieces up WHERE up.patient_id = ${patientId}
          ),
          history_weights AS (
            SELECT pt.tag_id, sum(CASE
                WHEN h.status = 'completed' AND h.rating >= 4 THEN 2
                WHEN h.status = 'completed' AND (h.rating IS NULL OR h.rating = 3) THEN 1
                WHEN h.status = 'skipped' OR (h.status = 'completed' AND h.rating <= 2) THEN -1
                ELSE 0 END) AS weight
            FROM history h JOIN content_piece_tags pt ON pt.piece_id = h.content_piece_id
            GROUP BY pt.tag_id
          ),
          -- Questionnaire signals: the latest completed response of each instrument at most 180 days old,
          -- weighed by the rules in content_signal_rules (its score or a subscale within a rule's range).
          latest_responses AS (
            SELECT DISTINCT ON (q.slug) q.slug, qr.score, qr.subscales
            FROM questionnaire_responses qr JOIN questionnaires q ON q.id = qr.questionnaire_id
            WHERE qr.patient_id = ${patientId} AND qr.status IN ('completed', 'submitted', 'reviewed')
              AND qr.completed_at >= ${at}::timestamptz - interval '180 days'
            ORDER BY q.slug, qr.completed_at DESC, qr.id DESC
          ),
          signal_weights AS (
            SELECT t.id AS tag_id, r.weight, r.questionnaire_label AS label
            FROM latest_responses lr JOIN content_signal_rules r ON r.questionnaire_slug = lr.slug
              CROSS JOIN LATERAL (SELECT CASE
                WHEN r.measure = 'score' THEN lr.score::numeric
                WHEN jsonb_typeof(lr.subscales -> r.measure) = 'number' THEN (lr.subscales ->> r.measure)::numeric
                END AS value) v
              JOIN content_tags t ON t.slug = r.tag_slug
            WHERE v.value >= r.min_value AND (r.max_value IS NULL OR v.value <= r.max_value)
          ),
          tag_weights AS (
            SELECT w.tag_id, sum(w.weight) AS weight, sum(w.weight) FILTER (WHERE w.label IS NULL) AS history_weight
            FROM (SELECT tag_id, weight, NULL::text AS label FROM history_weights
                  UNION ALL SELECT tag_id, weight, label FROM signal_weights) w
            GROUP BY w.tag_id
          ),
          level AS (
            SELECT coalesce(max(${sql.literal(completedRank)}), 1) AS highest
            FROM history h JOIN content_pieces cp ON cp.id = h.content_piece_id WHERE h.status = 'completed'
          ),
          -- Tags that move a score (a tag whose weights cancel out, or one only seen on open assignments,
          -- adds 0). Candidates carrying one are the only ones whose affinity can differ from 0, so each
          -- is scored in full: its weights summed over all its tags, divided by their count.
          weighing_tags AS (SELECT tag_id FROM tag_weights WHERE weight <> 0),
          weighted AS (
            SELECT cp.id, cp.created_at, cp.difficulty_level, cp.popularity, 3.0 * sum(tw.weight) / count(*) AS affinity
            FROM content_pieces cp CROSS JOIN patient
              JOIN content_piece_tags pt ON pt.piece_id = cp.id LEFT JOIN tag_weights tw ON tw.tag_id = pt.tag_id
            WHERE cp.id IN (SELECT x.piece_id FROM content_piece_tags x JOIN weighing_tags w ON w.tag_id = x.tag_id)
              AND cp.published AND (cp.age_group = 'all' OR cp.age_group = patient.age_group)
              AND (${contentType}::text IS NULL OR cp.content_type = ${contentType})
              AND NOT EXISTS (SELECT 1 FROM history h WHERE h.content_piece_id = cp.id)
            GROUP BY cp.id
          ),
          -- Every other candidate scores popularity + 0.5 × fit, and within one age group and level that
          -- follows content_pieces_ranking_idx (popularity, newest, lowest id): the first few of each of
          -- those six streams, as many as the limit, hold every such piece that can reach the top.
          streams AS (
            SELECT s.* FROM (SELECT 'all' AS age_group UNION ALL SELECT age_group FROM patient) g
              CROSS JOIN (VALUES ${sql.literal(levelValues)}) AS l(difficulty_level)
              CROSS JOIN LATERAL (
                SELECT cp.id, cp.created_at, cp.difficulty_level, cp.popularity, NULL::numeric AS affinity
                FROM content_pieces cp
                WHERE cp.published AND cp.age_group = g.age_group AND cp.difficulty_level = l.difficulty_level
                  AND (${contentType}::text IS NULL OR cp.content_type = ${contentType})
                  AND NOT EXISTS (SELECT 1 FROM history h WHERE h.content_piece_id = cp.id)
                  AND NOT EXISTS (SELECT 1 FROM content_piece_tags x JOIN weighing_tags w ON w.tag_id = x.tag_id WHERE x.piece_id = cp.id)
                ORDER BY cp.popularity DESC, cp.created_at DESC, cp.id
                LIMIT ${limit}
              ) s
          ),
          -- Fit: a level at most one above the highest the patient completed.
          fitted AS (
            SELECT c.*, CASE WHEN ${sql.literal(candidateRank)} <= level.highest + 1 THEN 1 ELSE 0 END AS fit
            FROM (SELECT * FROM weighted UNION ALL SELECT * FROM streams) c CROSS JOIN level
          ),
          ranked AS (
            SELECT c.id, c.created_at, coalesce(c.affinity, 0) + c.popularity + 0.5 * c.fit AS score, c.popularity, c.fit
            FROM fitted c
            ORDER BY score DESC, c.created_at DESC, c.id ASC
            LIMIT ${limit}
          )
          -- What counted, for the returned pieces only.
          SELECT ${sql.literal(pieceColumns)}, r.score::float8 AS score, r.popularity::float8 AS popularity, r.fit,
            (SELECT array_agg(t.name ORDER BY tw.history_weight DESC, t.name)
              FROM content_piece_tags x JOIN tag_weights tw ON tw.tag_id = x.tag_id JOIN content_tags t ON t.id = x.tag_id
              WHERE x.piece_id = r.id AND tw.history_weight > 0) AS shared,
            (SELECT array_agg(DISTINCT sw.label ORDER BY sw.label) FROM signal_weights sw JOIN content_piece_tags x ON x.tag_id = sw.tag_id
              WHERE x.piece_id = r.id AND sw.weight > 0) AS signals,
            (SELECT age_group FROM patient) AS patient_age_group
          FROM ranked r JOIN content_pieces cp ON cp.id = r.id
          ORDER BY r.score DESC, r.created_at DESC, r.id ASC`.pipe(Effect.orDie)
        const pieces = yield* Effect.forEach(rows, (row) =>
          Effect.map(toFields(row), (fields) =>
            RecommendedPiece.make({ ...fields, score: Math.round(row.score * 10_000) / 10_000, reasons: reasonsOf(row) }, true)))
        yield* Effect.annotateCurrentSpan({ "recommendations.count": pieces.length })
        return RecommendationList.make({ content_pieces: pieces })
      }).pipe(Effect.withSpan("Recommendations.forPatient", { attributes: { "patient.id": query.patientId ?? 0 } }))

    /**
     * Completions of each piece in the last 90 days (content_piece_stats) and its popularity
     * ln(1 + n) / ln(1 + max), written onto the piece where it changed (the ranking index reads it):
     * one statement, safe to run twice. It holds the import's lock, so an import and the refresh
     * never update the same pieces in opposite orders.
     */
    const refreshStats = sql.withTransaction(Effect.gen(function*() {
      const { at } = yield* assignees.now
      yield* sql`SELECT pg_advisory_xact_lock(${importLockKey})`
      const rows = yield* sql<{ pieces: number }>`
        WITH counts AS (
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
      const pieces = rows[0]?.pieces ?? 0
      yield* Effect.annotateCurrentSpan({ "content.pieces": pieces })
      return pieces
    })).pipe(Effect.orDie, Effect.withSpan("Recommendations.refreshStats"))

    return { forPatient, refreshStats } as const
  })
}) {}

/** Nightly (`src/Layers/Http/Content/index.ts`): the popularity figures recommendations read. */
export const refreshContentStats = defineTask({
  name: "content.refresh_stats",
  payload: Schema.Struct({}),
  run: () => Effect.flatMap(Recommendations, (r) => r.refreshStats).pipe(Effect.asVoid)
})
