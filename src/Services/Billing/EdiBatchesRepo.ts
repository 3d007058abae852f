/**
 * The only SQL on `edi_batches` and the `edi_interchange_control_numbers` sequence (ARCHITECTURE
 * "Persistence"): rows decoded, SQL errors defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

export const NewBatch = Schema.Struct({
  batchId: Schema.String,
  controlNumber: Schema.Int,
  batchName: Schema.NullOr(Schema.String),
  objectKey: Schema.String,
  claimCount: Schema.Int,
  /** Exact decimal text. */
  totalAmount: Schema.String,
  createdById: Schema.Number,
  generatedAt: Schema.DateFromSelf
})

export class EdiBatchesRepo extends Effect.Service<EdiBatchesRepo>()("app/EdiBatchesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const next = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.Int }),
      execute: () => sql`SELECT nextval('edi_interchange_control_numbers')::int AS n`
    })

    const insertOne = SqlSchema.single({
      Request: NewBatch,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (b) =>
        sql`INSERT INTO edi_batches (batch_id, interchange_control_number, batch_name, object_key, claim_count, total_amount,
            created_by_id, generated_at)
          VALUES (${b.batchId}, ${b.controlNumber}, ${b.batchName}, ${b.objectKey}, ${b.claimCount}, ${b.totalAmount}::numeric,
            ${b.createdById}, ${b.generatedAt})
          RETURNING id`
    })

    return {
      /** ISA13 for a new interchange: never reused, even when the transaction rolls back. */
      nextControlNumber: Effect.map(orDefect(next(undefined)), (row) => row.n),
      /** The batch's row id. */
      insert: (batch: typeof NewBatch.Type) => Effect.map(orDefect(insertOne(batch)), (row) => row.id)
    } as const
  })
}) {}
