/** The list kit's builder against real PostgreSQL: counts, pages, order, filters, scope, decoding. */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { pageRequest } from "../../src/Api/Pagination.js"
import { pgClientLayer } from "../../src/Layers/Database.js"
import { type ListFilter, makeListPage, type SortDirection } from "../../src/Services/Lists.js"
import { freshDatabase } from "../support/database.js"

/** id, name, score, owner: scores tie (10 ×3, 20 ×2, 30 ×2) so the id tie-break decides. */
const items: ReadonlyArray<readonly [number, string, number, number]> = [
  [1, "alpha", 10, 1],
  [2, "bravo", 20, 1],
  [3, "charlie", 10, 2],
  [4, "delta", 30, 2],
  [5, "echo", 20, 1],
  [6, "foxtrot", 10, 1],
  [7, "golf", 30, 2]
]

const Items = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, score int NOT NULL, owner int NOT NULL)`
  yield* sql`INSERT INTO items ${sql.insert(items.map(([id, name, score, owner]) => ({ id, name, score, owner })))}`
}))

const Database = Layer.unwrapScoped(Effect.map(freshDatabase({ migrated: false }), ({ url }) => pgClientLayer(Redacted.make(url), 2)))

/** The score arrives as text and is decoded to a number: rows go through the schema. */
const ItemRow = Schema.Struct({ id: Schema.Int, name: Schema.String, score: Schema.NumberFromString })

const list = (options: {
  readonly page?: number
  readonly size?: number
  readonly by?: "id" | "score" | "name" | "unscored20"
  readonly dir?: SortDirection
  readonly nulls?: "FIRST" | "LAST"
  readonly filters?: ReadonlyArray<ListFilter>
  readonly owner?: number
  readonly concurrent?: boolean
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    // unscored20: the score, null where it is 20 (rows 2 and 5).
    const columns = { id: sql`i.id`, score: sql`i.score`, name: sql`lower(i.name)`, unscored20: sql`NULLIF(i.score, 20)` }
    return yield* listPage({
      select: sql`i.id, i.name, i.score::text AS score`,
      from: sql`items i`,
      row: ItemRow,
      scope: options.owner === undefined ? undefined : sql`i.owner = ${options.owner}`,
      filters: options.filters ?? [],
      sort: { columns, by: options.by ?? "id", dir: options.dir ?? "ASC", id: columns.id, nulls: options.nulls },
      ...(options.concurrent === undefined ? {} : { concurrent: options.concurrent })
    }, pageRequest({ page: options.page, page_size: options.size }, 3))
  })

const ids = (rows: ReadonlyArray<{ readonly id: number }>) => rows.map((r) => r.id)

/** Every page of a list, one after another, concatenated. */
const allPages = (options: Parameters<typeof list>[0] & { readonly size: number }) =>
  Effect.gen(function*() {
    const first = yield* list({ ...options, page: 1 })
    const pages = [first]
    for (let page = 2; page <= first.pagination.total_pages; page++) pages.push(yield* list({ ...options, page }))
    return pages.flatMap((p) => ids(p.rows))
  })

describe("makeListPage", () => {
  layer(Items.pipe(Layer.provideMerge(Database)))((it) => {
    it.effect("counts every match and returns the requested page, rows decoded", () =>
      Effect.gen(function*() {
        const first = yield* list({ size: 3 })
        expect(ids(first.rows)).toEqual([1, 2, 3])
        expect(first.rows[0]).toEqual({ id: 1, name: "alpha", score: 10 })
        expect(first.pagination).toEqual({ current_page: 1, total_pages: 3, total_count: 7, per_page: 3 })
        const last = yield* list({ size: 3, page: 3 })
        expect(ids(last.rows)).toEqual([7])
        expect(last.pagination).toEqual({ current_page: 3, total_pages: 3, total_count: 7, per_page: 3 })
        // The endpoint's default size applies without page_size.
        expect((yield* list({})).pagination.per_page).toBe(3)
      }))

    it.effect("a page past the end has no rows and the true count", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const beyond = yield* list({ size: 3, page: 10 })
        expect(beyond.rows).toEqual([])
        expect(beyond.pagination).toEqual({ current_page: 10, total_pages: 3, total_count: 7, per_page: 3 })
        const none = yield* list({ filters: [sql`FALSE`] })
        expect(none.rows).toEqual([])
        expect(none.pagination).toEqual({ current_page: 1, total_pages: 0, total_count: 0, per_page: 3 })
      }))

    it.effect("sorts by the mapped column in either direction, ties broken by id in the same direction", () =>
      Effect.gen(function*() {
        expect(ids((yield* list({ size: 7, by: "score", dir: "ASC" })).rows)).toEqual([1, 3, 6, 2, 5, 4, 7])
        expect(ids((yield* list({ size: 7, by: "score", dir: "DESC" })).rows)).toEqual([7, 4, 5, 2, 6, 3, 1])
        expect(ids((yield* list({ size: 7, by: "name", dir: "DESC" })).rows)).toEqual([7, 6, 5, 4, 3, 2, 1])
        expect(ids((yield* list({ size: 7, by: "id", dir: "DESC" })).rows)).toEqual([7, 6, 5, 4, 3, 2, 1])
      }))

    it.effect("pages of a sort with ties neither repeat nor skip a row", () =>
      Effect.gen(function*() {
        for (const dir of ["ASC", "DESC"] as const) {
          for (const size of [1, 2, 3]) {
            const whole = ids((yield* list({ size: 7, by: "score", dir })).rows)
            expect(yield* allPages({ size, by: "score", dir }), `${dir} by ${size}`).toEqual(whole)
          }
        }
      }))

    it.effect("nulls: rows without a sort value go where asked in both directions, PostgreSQL's default otherwise", () =>
      Effect.gen(function*() {
        const order = (dir: SortDirection, nulls?: "FIRST" | "LAST") =>
          Effect.map(list({ size: 10, by: "unscored20", dir, ...(nulls === undefined ? {} : { nulls }) }), (page) => ids(page.rows))
        expect(yield* order("ASC", "LAST")).toEqual([1, 3, 6, 4, 7, 2, 5])
        expect(yield* order("DESC", "LAST")).toEqual([7, 4, 6, 3, 1, 5, 2])
        expect(yield* order("ASC", "FIRST")).toEqual([2, 5, 1, 3, 6, 4, 7])
        expect(yield* order("DESC")).toEqual([5, 2, 7, 4, 6, 3, 1])
      }))

    it.effect("filters are ANDed; absent ones (false, null, undefined) are no condition", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tens = yield* list({ size: 10, filters: [sql`i.score = ${10}`, false, null, undefined] })
        expect(ids(tens.rows)).toEqual([1, 3, 6])
        expect(tens.pagination.total_count).toBe(3)
        const both = yield* list({ size: 10, filters: [sql`i.score = ${10}`, sql`i.name ILIKE ${"%o%"}`] })
        expect(ids(both.rows)).toEqual([6])
        expect(both.pagination.total_count).toBe(1)
        expect((yield* list({ size: 10, filters: [false, undefined] })).pagination.total_count).toBe(7)
      }))

    it.effect("the scope narrows the rows and the count, together with the filters", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const mine = yield* list({ size: 2, owner: 1 })
        expect(ids(mine.rows)).toEqual([1, 2])
        expect(mine.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 4, per_page: 2 })
        const theirs = yield* list({ size: 10, owner: 2, filters: [sql`i.score = ${10}`] })
        expect(ids(theirs.rows)).toEqual([3])
        expect(theirs.pagination.total_count).toBe(1)
        expect((yield* list({ size: 10, owner: 3 })).pagination.total_count).toBe(0)
      }))

    it.effect("run side by side (concurrent) the statements answer the same", () =>
      Effect.gen(function*() {
        const sequential = yield* list({ size: 2, page: 2, by: "score", dir: "DESC", owner: 1 })
        const concurrent = yield* list({ size: 2, page: 2, by: "score", dir: "DESC", owner: 1, concurrent: true })
        expect(concurrent).toEqual(sequential)
        expect(ids(concurrent.rows)).toEqual([6, 1])
      }))

    it.effect("totals: aggregates of every match come with the count", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const listPage = yield* makeListPage
        const result = yield* listPage({
          select: sql`i.id, i.name, i.score::text AS score`,
          from: sql`items i`,
          row: ItemRow,
          filters: [sql`i.owner = ${1}`],
          sort: { columns: { id: sql`i.id` }, by: "id", dir: "ASC", id: sql`i.id` },
          totals: { select: sql`coalesce(sum(i.score), 0)::text AS total`, fields: { total: Schema.String } }
        }, pageRequest({ page_size: 1 }, 25))
        expect(ids(result.rows)).toEqual([1])
        expect(result.totals).toEqual({ total: "60" })
        expect(result.pagination.total_count).toBe(4)
      }))

    it.effect("countFrom: the count reads its own FROM, the page the joined one", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const listPage = yield* makeListPage
        yield* sql`CREATE TABLE owners (id int PRIMARY KEY, name text NOT NULL)`
        yield* sql`INSERT INTO owners VALUES (1, 'one')`
        // Owner 2 has no row, so the inner join drops its items: a real list's joins never do, but
        // here it tells which FROM each statement read.
        const result = yield* listPage({
          select: sql`i.id, o.name, i.score::text AS score`,
          from: sql`items i JOIN owners o ON o.id = i.owner`,
          countFrom: sql`items i`,
          row: ItemRow,
          filters: [sql`i.score = ${10}`],
          sort: { columns: { id: sql`i.id` }, by: "id", dir: "ASC", id: sql`i.id` }
        }, pageRequest({}, 25))
        expect(result.rows).toEqual([{ id: 1, name: "one", score: 10 }, { id: 6, name: "one", score: 10 }])
        expect(result.pagination.total_count).toBe(3)
        yield* sql`DROP TABLE owners`
      }))

    it.effect("a row that does not decode is a defect, not a failure", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const listPage = yield* makeListPage
        const exit = yield* Effect.exit(listPage({
          select: sql`i.id, i.name, i.name AS score`,
          from: sql`items i`,
          row: ItemRow,
          sort: { columns: { id: sql`i.id` }, by: "id", dir: "ASC", id: sql`i.id` }
        }, pageRequest({}, 25)))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      }))
  })
})
