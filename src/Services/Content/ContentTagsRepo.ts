/** The only SQL on `content_tags` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type PageRequest } from "../../Api/Pagination.js"
import { ContentTagId } from "../../Domain/Ids.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const TagRow = Schema.Struct({
  id: ContentTagId,
  name: Schema.String,
  display_name: Schema.String,
  category: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  color: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})

/** A tag as a bundle states it (the import compares and writes these). */
export const TagValues = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  display_name: Schema.String,
  category: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  color: Schema.NullOr(Schema.String)
})
export type TagValues = typeof TagValues.Type

const CurrentTag = Schema.Struct({ id: Schema.Number, ...TagValues.fields })
/** Bulk writes take their rows as one JSON text: a bundle is encoded once, not value by value. */
const Bulk = Schema.Struct({ json: Schema.String, at: Schema.DateFromSelf })

export class ContentTagsRepo extends Effect.Service<ContentTagsRepo>()("app/ContentTagsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const byName = { name: sql`name` }

    /** A page of tags by name, of one category when given. */
    const list = (category: string | undefined, page: PageRequest) =>
      listPage({
        select: sql`id, name, display_name, category, description, color, created_at`,
        from: sql`content_tags`,
        row: TagRow,
        filters: [category !== undefined && sql`category = ${category}`],
        sort: { columns: byName, by: "name", dir: "ASC", id: sql`id` }
      }, page)

    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: CurrentTag,
      execute: () => sql`SELECT id, slug, name, display_name, category, description, color FROM content_tags ORDER BY name, id`
    })

    const deleteOthers = SqlSchema.void({
      Request: Schema.Array(Schema.String),
      execute: (slugs) => sql`DELETE FROM content_tags WHERE NOT (slug = ANY(${slugs}::text[]))`
    })

    const upsert = SqlSchema.void({
      Request: Bulk,
      execute: ({ at, json }) =>
        sql`INSERT INTO content_tags (slug, name, display_name, category, description, color)
          SELECT x.slug, x.name, x.display_name, x.category, x.description, x.color
          FROM json_to_recordset(${json}::json)
            AS x(slug text, name text, display_name text, category text, description text, color text)
          ON CONFLICT (slug) DO UPDATE SET name = excluded.name, display_name = excluded.display_name, category = excluded.category,
            description = excluded.description, color = excluded.color, updated_at = ${at}`
    })

    return {
      list,
      /** Every tag with its bundle values, by name (the import's and export's view). */
      all: orDefect(findAll(undefined)),
      /** Removes every tag whose slug is not in `slugs` (their piece and collection links go with them). */
      deleteOthers: (slugs: ReadonlyArray<string>) => orDefect(deleteOthers(slugs)),
      /** Creates or updates the tags by slug in one statement. */
      upsert: (tags: ReadonlyArray<TagValues>, at: Date) => tags.length === 0 ? Effect.void : orDefect(upsert({ json: JSON.stringify(tags), at }))
    } as const
  })
}) {}
