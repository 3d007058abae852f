/** Insurance plans (admin) and patient coverage (clinic). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { insurancePlansPageSize } from "../../../Api/Billing/Insurance.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Insurance } from "../../../Services/Billing/Insurance.js"

export const HttpInsurancePlansLive = HttpApiBuilder.group(Api, "insurancePlans", (handlers) =>
  Effect.gen(function*() {
    const insurance = yield* Insurance
    return handlers
      .handle("list", ({ urlParams }) => insurance.listPlans(urlParams.search, pageRequest(urlParams, insurancePlansPageSize)))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => insurance.createPlan(caller.id, payload.insurance_plan)).pipe(
          Effect.map((insurance_plan) => ({ insurance_plan }))
        ))
      .handle("show", ({ path }) => Effect.map(insurance.findPlan(path.id), (insurance_plan) => ({ insurance_plan })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => insurance.updatePlan(caller.id, path.id, payload.insurance_plan)).pipe(
          Effect.map((insurance_plan) => ({ insurance_plan }))
        ))
  }))

export const HttpCoverageLive = HttpApiBuilder.group(Api, "coverage", (handlers) =>
  Effect.gen(function*() {
    const insurance = yield* Insurance
    return handlers
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => insurance.showCoverage(caller, path.patient_id)).pipe(Effect.map((coverage) => ({ coverage }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => insurance.setCoverage(caller, path.patient_id, payload.coverage)).pipe(
          Effect.map((coverage) => ({ coverage }))
        ))
  }))
