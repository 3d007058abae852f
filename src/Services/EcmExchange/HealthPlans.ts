/** Health plans (docs/ecm-exchange.md): admin CRUD, audited. */
import { Effect, Option } from "effect"
import type { CreateHealthPlanRequest, UpdateHealthPlanRequest } from "../../Api/EcmExchange/HealthPlans.js"
import { HealthPlan, HealthPlanList } from "../../Api/EcmExchange/HealthPlans.js"
import { ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull } from "../Repository.js"
import { now } from "../Time.js"
import { type PlanFields, HealthPlansRepo, type PlanRow } from "./HealthPlansRepo.js"

export const healthPlansPageSize = 25

const toPlan = (row: PlanRow) => HealthPlan.make(row, true)
const distinct = (npis: ReadonlyArray<string>) => [...new Set(npis)]

export class HealthPlans extends Effect.Service<HealthPlans>()("app/EcmHealthPlans", {
  dependencies: [HealthPlansRepo.Default],
  effect: Effect.gen(function*() {
    const plans = yield* HealthPlansRepo
    const audit = yield* AuditLog

    const found = (id: number) =>
      Effect.flatMap(plans.find(id), Option.match({ onNone: () => Effect.fail(ecmNotFound("Health plan")), onSome: Effect.succeed }))

    const create = Effect.fn("HealthPlans.create")(function*(actorId: number, body: CreateHealthPlanRequest) {
      const fields: PlanFields = {
        name: body.name.trim(),
        mcp_id: body.mcp_id.trim(),
        contact_name: blankToNull(body.contact_name),
        contact_email: blankToNull(body.contact_email),
        contact_phone: blankToNull(body.contact_phone),
        active: body.active ?? true,
        provider_npis: distinct(body.provider_npis ?? []),
        provider_tin: blankToNull(body.provider_tin),
        provider_type: blankToNull(body.provider_type)
      }
      const row = yield* plans.insert(fields, yield* now)
      yield* audit.record({ actorId, action: "health_plan.create", targetType: "health_plan", targetId: row.id })
      return toPlan(row)
    })

    const update = Effect.fn("HealthPlans.update")(function*(actorId: number, id: number, body: UpdateHealthPlanRequest) {
      yield* Effect.annotateCurrentSpan({ "health_plan.id": id })
      const current = yield* found(id)
      const keep = <A>(value: A | undefined, old: A) => (value === undefined ? old : value)
      const fields: PlanFields = {
        name: body.name === undefined ? current.name : body.name.trim(),
        mcp_id: body.mcp_id === undefined ? current.mcp_id : body.mcp_id.trim(),
        contact_name: body.contact_name === undefined ? current.contact_name : blankToNull(body.contact_name),
        contact_email: body.contact_email === undefined ? current.contact_email : blankToNull(body.contact_email),
        contact_phone: body.contact_phone === undefined ? current.contact_phone : blankToNull(body.contact_phone),
        active: keep(body.active, current.active),
        provider_npis: body.provider_npis === undefined ? current.provider_npis : distinct(body.provider_npis),
        provider_tin: body.provider_tin === undefined ? current.provider_tin : blankToNull(body.provider_tin),
        provider_type: body.provider_type === undefined ? current.provider_type : blankToNull(body.provider_type)
      }
      const row = yield* plans.update(id, fields, yield* now)
      if (Option.isNone(row)) return yield* Effect.fail(ecmNotFound("Health plan"))
      yield* audit.record({ actorId, action: "health_plan.update", targetType: "health_plan", targetId: id })
      return toPlan(row.value)
    })

    const show = (id: number) => Effect.map(found(id), toPlan)

    const list = (page: PageRequest) =>
      Effect.map(plans.list(page), ({ pagination, rows }) => HealthPlanList.make({ health_plans: rows.map(toPlan), pagination }, true))

    return { create, update, show, list } as const
  })
}) {}
