/**
 * The only SQL on `treatment_plans` (ARCHITECTURE "Persistence"). Rows are decoded with schemas
 * (goals from `jsonb`, dates as `YYYY-MM-DD`); SQL errors are defects. `updated_at` comes from the
 * clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { GoalStatus, TreatmentPlanStatus } from "../../Domain/Patients/Records.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema, textArray } from "../Repository.js"
import { now } from "../Time.js"

const NullText = Schema.NullOr(Schema.String)

const GoalRow = Schema.Struct({ description: Schema.String, target_date: NullText, status: GoalStatus })

export const TreatmentPlanRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  provider_id: Schema.NullOr(Schema.Int),
  title: Schema.String,
  diagnosis_codes: Schema.Array(Schema.String),
  goals: Schema.Array(GoalRow),
  interventions: Schema.Array(Schema.String),
  start_date: NullText,
  end_date: NullText,
  status: TreatmentPlanStatus,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type TreatmentPlanRow = typeof TreatmentPlanRow.Type

/** A goal as stored: trimmed, its status defaulted, by `TreatmentPlans`. */
export type Goal = typeof GoalRow.Type

const NewPlan = Schema.Struct({
  patientId: Schema.Number,
  providerId: Schema.NullOr(Schema.Number),
  title: Schema.String,
  diagnosisCodes: Schema.Array(Schema.String),
  goals: Schema.Array(GoalRow),
  interventions: Schema.Array(Schema.String),
  startDate: NullText,
  endDate: NullText,
  status: TreatmentPlanStatus,
  createdById: Schema.Number
})
export type NewPlan = typeof NewPlan.Type

/** The fields an edit gives; a field left out keeps its value. */
const PlanChanges = Schema.Struct({
  title: Schema.optional(Schema.String),
  provider_id: Schema.optional(Schema.NullOr(Schema.Number)),
  start_date: Schema.optional(NullText),
  end_date: Schema.optional(NullText),
  status: Schema.optional(TreatmentPlanStatus),
  diagnosis_codes: Schema.optional(Schema.Array(Schema.String)),
  interventions: Schema.optional(Schema.Array(Schema.String)),
  goals: Schema.optional(Schema.Array(GoalRow))
})
export type PlanChanges = typeof PlanChanges.Type

const columns = `id, patient_id, provider_id, title, diagnosis_codes, goals, interventions,
  to_char(start_date, 'YYYY-MM-DD') AS start_date, to_char(end_date, 'YYYY-MM-DD') AS end_date, status, created_at, updated_at`

export class TreatmentPlansRepo extends Effect.Service<TreatmentPlansRepo>()("app/TreatmentPlansRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)

    const newestFirst = { created_at: sql`created_at` }
    const list = (patientId: number, page: PageRequest) =>
      listPage({
        select: cols,
        from: sql`treatment_plans`,
        row: TreatmentPlanRow,
        filters: [sql`patient_id = ${patientId}`],
        sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`id` }
      }, page)
    const findLast = SqlSchema.findOne({
      Request: Schema.Number,
      Result: TreatmentPlanRow,
      execute: (patientId) =>
        sql`SELECT ${cols} FROM treatment_plans WHERE patient_id = ${patientId} ORDER BY created_at DESC, id DESC LIMIT 1`
    })
    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, lock: Schema.Boolean }),
      Result: TreatmentPlanRow,
      execute: ({ id, lock }) => sql`SELECT ${cols} FROM treatment_plans WHERE id = ${id} ${lock ? sql`FOR UPDATE` : sql``}`
    })
    const insertOne = SqlSchema.single({
      Request: NewPlan,
      Result: TreatmentPlanRow,
      execute: (p) =>
        sql`INSERT INTO treatment_plans (patient_id, provider_id, title, diagnosis_codes, goals,
              interventions, start_date, end_date, status, created_by_id)
            VALUES (${p.patientId}, ${p.providerId}, ${p.title}, ${textArray(p.diagnosisCodes)}::text[],
              ${JSON.stringify(p.goals)}::jsonb, ${textArray(p.interventions)}::text[],
              ${p.startDate}, ${p.endDate}, ${p.status}, ${p.createdById})
            RETURNING ${cols}`
    })
    const updateOne = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.Number, changes: PlanChanges, at: Schema.DateFromSelf }),
      Result: TreatmentPlanRow,
      execute: ({ at, changes, id }) => {
        const values: Record<string, unknown> = {}
        if (changes.title !== undefined) values.title = changes.title
        if (changes.provider_id !== undefined) values.provider_id = changes.provider_id
        if (changes.start_date !== undefined) values.start_date = changes.start_date
        if (changes.end_date !== undefined) values.end_date = changes.end_date
        if (changes.status !== undefined) values.status = changes.status
        const lists = [
          changes.diagnosis_codes === undefined ? sql`` : sql`, diagnosis_codes = ${textArray(changes.diagnosis_codes)}::text[]`,
          changes.interventions === undefined ? sql`` : sql`, interventions = ${textArray(changes.interventions)}::text[]`,
          changes.goals === undefined ? sql`` : sql`, goals = ${JSON.stringify(changes.goals)}::jsonb`
        ]
        const set = Object.keys(values).length === 0 ? sql`updated_at = ${at}` : sql`${sql.update(values)}, updated_at = ${at}`
        return sql`UPDATE treatment_plans SET ${set}${lists[0]!}${lists[1]!}${lists[2]!}
            WHERE id = ${id} RETURNING ${cols}`
      }
    })

    return {
      /** One page of the patient's plans, newest first, with its pagination. */
      list,
      /** The patient's newest plan. */
      last: (patientId: number) => Effect.map(orDefect(findLast(patientId)), Option.getOrUndefined),
      /** The plan, locked `FOR UPDATE` inside a transaction when `lock`. */
      findById: (id: number, lock: boolean) => orDefect(findById({ id, lock })),
      insert: (plan: NewPlan) => orDefect(insertOne(plan)),
      /** Writes the given fields (`updated_at` always) and returns the plan. */
      update: (id: number, changes: PlanChanges) => orDefect(Effect.flatMap(now, (at) => updateOne({ id, changes, at })))
    } as const
  })
}) {}
