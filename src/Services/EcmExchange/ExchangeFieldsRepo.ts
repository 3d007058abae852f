/**
 * The SQL on the members' return-file fields (`patients.homelessness_indicator`, `pof_indicator`,
 * `pof`): the columns staff keep for the Return Transmission File.
 */
import { SqlClient } from "@effect/sql"
import { Effect, type Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Indicator = Schema.NullOr(Schema.Literal("Y", "N"))

export const FieldsRow = Schema.Struct({
  patient_id: Schema.Int,
  homelessness_indicator: Indicator,
  pof_indicator: Indicator,
  pof: Schema.NullOr(Schema.String)
})
export type FieldsRow = typeof FieldsRow.Type

export class ExchangeFieldsRepo extends Effect.Service<ExchangeFieldsRepo>()("app/EcmExchangeFieldsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: Schema.Int,
      Result: FieldsRow,
      execute: (id) => sql`SELECT id AS patient_id, homelessness_indicator, pof_indicator, pof FROM patients WHERE id = ${id}`
    })

    const update = SqlSchema.findOne({
      Request: Schema.Struct({ fields: FieldsRow, at: Schema.DateFromSelf }),
      Result: FieldsRow,
      execute: ({ at, fields: f }) =>
        sql`UPDATE patients SET homelessness_indicator = ${f.homelessness_indicator}, pof_indicator = ${f.pof_indicator},
            pof = ${f.pof}, updated_at = ${at}
          WHERE id = ${f.patient_id} RETURNING id AS patient_id, homelessness_indicator, pof_indicator, pof`
    })

    return {
      find: (patientId: number): Effect.Effect<Option.Option<FieldsRow>> => orDefect(find(patientId)),
      update: (fields: FieldsRow, at: Date): Effect.Effect<Option.Option<FieldsRow>> => orDefect(update({ fields, at }))
    } as const
  })
}) {}
