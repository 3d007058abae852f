/**
 * Reads a report's rows through a server-side cursor, a large batch per round trip, the next batch
 * fetched while the current one is written: the rows stay in order and only two batches are ever in
 * memory. (`Statement.stream` reads 128 rows a round trip: 8,000 round trips for a million rows,
 * each costing a context switch to PostgreSQL and back on a busy machine.)
 *
 * The cursor lives in a read-only transaction on a connection reserved for it, so the generator's
 * own statements (progress updates) still go through the pool and are seen at once.
 */
import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect, Fiber } from "effect"

/** Rows a round trip: a few MB of rows at most, a few hundred round trips for a million rows. */
export const cursorBatchSize = 5000

/**
 * Runs `onBatch` on each batch of `query`'s rows, as arrays of values (in order, none empty), fetching the next batch
 * meanwhile. A failure of `onBatch` or of a fetch stops the reading and rolls the transaction back.
 */
export const forEachRowBatch = <E, R>(
  sql: SqlClient.SqlClient,
  query: Statement.Statement<unknown>,
  onBatch: (rows: ReadonlyArray<Array<unknown>>) => Effect.Effect<void, E, R>,
  batchSize: number = cursorBatchSize
): Effect.Effect<void, E | SqlError.SqlError, R> =>
  Effect.scoped(Effect.gen(function*() {
    const connection = yield* sql.reserve
    const [text, params] = query.compile()
    // Read-only: nothing to commit, and ROLLBACK also ends a transaction a failed statement aborted,
    // before the connection goes back to the pool.
    yield* Effect.acquireRelease(
      connection.executeRaw("BEGIN READ ONLY", []),
      () => Effect.ignore(connection.executeRaw("ROLLBACK", []))
    )
    // A plan whose first rows come at once (PostgreSQL's default for cursors, set here so a
    // server-wide setting cannot change it): reading an index in order lets PostgreSQL produce
    // rows while they are written here, where a full sort held the first row back for seconds
    // (a million appointments: 5 s of sorting, then the writing; now both at once).
    // No JIT: compiling the expressions cost more (~0.8 s for a million rows) than it saved.
    yield* connection.executeRaw("SET LOCAL cursor_tuple_fraction = 0.1", [])
    yield* connection.executeRaw("SET LOCAL jit = off", [])
    yield* connection.executeRaw(`DECLARE report_rows NO SCROLL CURSOR FOR ${text}`, params)
    // Rows as arrays of values (no object and property names a row): the caller owns them.
    const fetch = connection.executeValues(`FETCH FORWARD ${batchSize} FROM report_rows`, []) as Effect.Effect<
      ReadonlyArray<Array<unknown>>,
      SqlError.SqlError
    >
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
