/** The list kit's builder, a sort name that stands for several expressions (by name: last, then first), against real PostgreSQL. */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { pageRequest } from "../../src/Api/Pagination.js"
import { pgClientLayer } from "../../src/Layers/Database.js"
import { makeListPage, type SortDirection } from "../../src/Services/Lists.js"
import { freshDatabase } from "../support/database.js"

/** id, last, first (nullable): last names tie, and so do last and first together (3 and 5), case aside. */
const people: ReadonlyArray<readonly [number, string, string | null]> = [
  [1, "Lopez", "Mia"],
  [2, "adams", "Zoe"],
  [3, "lopez", "ana"],
  [4, "Adams", "Bo"],
  [5, "LOPEZ", "Ana"],
  [6, "Lopez", null]
]

const People = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE people (id int PRIMARY KEY, last_name text NOT NULL, first_name text)`
  yield* sql`INSERT INTO people ${sql.insert(people.map(([id, last_name, first_name]) => ({ id, last_name, first_name })))}`
}))

const Database = Layer.unwrapScoped(Effect.map(freshDatabase({ migrated: false }), ({ url }) => pgClientLayer(Redacted.make(url), 2)))

const Row = Schema.Struct({ id: Schema.Int })

const list = (options: { readonly dir: SortDirection; readonly by?: "name" | "id"; readonly nulls?: "FIRST" | "LAST"; readonly page?: number; readonly size?: number }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = { id: sql`id`, name: [sql`lower(last_name)`, sql`lower(first_name)`] }
    return yield* listPage({
      select: sql`id`,
      from: sql`people`,
      row: Row,
      sort: { columns, by: options.by ?? "name", dir: options.dir, id: columns.id, nulls: options.nulls }
    }, pageRequest({ page: options.page, page_size: options.size ?? 10 }, 10))
  })

const ids = (page: { readonly rows: ReadonlyArray<{ readonly id: number }> }) => page.rows.map((r) => r.id)

describe("makeListPage, a compound sort", () => {
  layer(People.pipe(Layer.provideMerge(Database)))((it) => {
    it.effect("orders by each expression in turn, all in the direction asked, then by id in it too", () =>
      Effect.gen(function*() {
        // adams bo, adams zoe, lopez ana (3, 5), lopez mia, lopez null (PostgreSQL: nulls last ascending)
        expect(ids(yield* list({ dir: "ASC" }))).toEqual([4, 2, 3, 5, 1, 6])
        expect(ids(yield* list({ dir: "DESC" }))).toEqual([6, 1, 5, 3, 2, 4])
      }))

    it.effect("nulls apply to every expression of the name", () =>
      Effect.gen(function*() {
        expect(ids(yield* list({ dir: "ASC", nulls: "FIRST" }))).toEqual([4, 2, 6, 3, 5, 1])
        expect(ids(yield* list({ dir: "DESC", nulls: "LAST" }))).toEqual([1, 5, 3, 6, 2, 4])
      }))

    it.effect("pages neither repeat nor skip a row, and the count is every row", () =>
      Effect.gen(function*() {
        for (const dir of ["ASC", "DESC"] as const) {
          const whole = ids(yield* list({ dir }))
          const pages = [yield* list({ dir, size: 2, page: 1 }), yield* list({ dir, size: 2, page: 2 }), yield* list({ dir, size: 2, page: 3 })]
          expect(pages.flatMap(ids), dir).toEqual(whole)
          expect(pages[0]!.pagination).toEqual({ current_page: 1, total_pages: 3, total_count: 6, per_page: 2 })
        }
      }))

    it.effect("a single expression that is the id is ordered once", () =>
      Effect.gen(function*() {
        expect(ids(yield* list({ dir: "DESC", by: "id" }))).toEqual([6, 5, 4, 3, 2, 1])
      }))
  })
})
