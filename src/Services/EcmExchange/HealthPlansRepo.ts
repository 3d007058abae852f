/** The only SQL on `health_plans` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ecmInvalid } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"

const NullText = Schema.NullOr(Schema.String)

/** What a plan's record says, as a create or an update writes it. */
const Fields = Schema.Struct({
  name: Schema.String,
  mcp_id: Schema.String,
  contact_name: NullText,
  contact_email: NullText,
  contact_phone: NullText,
  active: Schema.Boolean,
  provider_npis: Schema.Array(Schema.String),
  provider_tin: NullText,
  provider_type: NullText
})
export type PlanFields = typeof Fields.Type

export const PlanRow = Schema.Struct({
  id: Schema.Int,
  ...Fields.fields,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type PlanRow = typeof PlanRow.Type

const takenMessage = "Mcp id has already been taken"
const taken = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error) => isUniqueViolation(error, "health_plans_mcp_id_key"), () => Effect.fail(ecmInvalid([takenMessage])))

export class HealthPlansRepo extends Effect.Service<HealthPlansRepo>()("app/EcmHealthPlansRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ fields: Fields, at: Schema.DateFromSelf }),
      Result: PlanRow,
      execute: ({ at, fields: f }) =>
        sql`INSERT INTO health_plans (name, mcp_id, contact_name, contact_email, contact_phone, active, provider_npis,
            provider_tin, provider_type, created_at, updated_at)
          VALUES (${f.name}, ${f.mcp_id}, ${f.contact_name}, ${f.contact_email}, ${f.contact_phone}, ${f.active},
            ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(f.provider_npis)}::jsonb)), ${f.provider_tin}, ${f.provider_type}, ${at}, ${at})
          RETURNING *`
    })

    const updateOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, fields: Fields, at: Schema.DateFromSelf }),
      Result: PlanRow,
      execute: ({ at, fields: f, id }) =>
        sql`UPDATE health_plans SET name = ${f.name}, mcp_id = ${f.mcp_id}, contact_name = ${f.contact_name},
            contact_email = ${f.contact_email}, contact_phone = ${f.contact_phone}, active = ${f.active},
            provider_npis = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(f.provider_npis)}::jsonb)), provider_tin = ${f.provider_tin},
            provider_type = ${f.provider_type}, updated_at = ${at}
          WHERE id = ${id} RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: PlanRow,
      execute: (id) => sql`SELECT * FROM health_plans WHERE id = ${id}`
    })

    /** The one plan (if exactly one) that lists an NPI of the file's records. */
    const soleOwnerOf = SqlSchema.findAll({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (mifFileId) =>
        sql`SELECT h.id FROM health_plans h
          WHERE h.provider_npis && ARRAY(SELECT DISTINCT e.ecm_npi FROM ecm_eligibility_informations e
            WHERE e.mif_file_id = ${mifFileId} AND e.ecm_npi IS NOT NULL)
          LIMIT 2`
    })

    return {
      /** Records a plan; 422 when another has its `mcp_id`. */
      insert: (fields: PlanFields, at: Date) => orDefect(taken(insertOne({ fields, at }))),
      /** Replaces a plan's fields; none when it does not exist; 422 when another has the `mcp_id`. */
      update: (id: number, fields: PlanFields, at: Date) => orDefect(taken(updateOne({ id, fields, at }))),
      find: (id: number): Effect.Effect<Option.Option<PlanRow>> => orDefect(findById(id)),
      /** A page of plans by name. */
      list: (page: PageRequest) =>
        listPage({
          select: sql`*`,
          from: sql`health_plans`,
          row: PlanRow,
          sort: { columns: { name: sql`lower(name)` }, by: "name", dir: "ASC", id: sql`id` }
        }, page),
      /** The plan a MIF file's records' NPIs link to, when exactly one plan lists any of them. */
      defaultForFile: (mifFileId: number): Effect.Effect<Option.Option<number>> =>
        orDefect(Effect.map(soleOwnerOf(mifFileId), (rows) => (rows.length === 1 ? Option.some(rows[0]!.id) : Option.none())))
    } as const
  })
}) {}
