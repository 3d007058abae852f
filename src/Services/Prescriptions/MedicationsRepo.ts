/**
 * The only SQL on `medications` (ARCHITECTURE "Persistence"): the catalogue, decoded with schemas.
 * One product per generic name, strength and form is the unique index `medications_product_key`
 * (a 422 on `name`); every other SQL error is a defect.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { MedicationId } from "../../Domain/Ids.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { Medication } from "../../Domain/Prescriptions/Prescription.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlFilters.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

export const MedicationRow = Schema.Struct({
  id: MedicationId,
  name: Text,
  generic_name: Text,
  brand_names: Schema.Array(Text),
  strength: Text,
  dosage_form: Text,
  rxnorm_cui: NullText,
  active: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type MedicationRow = typeof MedicationRow.Type

export const toMedication = (row: MedicationRow): Medication => Medication.make(row, true)

/** What the catalogue list may be narrowed by. */
export interface MedicationCriteria {
  readonly search?: string | undefined
  readonly includeInactive: boolean
}

/** A product's fields, trimmed by `Medications`; brand names without duplicates. */
export const MedicationFields = Schema.Struct({
  name: Text,
  generic_name: Text,
  brand_names: Schema.Array(Text),
  strength: Text,
  dosage_form: Text,
  rxnorm_cui: NullText
})
export type MedicationFields = typeof MedicationFields.Type

const MedicationChange = Schema.Struct({ id: Schema.Number, fields: MedicationFields, active: Schema.Boolean, at: Schema.DateFromSelf })

const columns = "m.id, m.name, m.generic_name, m.brand_names, m.strength, m.dosage_form, m.rxnorm_cui, m.active, m.created_at, m.updated_at"

const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
  isUniqueViolation(error, "medications_product_key") ? Effect.fail(invalidField("name", "has already been taken")) : Effect.die(error)

/** A medication's name, generic name or one of its brand names contains the text (`m` = the medication). */
export const medicationNameMatches = (sql: SqlClient.SqlClient, text: string): Statement.Fragment => {
  const pattern = likePattern(text)
  return sql`(m.name ILIKE ${pattern} ESCAPE '\\' OR m.generic_name ILIKE ${pattern} ESCAPE '\\'
            OR EXISTS (SELECT 1 FROM unnest(m.brand_names) AS b(name) WHERE b.name ILIKE ${pattern} ESCAPE '\\'))`
}

export class MedicationsRepo extends Effect.Service<MedicationsRepo>()("app/MedicationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)

    const byName = { name: sql`lower(m.name)` }
    /** A page of the catalogue by name: active medications only unless `includeInactive`. */
    const list = (criteria: MedicationCriteria, page: PageRequest) => {
      const search = criteria.search?.trim() ?? ""
      return listPage({
        select: cols,
        from: sql`medications m`,
        row: MedicationRow,
        filters: [!criteria.includeInactive && sql`m.active`, search !== "" && medicationNameMatches(sql, search)],
        sort: { columns: byName, by: "name", dir: "ASC", id: sql`m.id` }
      }, page)
    }
    const findById = SqlSchema.findOne({
      Request: Schema.Number,
      Result: MedicationRow,
      execute: (id) => sql`SELECT ${cols} FROM medications m WHERE m.id = ${id}`
    })
    const insertOne = SqlSchema.single({
      Request: MedicationFields,
      Result: MedicationRow,
      execute: (f) =>
        sql`INSERT INTO medications AS m (name, generic_name, brand_names, strength, dosage_form, rxnorm_cui)
          VALUES (${f.name}, ${f.generic_name}, ${f.brand_names as Array<string>}::text[], ${f.strength},
            ${f.dosage_form}, ${f.rxnorm_cui})
          RETURNING ${cols}`
    })
    const updateOne = SqlSchema.findOne({
      Request: MedicationChange,
      Result: MedicationRow,
      execute: ({ active, at, fields: f, id }) =>
        sql`UPDATE medications AS m SET
            name = ${f.name},
            generic_name = ${f.generic_name},
            brand_names = ${f.brand_names as Array<string>}::text[],
            strength = ${f.strength},
            dosage_form = ${f.dosage_form},
            rxnorm_cui = ${f.rxnorm_cui},
            active = ${active},
            updated_at = ${at}
          WHERE m.id = ${id} RETURNING ${cols}`
    })
    const findActive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: (id) => sql`SELECT active FROM medications WHERE id = ${id}`
    })

    return {
      /** One page of the catalogue by name, with its pagination. */
      list,
      findById: (id: number) => orDefect(findById(id)),
      insert: (fields: MedicationFields) => insertOne(fields).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** The changed row; none when it no longer exists. `updated_at` from the clock. */
      update: (id: number, fields: MedicationFields, active: boolean) =>
        Effect.flatMap(now, (at) => updateOne({ id, fields, active, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** Whether the medication is active; none when it does not exist. */
      activeOf: (id: number) => Effect.map(orDefect(findActive(id)), Option.map((row) => row.active))
    } as const
  })
}) {}
