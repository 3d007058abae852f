/** Health plans and the members' return-file fields: decode, take the caller, call the services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ExchangeFields } from "../../../Services/EcmExchange/ExchangeFields.js"
import { HealthPlans, healthPlansPageSize } from "../../../Services/EcmExchange/HealthPlans.js"

export const HttpEcmHealthPlansLive = HttpApiBuilder.group(Api, "ecmHealthPlans", (handlers) =>
  Effect.gen(function*() {
    const plans = yield* HealthPlans
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(plans.create(caller.id, payload), (health_plan) => ({ health_plan }))))
      .handle("list", ({ urlParams }) => plans.list(pageRequest(urlParams, healthPlansPageSize)))
      .handle("show", ({ path }) => Effect.map(plans.show(path.id), (health_plan) => ({ health_plan })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(plans.update(caller.id, path.id, payload), (health_plan) => ({ health_plan }))))
  }))

export const HttpEcmExchangeFieldsLive = HttpApiBuilder.group(Api, "ecmExchangeFields", (handlers) =>
  Effect.gen(function*() {
    const fields = yield* ExchangeFields
    return handlers
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(fields.show(caller, path.patient_id), (exchange_fields) => ({ exchange_fields }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(fields.update(caller, path.patient_id, payload), (exchange_fields) => ({ exchange_fields }))))
  }))
