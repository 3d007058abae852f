/** The only SQL on `insurance_plans` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { InsurancePlan } from "../../Domain/Billing/Insurance.js"
import { InsurancePlanId } from "../../Domain/Ids.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"
import { likePattern } from "../SqlFilters.js"

/** A plan as stored: the representation's fields, timestamps as the driver gives them. */
const PlanRow = Schema.Struct({ ...InsurancePlan.fields, created_at: Schema.DateFromSelf, updated_at: Schema.DateFromSelf })
const toPlan = (row: typeof PlanRow.Type) => InsurancePlan.make(row, true)

export const NewPlan = Schema.Struct({
  name: Schema.String,
  payer_id: Schema.String,
  claim_filing_indicator: InsurancePlan.fields.claim_filing_indicator,
  active: Schema.Boolean
})

/** Null fields keep their value. */
export const PlanChange = Schema.Struct({
  id: Schema.Number,
  name: Schema.NullOr(Schema.String),
  payer_id: Schema.NullOr(Schema.String),
  claim_filing_indicator: Schema.NullOr(InsurancePlan.fields.claim_filing_indicator),
  active: Schema.NullOr(Schema.Boolean)
})

export const PlanName = Schema.Struct({ id: InsurancePlanId, name: Schema.String })

export class InsurancePlansRepo extends Effect.Service<InsurancePlansRepo>()("app/InsurancePlansRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const listPage = yield* makeListPage
    const byName = { name: sql`lower(name)` }

    const findById = SqlSchema.findOne({
      Request: Schema.Number,
      Result: PlanRow,
      execute: (id) => sql`SELECT * FROM insurance_plans WHERE id = ${id}`
    })

    /** A page of the plans whose name or payer id contains `search`, by name. */
    const list = (search: string | null, page: PageRequest) =>
      Effect.map(
        listPage({
          select: sql`*`,
          from: sql`insurance_plans`,
          row: PlanRow,
          filters: [search !== null && sql`(name ILIKE ${likePattern(search)} ESCAPE '\\' OR payer_id ILIKE ${likePattern(search)} ESCAPE '\\')`],
          sort: { columns: byName, by: "name", dir: "ASC", id: sql`id` }
        }, page),
        ({ pagination, rows }) => ({ rows: rows.map(toPlan), pagination })
      )

    const insertOne = SqlSchema.single({
      Request: NewPlan,
      Result: PlanRow,
      execute: (plan) =>
        sql`INSERT INTO insurance_plans (name, payer_id, claim_filing_indicator, active)
          VALUES (${plan.name}, ${plan.payer_id}, ${plan.claim_filing_indicator}, ${plan.active}) RETURNING *`
    })

    const updateOne = SqlSchema.findOne({
      Request: Schema.Struct({ ...PlanChange.fields, at: Schema.DateFromSelf }),
      Result: PlanRow,
      execute: (change) =>
        sql`UPDATE insurance_plans SET
            name = coalesce(${change.name}, name),
            payer_id = coalesce(${change.payer_id}, payer_id),
            claim_filing_indicator = coalesce(${change.claim_filing_indicator}, claim_filing_indicator),
            active = coalesce(${change.active}::boolean, active),
            updated_at = ${change.at}
          WHERE id = ${change.id} RETURNING *`
    })

    const findActive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: (id) => sql`SELECT active FROM insurance_plans WHERE id = ${id}`
    })

    const activeNames = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PlanName,
      execute: () => sql`SELECT id, name FROM insurance_plans WHERE active ORDER BY lower(name), id LIMIT 1000`
    })

    return {
      findById: (id: number) => Effect.map(orDefect(findById(id)), Option.map(toPlan)),
      list,
      insert: (plan: typeof NewPlan.Type) => Effect.map(orDefect(insertOne(plan)), toPlan),
      /** The plan as changed, or none when there is no such plan. */
      update: (change: typeof PlanChange.Type) =>
        Effect.flatMap(now, (at) => Effect.map(orDefect(updateOne({ ...change, at })), Option.map(toPlan))),
      /** Whether the plan exists and is active (a coverage may only name such a plan). */
      isActive: (id: number) => Effect.map(orDefect(findActive(id)), Option.exists((row) => row.active)),
      /** Active plans by name, for the claim filters (at most 1000). */
      activeNames: orDefect(activeNames(undefined))
    } as const
  })
}) {}
