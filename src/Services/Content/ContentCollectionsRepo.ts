/**
 * The only SQL on `content_collections` and their tag links `content_collection_tags` (ARCHITECTURE
 * "Persistence"): rows decoded, SQL errors defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type PageRequest } from "../../Api/Pagination.js"
import { AgeGroup } from "../../Domain/Content/Content.js"
import { ContentCollectionId } from "../../Domain/Ids.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { TagRefs } from "./ContentPiecesRepo.js"

export const CollectionRow = Schema.Struct({
  id: ContentCollectionId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  age_group: AgeGroup,
  estimated_duration: Schema.NullOr(Schema.Int),
  piece_count: Schema.Int,
  created_at: Schema.DateFromSelf,
  tags: TagRefs
})

/** A collection as a bundle states it (the import compares and writes these). */
export const CollectionValues = Schema.Struct({
  slug: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  age_group: Schema.String,
  estimated_duration: Schema.NullOr(Schema.Int),
  published: Schema.Boolean,
  /** Tag slugs, sorted. */
  tags: Schema.Array(Schema.String)
})
export type CollectionValues = typeof CollectionValues.Type

const CurrentCollection = Schema.Struct({ id: Schema.Number, ...CollectionValues.fields, assigned: Schema.Boolean })
export type CurrentCollection = typeof CurrentCollection.Type

export interface CollectionCriteria {
  readonly tagId?: number | undefined
  readonly ageGroup?: AgeGroup | undefined
}

const Ids = Schema.Array(Schema.Number)
const IdsAt = Schema.Struct({ ids: Ids, at: Schema.DateFromSelf })
/** Bulk writes take their rows as one JSON text: a bundle is encoded once, not value by value. */
const Bulk = Schema.Struct({ json: Schema.String, slugs: Schema.Array(Schema.String), at: Schema.DateFromSelf })

export class ContentCollectionsRepo extends Effect.Service<ContentCollectionsRepo>()("app/ContentCollectionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const newestFirst = { created_at: sql`c.created_at` }

    /** A page of published collections, newest first. */
    const publishedPage = (criteria: CollectionCriteria, page: PageRequest) =>
      listPage({
        select: sql`c.id, c.title, c.description, c.age_group, c.estimated_duration, c.created_at,
          (SELECT count(*)::int FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id
            WHERE ccp.collection_id = c.id AND cp.published) AS piece_count,
          coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
            FROM content_collection_tags ct JOIN content_tags t ON t.id = ct.tag_id WHERE ct.collection_id = c.id), '[]'::json) AS tags`,
        from: sql`content_collections c`,
        row: CollectionRow,
        filters: [
          sql`c.published`,
          criteria.ageGroup !== undefined && sql`c.age_group IN (${criteria.ageGroup}, 'all')`,
          criteria.tagId !== undefined &&
          sql`EXISTS (SELECT 1 FROM content_collection_tags ct WHERE ct.collection_id = c.id AND ct.tag_id = ${criteria.tagId})`
        ],
        sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`c.id` }
      }, page)

    const findPublished = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ id: Schema.Number }),
      execute: (id) => sql`SELECT id FROM content_collections WHERE id = ${id} AND published`
    })

    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: CurrentCollection,
      execute: () =>
        sql`SELECT c.id, c.slug, c.title, c.description, c.age_group, c.estimated_duration, c.published,
          coalesce((SELECT array_agg(t.slug ORDER BY t.slug COLLATE "C") FROM content_collection_tags ct JOIN content_tags t ON t.id = ct.tag_id
            WHERE ct.collection_id = c.id), '{}') AS tags,
          EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = c.id) AS assigned
        FROM content_collections c ORDER BY c.created_at, c.id`
    })

    const unpublishAssigned = SqlSchema.void({
      Request: IdsAt,
      execute: ({ at, ids }) =>
        sql`UPDATE content_collections SET published = false, updated_at = ${at}
          WHERE id IN ${sql.in(ids)} AND published
            AND EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = content_collections.id)`
    })

    const deleteUnassigned = SqlSchema.void({
      Request: Ids,
      execute: (ids) =>
        sql`DELETE FROM content_collections c WHERE id IN ${sql.in(ids)}
          AND NOT EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = c.id)`
    })

    const upsert = SqlSchema.void({
      Request: Bulk,
      execute: ({ at, json }) =>
        sql`INSERT INTO content_collections (slug, title, description, age_group, estimated_duration, published)
          SELECT x.slug, x.title, x.description, x.age_group, x.estimated_duration, x.published
          FROM json_to_recordset(${json}::json)
            AS x(slug text, title text, description text, age_group text, estimated_duration integer, published boolean, n integer)
          ORDER BY x.n
          ON CONFLICT (slug) DO UPDATE SET title = excluded.title, description = excluded.description, age_group = excluded.age_group,
            estimated_duration = excluded.estimated_duration, published = excluded.published, updated_at = ${at}`
    })

    const untag = SqlSchema.void({
      Request: Bulk,
      execute: ({ slugs }) =>
        sql`DELETE FROM content_collection_tags WHERE collection_id IN (SELECT id FROM content_collections WHERE slug IN ${sql.in(slugs)})`
    })

    const tag = SqlSchema.void({
      Request: Bulk,
      execute: ({ json }) =>
        sql`INSERT INTO content_collection_tags (collection_id, tag_id)
          SELECT c.id, t.id FROM json_to_recordset(${json}::json) AS x(slug text, tags text[])
          JOIN content_collections c ON c.slug = x.slug CROSS JOIN LATERAL unnest(x.tags) AS s(slug)
          JOIN content_tags t ON t.slug = s.slug`
    })

    return {
      publishedPage,
      isPublished: (id: number) => Effect.map(orDefect(findPublished(id)), Option.isSome),
      /** Every collection with its bundle values and whether someone was assigned it, oldest first. */
      all: orDefect(findAll(undefined)),
      /** Of `ids`, the published ones someone was assigned become unpublished (they are kept). */
      unpublishAssigned: (ids: ReadonlyArray<number>, at: Date) => ids.length === 0 ? Effect.void : orDefect(unpublishAssigned({ ids, at })),
      /** Of `ids`, the ones nobody was assigned are removed. */
      deleteUnassigned: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.void : orDefect(deleteUnassigned(ids)),
      /**
       * Creates or updates the collections by slug (in the given order, so new ones are created
       * in it) and replaces their tags with the named ones.
       */
      upsert: (collections: ReadonlyArray<CollectionValues>, at: Date) => {
        if (collections.length === 0) return Effect.void
        const request = { json: JSON.stringify(collections.map((c, n) => ({ ...c, n }))), slugs: collections.map((c) => c.slug), at }
        return orDefect(Effect.all([upsert(request), untag(request), tag(request)], { discard: true }))
      }
    } as const
  })
}) {}
