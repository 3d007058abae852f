/**
 * The list kit, repository side (ARCHITECTURE "Lists"): one builder from a base query (select list
 * and FROM), a sort map, filter fragments and an access scope to `{ rows, pagination }`, with one
 * count statement and one page statement. Rows are decoded with the repository's row schema;
 * SQL errors and undecodable rows are defects (`orDefect`). The Api side is `src/Api/Lists.ts`.
 *
 * In a repository:
 * ```ts
 * const listPage = yield* makeListPage
 * const list = (criteria: XCriteria, page: PageRequest) => listPage({
 *   select: columns, from, row: XRow,
 *   scope: scopes.x(viewer),                                  // from the access module
 *   filters: [criteria.status !== undefined && sql`x.status = ${criteria.status}`, …],
 *   sort: { columns: sortColumns, by: criteria.sortBy ?? "created_at", dir: criteria.sortDir ?? "DESC", id: sql`x.id` }
 * }, page)
 * ```
 * The order always ends with the row's unique key in the same direction, so equal sort values
 * never make a row appear on two pages or on none. A list whose count carries more than a count
 * (claims' Σ amount) names the extra columns in `totals`; one whose joins only add columns counts
 * its base table (`countFrom`). A list whose filters usually match few rows in a way PostgreSQL
 * cannot estimate (a trigram search) counts and sorts those matches apart (`sortFewMatches`).
 * List statements are never prepared (ARCHITECTURE "Persistence"). A list whose statement shape
 * is tuned and benchmarked in a way the builder does not express (collaborators' readable set)
 * keeps its own statements, returns the same `{ rows, pagination }` through `paginationOf`, and
 * says why where it is written.
 */
import { SqlClient, Statement } from "@effect/sql"
import { Effect, type ParseResult, Schema } from "effect"
import { type PageRequest, type Pagination, paginationOf } from "../Api/Pagination.js"
import { orDefect } from "./Repository.js"

export type SortDirection = "ASC" | "DESC"

/** How a list is ordered: the API's sort names to SQL expressions, the chosen one, and the tie-breaker. */
export interface ListSort<K extends string> {
  /**
   * Every sortable column by the name the API uses (`sort_by`); a fixed order has one entry. A name
   * may stand for several expressions in turn (by name: last, then first), each ordered in `dir`.
   */
  readonly columns: Readonly<Record<K, Statement.Fragment | ReadonlyArray<Statement.Fragment>>>
  readonly by: K
  readonly dir: SortDirection
  /** The row's unique key (`c.id`): ordered last, in `dir` too, so pages are stable. */
  readonly id: Statement.Fragment
  /** Where rows without a value of the sort column go, in both directions (PostgreSQL's default when absent). */
  readonly nulls?: "FIRST" | "LAST" | undefined
}

/** A condition, or nothing when a filter is absent (`criteria.x !== undefined && sql\`…\``). */
export type ListFilter = Statement.Fragment | false | null | undefined

/**
 * How `sortFewMatches` reads the matches apart: they keep the base table's columns under its alias,
 * and the page's other columns come from joins made over the matches alone.
 */
export interface FewMatches {
  /** Up to this many matches are counted and sorted in one statement; more go through the exact count. */
  readonly atMost: number
  /** The base table's alias in `countFrom` (or `from`), e.g. `p`: the matches are its rows (`p.*`) under the same alias. */
  readonly table: string
  /** What `from` joins to the base table for the select list (`LEFT JOIN …`), joined to the matches. */
  readonly joins: Statement.Fragment
}

export interface ListSpec<A, I, K extends string, T extends Schema.Struct.Fields> {
  /** The select list of a page's rows. */
  readonly select: Statement.Fragment
  /** The FROM clause (tables and joins) that `select`, the filters, the scope and the sort read. */
  readonly from: Statement.Fragment
  /**
   * The count's FROM when `from`'s joins only add columns to a page's rows, never a row more or less
   * (a non-null foreign key's join, a left join on a key): counting the base table alone skips them
   * on every match. The scope and filters must read only these tables.
   */
  readonly countFrom?: Statement.Fragment | undefined
  /** Decodes each row of the page. */
  readonly row: Schema.Schema<A, I, never>
  /** The rows the viewer may see (`scope` in src/Services/Access/AccessRepo.ts); ANDed first. */
  readonly scope?: Statement.Fragment | undefined
  readonly filters?: ReadonlyArray<ListFilter>
  readonly sort: ListSort<K>
  /** Aggregates the count statement also returns, over every match (select list and their schemas). */
  readonly totals?: { readonly select: Statement.Fragment; readonly fields: T }
  /**
   * Runs the count beside the page on a second connection (lower latency when both are slow);
   * by default they run one after the other on one connection.
   */
  readonly concurrent?: boolean
  /**
   * For filters that usually match few rows but that PostgreSQL cannot estimate (a trigram search):
   * the matches are read once through the filters' index (a materialised CTE over `countFrom`,
   * capped at `atMost` + 1 rows) and, when there are at most `atMost`, counted and sorted there in
   * one statement. Left to itself the planner may walk the sort's index past most of the table
   * looking for a page of matches (the clinic patient search: 75 ms against 2 ms,
   * bench/patients-list.ts). More matches: the exact count, then the page statement (not run when
   * the page can have no rows), one after the other. Leave it out when nothing narrows the list.
   * Not with `totals` (the sorted statement counts rows only).
   */
  readonly sortFewMatches?: FewMatches | undefined
}

export interface ListPage<A, T> {
  readonly rows: ReadonlyArray<A>
  readonly pagination: Pagination
  /** The `totals` columns of the count statement (`{}` without them). */
  readonly totals: T
  /** Whether the matches were few, counted and sorted in one statement (`sortFewMatches`). */
  readonly sortedFewMatches: boolean
}

const Count = { count: Schema.Int }
/** The count statement's row: the count, and the `totals` columns when asked. */
type DecodeCounted = (row: unknown) => Effect.Effect<{ readonly count: number } & Record<string, unknown>, ParseResult.ParseError>
const decodeCount: DecodeCounted = Schema.decodeUnknown(Schema.Struct(Count))
/** The count of matches the sorted statement returns with each row, under a name no row uses. */
const decodeMatchCount = Schema.decodeUnknown(Schema.Struct({ list_match_count: Schema.Int }))

/**
 * The decoder of a page's rows, one per row schema: compiling it on every call (as a statement
 * built with `SqlSchema` per call does) cost a list about 0.1 ms, more than decoding a page.
 */
const pageDecoders = new WeakMap<Schema.Schema.Any, (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>>()
const decodePage = <A, I>(row: Schema.Schema<A, I, never>) => {
  let decode = pageDecoders.get(row)
  if (decode === undefined) {
    decode = Schema.decodeUnknown(Schema.Array(row)) as (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>
    pageDecoders.set(row, decode)
  }
  return decode as (rows: unknown) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>
}

/**
 * `listPage(spec, page)`: the page of rows and its pagination (counted over every match; a page
 * past the end has no rows and the true count). Taken once when a repository is built.
 */
export const makeListPage = Effect.map(SqlClient.SqlClient, (sql) => {
  const where = (spec: { readonly scope?: Statement.Fragment | undefined; readonly filters?: ReadonlyArray<ListFilter> }) => {
    const clauses = [spec.scope, ...(spec.filters ?? [])].filter((c): c is Statement.Fragment => c !== undefined && c !== null && c !== false)
    return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
  }

  const orderBy = <K extends string>(sort: ListSort<K>) => {
    const dir = sort.dir === "DESC" ? sql`DESC` : sql`ASC`
    const column: Statement.Fragment | ReadonlyArray<Statement.Fragment> | undefined = sort.columns[sort.by]
    // A name outside the map is a bug in the caller (the Api's column list and the map disagree).
    if (column === undefined) throw new Error(`No sort column ${JSON.stringify(sort.by)}`)
    const nulls = sort.nulls === undefined ? sql`` : sort.nulls === "LAST" ? sql` NULLS LAST` : sql` NULLS FIRST`
    const keys = Statement.isFragment(column) ? [column] : column
    const ordered = sql.csv(keys.map((key) => sql`${key} ${dir}${nulls}`))
    return keys.length === 1 && keys[0] === sort.id ? ordered : sql`${ordered}, ${sort.id} ${dir}`
  }

  return <A, I, K extends string, T extends Schema.Struct.Fields = {}>(
    spec: ListSpec<A, I, K, T>,
    page: PageRequest
  ): Effect.Effect<ListPage<A, Schema.Struct.Type<T>>> => {
    // A caller's bug, like a sort name outside the map: the sorted statement has no totals to give.
    if (spec.sortFewMatches !== undefined && spec.totals !== undefined) throw new Error("sortFewMatches does not compute totals")
    const condition = where(spec)
    const countFrom = spec.countFrom ?? spec.from
    // Built when run: the sorted statement of few matches needs neither.
    const rows = Effect.suspend(() =>
      Effect.flatMap(
        sql`SELECT ${spec.select} FROM ${spec.from} WHERE ${condition}
          ORDER BY ${orderBy(spec.sort)} LIMIT ${page.perPage} OFFSET ${page.offset}`,
        decodePage(spec.row)
      )
    )
    const counted = Effect.suspend(() => {
      const decode: DecodeCounted = spec.totals === undefined
        ? decodeCount
        : Schema.decodeUnknown(Schema.Struct({ ...Count, ...spec.totals.fields })) as unknown as DecodeCounted
      return Effect.flatMap(
        sql`SELECT count(*)::int AS count${spec.totals === undefined ? sql`` : sql`, ${spec.totals.select}`}
          FROM ${countFrom} WHERE ${condition}`,
        (found) => decode(found[0])
      )
    })
    const listed = (found: ReadonlyArray<A>, count: number, totals: object, sortedFewMatches: boolean): ListPage<A, Schema.Struct.Type<T>> => ({
      rows: found,
      pagination: paginationOf(page, count),
      totals: totals as unknown as Schema.Struct.Type<T>,
      sortedFewMatches
    })

    const few = spec.sortFewMatches
    if (few === undefined) {
      return orDefect(Effect.map(
        Effect.all([rows, counted], { concurrency: spec.concurrent === true ? 2 : 1 }),
        ([found, { count, ...totals }]) => listed(found, count, totals, false)
      ))
    }
    const table = sql(few.table)
    // The page of the matches with their count on every row: none when the page is past them.
    const sorted = Effect.flatMap(
      sql`WITH matched AS MATERIALIZED (SELECT ${table}.* FROM ${countFrom} WHERE ${condition} LIMIT ${few.atMost + 1})
        SELECT ${spec.select}, (SELECT count(*) FROM matched)::int AS list_match_count FROM matched ${table} ${few.joins}
        ORDER BY ${orderBy(spec.sort)} LIMIT ${page.perPage} OFFSET ${page.offset}`,
      (raw) =>
        Effect.all({
          found: decodePage(spec.row)(raw),
          count: raw.length === 0 ? Effect.succeed(undefined) : Effect.map(decodeMatchCount(raw[0]), (r) => r.list_match_count)
        })
    )
    return orDefect(Effect.gen(function*() {
      const matches = yield* sorted
      if (matches.count !== undefined && matches.count <= few.atMost) return listed(matches.found, matches.count, {}, true)
      const { count, ...totals } = yield* counted
      // Past the end, or few matches none of which is on this page (the sorted statement found none).
      const found = count <= page.offset || count <= few.atMost ? [] : yield* rows
      return listed(found, count, totals, false)
    }))
  }
})
