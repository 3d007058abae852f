/**
 * A report reads everything it writes (the count, the rows, the totals) in one snapshot: a
 * read-only REPEATABLE READ transaction on a connection reserved for it, so the totals add up the
 * rows written even while appointments change. The generator's own statements (progress updates)
 * still go through the pool and are seen at once.
 *
 * Rows come through a server-side cursor, a large batch per round trip, the next batch fetched
 * while the current one is written: in order, and only two batches ever in memory.
 * (`Statement.stream` reads 128 rows a round trip: 8,000 round trips for a million rows.)
 */
import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect, Fiber } from "effect"

/** Rows a round trip: a few MB of rows at most, a few hundred round trips for a million rows. */
const batchSize = 5000

/** Rows as arrays of values (no object and no property names a row): the caller owns them. */
export type RawRows = ReadonlyArray<Array<unknown>>

export interface ReportSnapshot {
  /** Runs `statement` in the snapshot. */
  readonly values: (statement: Statement.Statement<unknown>) => Effect.Effect<RawRows, SqlError.SqlError>
  /**
   * Runs `onBatch` on each batch of `query`'s rows (in order, none empty), fetching the next batch
   * meanwhile. A failure of `onBatch` or of a fetch stops the reading.
   */
  readonly forEachBatch: <E, R>(
    query: Statement.Statement<unknown>,
    onBatch: (rows: RawRows) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | SqlError.SqlError, R>
}

/** Runs `use` in a report snapshot; the transaction ends (rolled back: it wrote nothing) either way. */
export const withReportSnapshot = <A, E, R>(
  sql: SqlClient.SqlClient,
  use: (snapshot: ReportSnapshot) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.scoped(Effect.gen(function*() {
    const connection = yield* sql.reserve
    // ROLLBACK also ends a transaction a failed statement aborted, before the connection goes back to the pool.
    yield* Effect.acquireRelease(
      connection.executeRaw("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", []),
      () => Effect.ignore(connection.executeRaw("ROLLBACK", []))
    )
    // Dates as YYYY-MM-DD text whatever the server's setting (ReportRowsRepo.ts). No JIT: compiling
    // the expressions cost more (~0.8 s for a million rows) than it saved. A cursor planned for all
    // its rows: PostgreSQL formats the rows (ReportRowsRepo.ts), so it sets the pace, and a sort
    // followed by a sequential read took it a quarter less time than walking an index in order
    // (a million appointments: 4.9 s against 6.3 s), though the first row comes later.
    yield* connection.executeRaw("SET LOCAL DateStyle = ISO", [])
    yield* connection.executeRaw("SET LOCAL jit = off", [])
    yield* connection.executeRaw("SET LOCAL cursor_tuple_fraction = 1", [])
    const values = (statement: Statement.Statement<unknown>) => {
      const [text, params] = statement.compile()
      return connection.executeValues(text, params) as Effect.Effect<RawRows, SqlError.SqlError>
    }
    let cursors = 0
    const forEachBatch = <E2, R2>(query: Statement.Statement<unknown>, onBatch: (rows: RawRows) => Effect.Effect<void, E2, R2>) =>
      Effect.scoped(Effect.gen(function*() {
        const name = `report_rows_${++cursors}`
        const [text, params] = query.compile()
        yield* Effect.acquireRelease(
          connection.executeRaw(`DECLARE ${name} NO SCROLL CURSOR FOR ${text}`, params),
          () => Effect.ignore(connection.executeRaw(`CLOSE ${name}`, []))
        )
        const fetch = connection.executeValues(`FETCH FORWARD ${batchSize} FROM ${name}`, []) as Effect.Effect<RawRows, SqlError.SqlError>
        let next = yield* Effect.forkScoped(fetch)
        for (;;) {
          const rows = yield* Fiber.join(next)
          if (rows.length === 0) return
          const more = rows.length === batchSize
          if (more) next = yield* Effect.forkScoped(fetch)
          yield* onBatch(rows)
          if (!more) return
        }
      }))
    return yield* use({ values, forEachBatch })
  }))
