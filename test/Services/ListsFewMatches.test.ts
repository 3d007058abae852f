/** The list kit's builder sorting few matches apart (`sortFewMatches`), against real PostgreSQL. */
import { SqlClient, Statement } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { pageRequest } from "../../src/Api/Pagination.js"
import { pgClientLayer } from "../../src/Layers/Database.js"
import { type ListFilter, makeListPage, type SortDirection } from "../../src/Services/Lists.js"
import { freshDatabase } from "../support/database.js"

/** id, score, owner: scores tie so the id tie-break decides; owner 3 has no name row (left join). */
const items: ReadonlyArray<readonly [number, number, number]> = [
  [1, 10, 1],
  [2, 20, 1],
  [3, 10, 2],
  [4, 30, 2],
  [5, 20, 1],
  [6, 10, 3],
  [7, 30, 2]
]

const Items = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE items (id int PRIMARY KEY, score int NOT NULL, owner int NOT NULL)`
  yield* sql`INSERT INTO items ${sql.insert(items.map(([id, score, owner]) => ({ id, score, owner })))}`
  yield* sql`CREATE TABLE owners (id int PRIMARY KEY, name text NOT NULL)`
  yield* sql`INSERT INTO owners VALUES (1, 'one'), (2, 'two')`
}))

const Database = Layer.unwrapScoped(Effect.map(freshDatabase({ migrated: false }), ({ url }) => pgClientLayer(Redacted.make(url), 2)))

const ItemRow = Schema.Struct({ id: Schema.Int, score: Schema.Int, owner_name: Schema.NullOr(Schema.String) })

/** At most this many matches are sorted apart in these tests. */
const atMost = 3

/** A page of items with their owner's name, and the statements it took. */
const list = (options: {
  readonly filters: (sql: SqlClient.SqlClient) => ReadonlyArray<ListFilter>
  readonly few: boolean
  readonly page?: number
  readonly size?: number
  readonly by?: "id" | "score"
  readonly dir?: SortDirection
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const statements: Array<string> = []
    const columns = { id: sql`i.id`, score: sql`i.score` }
    const joins = sql`LEFT JOIN owners o ON o.id = i.owner`
    const listed = yield* listPage({
      select: sql`i.id, i.score, o.name AS owner_name`,
      from: sql`items i ${joins}`,
      countFrom: sql`items i`,
      row: ItemRow,
      filters: options.filters(sql),
      sort: { columns, by: options.by ?? "score", dir: options.dir ?? "ASC", id: columns.id },
      sortFewMatches: options.few ? { atMost, table: "i", joins } : undefined
    }, pageRequest({ page: options.page, page_size: options.size ?? 10 }, 10)).pipe(
      Statement.withTransformer((statement) => Effect.sync(() => (statements.push(statement.compile()[0]), statement)))
    )
    return { ...listed, statements }
  })

const ids = (page: { readonly rows: ReadonlyArray<{ readonly id: number }> }) => page.rows.map((r) => r.id)
const scoreIs = (score: number) => (sql: SqlClient.SqlClient) => [sql`i.score = ${score}`]
const ownerIs = (owner: number) => (sql: SqlClient.SqlClient) => [sql`i.owner = ${owner}`]

describe("makeListPage, few matches sorted apart", () => {
  layer(Items.pipe(Layer.provideMerge(Database)))((it) => {
    it.effect("at most `atMost` matches: counted and sorted in one statement, joined columns included", () =>
      Effect.gen(function*() {
        // Score 10: items 1, 3 and 6 (owner 3 has no name).
        const few = yield* list({ filters: scoreIs(10), few: true, dir: "DESC", by: "id" })
        expect(few.rows).toEqual([
          { id: 6, score: 10, owner_name: null },
          { id: 3, score: 10, owner_name: "two" },
          { id: 1, score: 10, owner_name: "one" }
        ])
        expect(few.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 3, per_page: 10 })
        expect(few.sortedFewMatches).toBe(true)
        expect(few.statements).toHaveLength(1)
        const second = yield* list({ filters: scoreIs(10), few: true, size: 2, page: 2 })
        expect(ids(second)).toEqual([6])
        expect(second.pagination).toEqual({ current_page: 2, total_pages: 2, total_count: 3, per_page: 2 })
        expect(second.statements).toHaveLength(1)
      }))

    it.effect("more matches: the exact count and the page statement after the capped one", () =>
      Effect.gen(function*() {
        // Owner 1: items 1, 2 and 5; owner 1 or 2: six items, past `atMost`.
        const many = yield* list({ filters: (sql) => [sql`i.owner IN (1, 2)`], few: true, size: 4, by: "score", dir: "DESC" })
        expect(ids(many)).toEqual([7, 4, 5, 2])
        expect(many.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 6, per_page: 4 })
        expect(many.sortedFewMatches).toBe(false)
        expect(many.statements).toHaveLength(3)
        expect(many.rows[0]).toEqual({ id: 7, score: 30, owner_name: "two" })
      }))

    it.effect("a page past the matches: no rows and the true count, without the page statement", () =>
      Effect.gen(function*() {
        const pastFew = yield* list({ filters: ownerIs(1), few: true, size: 2, page: 3 })
        expect(pastFew.rows).toEqual([])
        expect(pastFew.pagination).toEqual({ current_page: 3, total_pages: 2, total_count: 3, per_page: 2 })
        expect(pastFew.sortedFewMatches).toBe(false)
        expect(pastFew.statements).toHaveLength(2)
        const pastMany = yield* list({ filters: () => [], few: true, size: 5, page: 3 })
        expect(pastMany.rows).toEqual([])
        expect(pastMany.pagination).toEqual({ current_page: 3, total_pages: 2, total_count: 7, per_page: 5 })
        expect(pastMany.statements).toHaveLength(2)
        const none = yield* list({ filters: scoreIs(99), few: true })
        expect(none.rows).toEqual([])
        expect(none.pagination.total_count).toBe(0)
      }))

    it.effect("every page of every filter, sort and direction answers as without the option", () =>
      Effect.gen(function*() {
        const filters = [scoreIs(10), scoreIs(20), ownerIs(1), ownerIs(2), () => [], scoreIs(99)]
        for (const filter of filters) {
          for (const by of ["id", "score"] as const) {
            for (const dir of ["ASC", "DESC"] as const) {
              for (const size of [2, 4]) {
                for (const page of [1, 2, 3]) {
                  const options = { filters: filter, by, dir, size, page }
                  const apart = yield* list({ ...options, few: true })
                  const plain = yield* list({ ...options, few: false })
                  expect({ rows: apart.rows, pagination: apart.pagination }, JSON.stringify({ by, dir, size, page }))
                    .toEqual({ rows: plain.rows, pagination: plain.pagination })
                }
              }
            }
          }
        }
      }))
  })
})
