/**
 * The only SQL on `content_pieces`, their tag links `content_piece_tags` and their places in
 * collections `content_collection_pieces` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. The import writes a bundle with a few set-based statements over one JSON text each.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type PageRequest } from "../../Api/Pagination.js"
import { AgeGroup, ContentType, DifficultyLevel, difficultyRank } from "../../Domain/Content/Content.js"
import { ContentPieceId, ContentTagId } from "../../Domain/Ids.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

/** Tags as the statements aggregate them: `[{ id, name }]` by name. */
export const TagRefs = Schema.Array(Schema.Struct({ id: ContentTagId, name: Schema.String }))

export const PieceRow = Schema.Struct({
  id: ContentPieceId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  content_type: ContentType,
  duration_minutes: Schema.NullOr(Schema.Int),
  external_url: Schema.NullOr(Schema.String),
  object_key: Schema.NullOr(Schema.String),
  thumbnail_external_url: Schema.NullOr(Schema.String),
  thumbnail_object_key: Schema.NullOr(Schema.String),
  age_group: AgeGroup,
  difficulty_level: DifficultyLevel,
  created_at: Schema.DateFromSelf,
  tags: TagRefs
})
export type PieceRow = typeof PieceRow.Type

/** The columns of a piece row (`cp`), its tags as JSON by name. */
export const pieceColumns = `cp.id, cp.title, cp.description, cp.content_type, cp.duration_minutes, cp.external_url, cp.object_key,
  cp.thumbnail_external_url, cp.thumbnail_object_key, cp.age_group, cp.difficulty_level, cp.created_at,
  coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
    FROM content_piece_tags pt JOIN content_tags t ON t.id = pt.tag_id WHERE pt.piece_id = cp.id), '[]'::json) AS tags`

/** A piece as a bundle states it (the import compares and writes these). */
export const PieceValues = Schema.Struct({
  slug: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  content_type: Schema.String,
  duration_minutes: Schema.NullOr(Schema.Int),
  external_url: Schema.NullOr(Schema.String),
  object_key: Schema.NullOr(Schema.String),
  thumbnail_external_url: Schema.NullOr(Schema.String),
  thumbnail_object_key: Schema.NullOr(Schema.String),
  age_group: Schema.String,
  difficulty_level: Schema.String,
  published: Schema.Boolean,
  /** Tag slugs, sorted. */
  tags: Schema.Array(Schema.String),
  /** `slug:position` of each collection, sorted. */
  memberships: Schema.Array(Schema.String)
})
export type PieceValues = typeof PieceValues.Type

export type CurrentPiece = PieceValues & { readonly id: number; readonly assigned: boolean }

const isText = (value: unknown): value is string => typeof value === "string"
const isTextOrNull = (value: unknown) => value === null || typeof value === "string"
const isTexts = (value: unknown) => Array.isArray(value) && value.every(isText)
const pieceTextColumns = ["slug", "title", "content_type", "age_group", "difficulty_level"] as const
const pieceNullableTextColumns = [
  "description", "external_url", "object_key", "thumbnail_external_url", "thumbnail_object_key"
] as const

/**
 * A row of the whole library, checked column by column: the same answer as decoding it with
 * `PieceValues` plus `id` and `assigned` (those schemas transform nothing), without the parser's
 * per-value cost — the import and the export read every piece (10,000 took ~1 s to decode).
 */
const CurrentPiece = Schema.declare(
  (row: unknown): row is CurrentPiece => {
    if (typeof row !== "object" || row === null) return false
    const r = row as Record<string, unknown>
    return Number.isSafeInteger(r.id) && typeof r.published === "boolean" && typeof r.assigned === "boolean" &&
      (r.duration_minutes === null || Number.isSafeInteger(r.duration_minutes)) &&
      pieceTextColumns.every((column) => isText(r[column])) && pieceNullableTextColumns.every((column) => isTextOrNull(r[column])) &&
      isTexts(r.tags) && isTexts(r.memberships)
  },
  { identifier: "CurrentPiece", description: "A content piece's bundle values with its id and whether it was assigned" }
)

export interface PieceCriteria {
  readonly collectionId?: number | undefined
  readonly tagId?: number | undefined
  readonly contentType?: ContentType | undefined
}

/** A recommended piece and what counted (docs/content.md). */
export const RankedRow = Schema.Struct({
  ...PieceRow.fields,
  score: Schema.Number,
  popularity: Schema.Number,
  fit: Schema.Number,
  /** Names of the tags the patient's history weighs up. */
  shared: Schema.NullOr(Schema.Array(Schema.String)),
  /** Labels of the questionnaire results that weigh the piece's tags up. */
  signals: Schema.NullOr(Schema.Array(Schema.String)),
  patient_age_group: Schema.NullOr(Schema.String)
})
export type RankedRow = typeof RankedRow.Type

const Ranking = Schema.Struct({
  patientId: Schema.Number,
  /** Today in the clinic's zone (ages) and now (the 180-day window of questionnaire results). */
  today: Schema.String,
  at: Schema.DateFromSelf,
  limit: Schema.Int,
  contentType: Schema.NullOr(ContentType)
})
export type Ranking = typeof Ranking.Type

/** A difficulty column's rank (`difficultyRank`: beginner 1 … advanced 3), as SQL. */
const rankOf = (column: string) =>
  `CASE ${column} ${Object.entries(difficultyRank).map(([level, rank]) => `WHEN '${level}' THEN ${rank}`).join(" ")} END`
const completedRank = rankOf("cp.difficulty_level")
const candidateRank = rankOf("c.difficulty_level")
/** The levels as a VALUES list: `('beginner'), …`. */
const levelValues = Object.keys(difficultyRank).map((level) => `('${level}')`).join(", ")

const Ids = Schema.Array(Schema.Number)
const IdsAt = Schema.Struct({ ids: Ids, at: Schema.DateFromSelf })
/** Bulk writes take their rows as one JSON text: a bundle is encoded once, not value by value. */
const Json = Schema.Struct({ json: Schema.String })
const Bulk = Schema.Struct({ json: Schema.String, slugs: Schema.Array(Schema.String), at: Schema.DateFromSelf })

/** Any fixed key of ours: the advisory lock that serialises imports and the nightly popularity refresh. */
const libraryLockKey = 23_0021

export class ContentPiecesRepo extends Effect.Service<ContentPiecesRepo>()("app/ContentPiecesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(pieceColumns)
    const orders = { created_at: sql`cp.created_at`, position: sql`ccp.position` }

    /** A page of published pieces: in the collection's order with `collectionId`, else newest first. */
    const publishedPage = (criteria: PieceCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from: criteria.collectionId === undefined ? sql`content_pieces cp` : sql`content_pieces cp JOIN content_collection_pieces ccp
          ON ccp.piece_id = cp.id AND ccp.collection_id = ${criteria.collectionId}
          JOIN content_collections c ON c.id = ccp.collection_id AND c.published`,
        row: PieceRow,
        filters: [
          sql`cp.published`,
          criteria.contentType !== undefined && sql`cp.content_type = ${criteria.contentType}`,
          criteria.tagId !== undefined && sql`EXISTS (SELECT 1 FROM content_piece_tags x WHERE x.piece_id = cp.id AND x.tag_id = ${criteria.tagId})`
        ],
        sort: criteria.collectionId === undefined
          ? { columns: orders, by: "created_at", dir: "DESC", id: sql`cp.id` }
          : { columns: orders, by: "position", dir: "ASC", id: sql`cp.id` }
      }, page)

    const findPublished = SqlSchema.findOne({
      Request: Schema.Number,
      Result: PieceRow,
      execute: (id) => sql`SELECT ${columns} FROM content_pieces cp WHERE cp.id = ${id} AND cp.published`
    })

    const findPublishedIdsOf = SqlSchema.findAll({
      Request: Schema.Number,
      Result: Schema.Struct({ piece_id: ContentPieceId }),
      execute: (collectionId) =>
        sql`SELECT ccp.piece_id FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id AND cp.published
          WHERE ccp.collection_id = ${collectionId} ORDER BY ccp.position, ccp.piece_id`
    })

    const findEmpty = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ empty: Schema.Boolean }),
      execute: () => sql`SELECT NOT EXISTS (SELECT 1 FROM content_pieces) AS empty`
    })

    const lockLibrary = SqlSchema.void({ Request: Schema.Void, execute: () => sql`SELECT pg_advisory_xact_lock(${libraryLockKey})` })

    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: CurrentPiece,
      execute: () =>
        sql`SELECT cp.id, cp.slug, cp.title, cp.description, cp.content_type, cp.duration_minutes, cp.external_url, cp.object_key,
          cp.thumbnail_external_url, cp.thumbnail_object_key, cp.age_group, cp.difficulty_level, cp.published,
          coalesce((SELECT array_agg(t.slug ORDER BY t.slug COLLATE "C") FROM content_piece_tags pt JOIN content_tags t ON t.id = pt.tag_id
            WHERE pt.piece_id = cp.id), '{}') AS tags,
          coalesce((SELECT array_agg(c.slug || ':' || ccp.position ORDER BY c.slug COLLATE "C") FROM content_collection_pieces ccp
            JOIN content_collections c ON c.id = ccp.collection_id WHERE ccp.piece_id = cp.id), '{}') AS memberships,
          EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = cp.id) AS assigned
        FROM content_pieces cp ORDER BY cp.bundle_position NULLS LAST, cp.id`
    })

    const unpublishAssigned = SqlSchema.void({
      Request: IdsAt,
      execute: ({ at, ids }) =>
        sql`UPDATE content_pieces SET published = false, updated_at = ${at}
          WHERE id IN ${sql.in(ids)} AND published AND EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = content_pieces.id)`
    })

    const deleteUnassigned = SqlSchema.void({
      Request: Ids,
      execute: (ids) =>
        sql`DELETE FROM content_pieces cp WHERE id IN ${sql.in(ids)}
          AND NOT EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = cp.id)`
    })

    // What is kept leaves its collections and goes to the end of the export.
    const leaveCollections = SqlSchema.void({
      Request: Ids,
      execute: (ids) => sql`DELETE FROM content_collection_pieces WHERE piece_id IN ${sql.in(ids)}`
    })
    const unposition = SqlSchema.void({
      Request: Ids,
      execute: (ids) => sql`UPDATE content_pieces SET bundle_position = NULL WHERE id IN ${sql.in(ids)}`
    })

    const upsert = SqlSchema.void({
      Request: Bulk,
      execute: ({ at, json }) =>
        sql`INSERT INTO content_pieces (slug, title, description, content_type, duration_minutes, external_url, object_key,
            thumbnail_external_url, thumbnail_object_key, age_group, difficulty_level, published)
          SELECT x.slug, x.title, x.description, x.content_type, x.duration_minutes, x.external_url, x.object_key,
            x.thumbnail_external_url, x.thumbnail_object_key, x.age_group, x.difficulty_level, x.published
          FROM json_to_recordset(${json}::json)
            AS x(slug text, title text, description text, content_type text, duration_minutes integer, external_url text,
              object_key text, thumbnail_external_url text, thumbnail_object_key text, age_group text, difficulty_level text,
              published boolean, n integer)
          ORDER BY x.n
          ON CONFLICT (slug) DO UPDATE SET title = excluded.title, description = excluded.description,
            content_type = excluded.content_type, duration_minutes = excluded.duration_minutes, external_url = excluded.external_url,
            object_key = excluded.object_key, thumbnail_external_url = excluded.thumbnail_external_url,
            thumbnail_object_key = excluded.thumbnail_object_key, age_group = excluded.age_group,
            difficulty_level = excluded.difficulty_level, published = excluded.published, updated_at = ${at}`
    })
    const untag = SqlSchema.void({
      Request: Bulk,
      execute: ({ slugs }) => sql`DELETE FROM content_piece_tags WHERE piece_id IN (SELECT id FROM content_pieces WHERE slug IN ${sql.in(slugs)})`
    })
    const tag = SqlSchema.void({
      Request: Bulk,
      execute: ({ json }) =>
        sql`INSERT INTO content_piece_tags (piece_id, tag_id)
          SELECT p.id, t.id FROM json_to_recordset(${json}::json) AS x(slug text, tags text[])
          JOIN content_pieces p ON p.slug = x.slug CROSS JOIN LATERAL unnest(x.tags) AS s(slug)
          JOIN content_tags t ON t.slug = s.slug`
    })
    const unplace = SqlSchema.void({
      Request: Bulk,
      execute: ({ slugs }) =>
        sql`DELETE FROM content_collection_pieces WHERE piece_id IN (SELECT id FROM content_pieces WHERE slug IN ${sql.in(slugs)})`
    })
    const place = SqlSchema.void({
      Request: Bulk,
      execute: ({ json }) =>
        sql`INSERT INTO content_collection_pieces (collection_id, piece_id, position)
          SELECT c.id, p.id, split_part(m.entry, ':', 2)::int FROM json_to_recordset(${json}::json) AS x(slug text, memberships text[])
          JOIN content_pieces p ON p.slug = x.slug CROSS JOIN LATERAL unnest(x.memberships) AS m(entry)
          JOIN content_collections c ON c.slug = split_part(m.entry, ':', 1)`
    })

    const setBundlePositions = SqlSchema.void({
      Request: Json,
      execute: ({ json }) =>
        sql`UPDATE content_pieces cp SET bundle_position = x.n
          FROM json_to_recordset(${json}::json) AS x(slug text, n integer)
          WHERE cp.slug = x.slug AND cp.bundle_position IS DISTINCT FROM x.n`
    })

    /**
     * The patient's top pieces, best first, with what counted: one statement of CTEs ranks the
     * candidates (the algorithm and its reasons: docs/content.md); the nightly refresh keeps the
     * popularity figures it reads.
     */
    const findRanked = SqlSchema.findAll({
      Request: Ranking,
      Result: RankedRow,
      execute: ({ at, contentType, limit, patientId, today }) =>
        sql`WITH patient AS (
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
          SELECT ${columns}, r.score::float8 AS score, r.popularity::float8 AS popularity, r.fit,
            (SELECT array_agg(t.name ORDER BY tw.history_weight DESC, t.name)
              FROM content_piece_tags x JOIN tag_weights tw ON tw.tag_id = x.tag_id JOIN content_tags t ON t.id = x.tag_id
              WHERE x.piece_id = r.id AND tw.history_weight > 0) AS shared,
            (SELECT array_agg(DISTINCT sw.label ORDER BY sw.label) FROM signal_weights sw JOIN content_piece_tags x ON x.tag_id = sw.tag_id
              WHERE x.piece_id = r.id AND sw.weight > 0) AS signals,
            (SELECT age_group FROM patient) AS patient_age_group
          FROM ranked r JOIN content_pieces cp ON cp.id = r.id
          ORDER BY r.score DESC, r.created_at DESC, r.id ASC`
    })

    return {
      publishedPage,
      recommended: (ranking: Ranking) => orDefect(findRanked(ranking)),
      findPublished: (id: number) => orDefect(findPublished(id)),
      isPublished: (id: number) => Effect.map(orDefect(findPublished(id)), Option.isSome),
      /** The published pieces of a collection, in its order. */
      publishedIdsOf: (collectionId: number) =>
        Effect.map(orDefect(findPublishedIdsOf(collectionId)), (rows) => rows.map((row) => row.piece_id)),
      /** Whether the library has no piece yet. */
      isEmpty: Effect.map(orDefect(findEmpty(undefined)), (row) => row.empty),
      /** Holds the library's advisory lock to the end of the transaction: imports and the popularity refresh never interleave. */
      lockLibrary: orDefect(lockLibrary(undefined)),
      /** Every piece with its bundle values and whether someone was assigned it, in the bundle's order. */
      all: orDefect(findAll(undefined)),
      /** Of `ids`, the published ones someone was assigned become unpublished (they are kept). */
      unpublishAssigned: (ids: ReadonlyArray<number>, at: Date) => ids.length === 0 ? Effect.void : orDefect(unpublishAssigned({ ids, at })),
      /** Of `ids`, the ones nobody was assigned are removed; the rest leave their collections and the bundle's order. */
      deleteUnassigned: (ids: ReadonlyArray<number>) =>
        ids.length === 0 ? Effect.void : orDefect(Effect.all([deleteUnassigned(ids), leaveCollections(ids), unposition(ids)], { discard: true })),
      /**
       * Creates or updates the pieces by slug (in the given order, so new ones are created in it)
       * and replaces their tags and places in collections with the named ones.
       */
      upsert: (pieces: ReadonlyArray<PieceValues>, at: Date) => {
        if (pieces.length === 0) return Effect.void
        const request = { json: JSON.stringify(pieces.map((p, n) => ({ ...p, n }))), slugs: pieces.map((p) => p.slug), at }
        return orDefect(Effect.all([upsert(request), untag(request), tag(request), unplace(request), place(request)], { discard: true }))
      },
      /** Each named piece's place in the bundle (1-based), where it changed, so an export lists pieces as imported. */
      setBundlePositions: (slugs: ReadonlyArray<string>) =>
        slugs.length === 0
          ? Effect.void
          : orDefect(setBundlePositions({ json: JSON.stringify(slugs.map((slug, i) => ({ slug, n: i + 1 }))) }))
    } as const
  })
}) {}
