/**
 * `COPY … FROM STDIN` on the connection of the current transaction: @effect/sql has no COPY, and
 * the `pg-copy-streams` package is not a dependency. pg runs any object with a `submit` method as
 * a query and hands it the protocol messages that follow, which is all a COPY of one in-memory
 * chunk needs: send the statement, answer CopyInResponse with the data and CopyDone, and wait for
 * the command to complete (or fail).
 *
 * The transaction's pg client is the `pg` field of @effect/sql-pg's connection (not part of its
 * declared types): the COPY must run inside the import's transaction, on its connection.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The part of pg's protocol connection a COPY uses (pg/lib/connection.js). */
interface ProtocolConnection {
  readonly query: (text: string) => void
  readonly sendCopyFromChunk: (chunk: Buffer) => void
  readonly endCopyFrom: () => void
  readonly sendCopyFail: (message: string) => void
}

interface PgClientLike {
  readonly query: (submittable: CopyFromBuffer) => void
}

/** One COPY FROM STDIN of `data` as a pg "submittable" query. */
class CopyFromBuffer {
  private settled = false
  private sent = false
  constructor(
    private readonly statement: string,
    private readonly data: Buffer,
    private readonly done: (error: unknown) => void
  ) {}
  private settle(error: unknown) {
    if (this.settled) return
    this.settled = true
    this.done(error)
  }
  submit(connection: ProtocolConnection) {
    connection.query(this.statement)
  }
  handleCopyInResponse(connection: ProtocolConnection) {
    if (this.sent) return connection.sendCopyFail("COPY data already sent")
    this.sent = true
    connection.sendCopyFromChunk(this.data)
    connection.endCopyFrom()
  }
  handleCommandComplete() {}
  // pg drops the active query on an error: ReadyForQuery will not reach it.
  handleError(error: unknown) {
    this.settle(error ?? new Error("COPY failed"))
  }
  handleReadyForQuery() {
    this.settle(this.sent ? undefined : new Error("the statement did not start a COPY FROM STDIN"))
  }
  // A COPY FROM answers with none of these.
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}
}

/**
 * Runs `statement` (a `COPY … FROM STDIN`, text format) with `data` as its input, on the current
 * transaction's connection; outside a transaction it dies (a bug).
 */
export const copyIn = (statement: string, data: Buffer): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
    const client = transaction._tag === "Some" ? (transaction.value[0] as unknown as { pg?: PgClientLike }).pg : undefined
    if (client === undefined || typeof client.query !== "function") {
      return Effect.dieMessage("copyIn needs the pg client of a transaction")
    }
    return Effect.async<void, unknown>((resume) => {
      client.query(new CopyFromBuffer(statement, data, (error) => resume(error === undefined ? Effect.void : Effect.fail(error))))
    }).pipe(Effect.orDie)
  })
