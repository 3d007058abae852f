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
 * Runs `onBatch` on each batch of `query`'s rows (in order, none empty), fetching the next batch
 * meanwhile. A failure of `onBatch` or of a fetch stops the reading and rolls the transaction back.
 */
export const forEachRowBatch = <Raw, E, R>(
  sql: SqlClient.SqlClient,
  query: Statement.Statement<Raw>,
  onBatch: (rows: ReadonlyArray<Raw>) => Effect.Effect<void, E, R>,
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
    // Every row is read: plan for the whole result, not for the first tenth (a cursor's default).
    yield* connection.executeRaw("SET LOCAL cursor_tuple_fraction = 1", [])
    yield* connection.executeRaw(`DECLARE report_rows NO SCROLL CURSOR FOR ${text}`, params)
    const fetch = connection.execute(`FETCH FORWARD ${batchSize} FROM report_rows`, [], undefined) as Effect.Effect<
      ReadonlyArray<Raw>,
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
