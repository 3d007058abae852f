/**
 * The content library's reads (general §4.11): tags, published collections and pieces. A stored
 * piece's `url` (and thumbnail) is a signed ObjectStore link valid 30 minutes.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { CollectionList, contentUrlMinutes, PieceList, TagList } from "../../Api/Content/Content.js"
import { notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  type AgeGroup, ContentCollection, ContentPiece, ContentTag, type ContentType, type DifficultyLevel, TagRef
} from "../../Domain/Content/Content.js"
import type { ContentCollectionId, ContentPieceId, ContentTagId } from "../../Domain/Ids.js"
import { ObjectStore } from "../ObjectStore.js"

/** Free text as stored: trimmed, and null when blank. */
export const blankToNull = (text: string | null | undefined): string | null => {
  const trimmed = text?.trim() ?? ""
  return trimmed === "" ? null : trimmed
}

export interface PieceRow {
  readonly id: number
  readonly title: string
  readonly description: string | null
  readonly content_type: ContentType
  readonly duration_minutes: number | null
  readonly external_url: string | null
  readonly object_key: string | null
  readonly thumbnail_external_url: string | null
  readonly thumbnail_object_key: string | null
  readonly age_group: AgeGroup
  readonly difficulty_level: DifficultyLevel
  readonly created_at: Date
  readonly tags: ReadonlyArray<{ readonly id: number; readonly name: string }>
}

/** The columns of a piece row (`cp`), its tags as JSON by name. */
export const pieceColumns = `cp.id, cp.title, cp.description, cp.content_type, cp.duration_minutes, cp.external_url, cp.object_key,
  cp.thumbnail_external_url, cp.thumbnail_object_key, cp.age_group, cp.difficulty_level, cp.created_at,
  coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
    FROM content_piece_tags pt JOIN content_tags t ON t.id = pt.tag_id WHERE pt.piece_id = cp.id), '[]'::json) AS tags`

const tagRefs = (tags: PieceRow["tags"]) => tags.map((t) => TagRef.make({ id: t.id as ContentTagId, name: t.name }))

/** What a piece row shows: links signed for stored files. */
export const pieceFieldsOf = (store: ObjectStore["Type"]) => (row: PieceRow) =>
  Effect.gen(function*() {
    const lifetime = `${contentUrlMinutes} minutes` as const
    const url = row.external_url ?? (yield* store.signedUrl(row.object_key!, lifetime))
    const thumbnail = row.thumbnail_external_url ??
      (row.thumbnail_object_key === null ? null : yield* store.signedUrl(row.thumbnail_object_key, lifetime))
    return {
      id: row.id as ContentPieceId,
      title: row.title,
      description: row.description,
      content_type: row.content_type,
      duration_minutes: row.duration_minutes,
      url,
      thumbnail_url: thumbnail,
      age_group: row.age_group,
      difficulty_level: row.difficulty_level,
      tags: tagRefs(row.tags),
      created_at: row.created_at
    }
  })

interface CollectionRow {
  readonly id: number
  readonly title: string
  readonly description: string | null
  readonly age_group: AgeGroup
  readonly estimated_duration: number | null
  readonly piece_count: number
  readonly created_at: Date
  readonly tags: PieceRow["tags"]
}

export interface PieceCriteria {
  readonly collectionId?: number | undefined
  readonly tagId?: number | undefined
  readonly contentType?: ContentType | undefined
}

export class ContentLibrary extends Effect.Service<ContentLibrary>()("app/ContentLibrary", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ObjectStore
    const toFields = pieceFieldsOf(store)
    const toPiece = (row: PieceRow) => Effect.map(toFields(row), (fields) => ContentPiece.make(fields, true))

    const tags = (category: string | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const where = category === undefined ? sql`TRUE` : sql`category = ${category}`
        const rows = yield* sql<{ id: number; name: string; display_name: string; category: string | null; description: string | null; color: string | null; created_at: Date }>`
          SELECT id, name, display_name, category, description, color, created_at FROM content_tags WHERE ${where}
          ORDER BY name, id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM content_tags WHERE ${where}`
        return TagList.make({
          tags: rows.map((r) => ContentTag.make({ ...r, id: r.id as ContentTagId }, true)),
          pagination: paginationOf(request, count?.count ?? 0)
        })
      }).pipe(Effect.orDie, Effect.withSpan("ContentLibrary.tags"))

    const collections = (criteria: { readonly tagId?: number | undefined; readonly ageGroup?: AgeGroup | undefined }, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [sql`c.published`]
        if (criteria.ageGroup !== undefined) clauses.push(sql`c.age_group IN (${criteria.ageGroup}, 'all')`)
        if (criteria.tagId !== undefined) {
          clauses.push(sql`EXISTS (SELECT 1 FROM content_collection_tags ct WHERE ct.collection_id = c.id AND ct.tag_id = ${criteria.tagId})`)
        }
        const where = sql.and(clauses)
        const rows = yield* sql<CollectionRow>`
          SELECT c.id, c.title, c.description, c.age_group, c.estimated_duration, c.created_at,
            (SELECT count(*)::int FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id
              WHERE ccp.collection_id = c.id AND cp.published) AS piece_count,
            coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
              FROM content_collection_tags ct JOIN content_tags t ON t.id = ct.tag_id WHERE ct.collection_id = c.id), '[]'::json) AS tags
          FROM content_collections c WHERE ${where}
          ORDER BY c.created_at DESC, c.id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM content_collections c WHERE ${where}`
        return CollectionList.make({
          collections: rows.map((r) => ContentCollection.make({ ...r, id: r.id as ContentCollectionId, tags: tagRefs(r.tags) }, true)),
          pagination: paginationOf(request, count?.count ?? 0)
        })
      }).pipe(Effect.orDie, Effect.withSpan("ContentLibrary.collections"))

    const pieces = (criteria: PieceCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [sql`cp.published`]
        if (criteria.contentType !== undefined) clauses.push(sql`cp.content_type = ${criteria.contentType}`)
        if (criteria.tagId !== undefined) {
          clauses.push(sql`EXISTS (SELECT 1 FROM content_piece_tags x WHERE x.piece_id = cp.id AND x.tag_id = ${criteria.tagId})`)
        }
        const inCollection = criteria.collectionId === undefined ? sql`` : sql`JOIN content_collection_pieces ccp
          ON ccp.piece_id = cp.id AND ccp.collection_id = ${criteria.collectionId}
          JOIN content_collections c ON c.id = ccp.collection_id AND c.published`
        const order = criteria.collectionId === undefined ? sql`cp.created_at DESC, cp.id DESC` : sql`ccp.position, cp.id`
        const where = sql.and(clauses)
        const rows = yield* sql<PieceRow>`SELECT ${sql.literal(pieceColumns)} FROM content_pieces cp ${inCollection}
          WHERE ${where} ORDER BY ${order} LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM content_pieces cp ${inCollection} WHERE ${where}`
        return PieceList.make({ pieces: yield* Effect.forEach(rows, toPiece), pagination: paginationOf(request, count?.count ?? 0) })
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("ContentLibrary.pieces"))

    const piece = (id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<PieceRow>`SELECT ${sql.literal(pieceColumns)} FROM content_pieces cp WHERE cp.id = ${id} AND cp.published`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("Content piece"))
        return { piece: yield* toPiece(row) }
      }).pipe(Effect.withSpan("ContentLibrary.piece", { attributes: { "content_piece.id": id } }))

    return { tags, collections, pieces, piece } as const
  })
}) {}
