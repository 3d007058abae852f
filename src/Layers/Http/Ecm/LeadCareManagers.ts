/** Lead care managers (ECM §4.8): decode, take the caller, call `LeadCareManagers`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { LeadCareManagers, leadCareManagersPageSize } from "../../../Services/Ecm/LeadCareManagers.js"

export const HttpEcmLeadCareManagersLive = HttpApiBuilder.group(Api, "ecmLeadCareManagers", (handlers) =>
  Effect.gen(function*() {
    const managers = yield* LeadCareManagers
    return handlers
      .handle("list", ({ urlParams }) =>
        managers.list({ search: urlParams.search, role: urlParams.role }, pageRequest(urlParams, leadCareManagersPageSize)))
      .handle("assign", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => managers.assign(caller.id, payload, "assign")))
      .handle("update", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => managers.assign(caller.id, payload, "update")))
      .handle("remove", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => managers.remove(caller.id, payload.patient_id, payload.role)))
      .handle("forPatient", ({ path }) => managers.forPatient(path.patient_id))
      .handle("bulkAssign", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => managers.bulkAssign(caller.id, payload.assignments)))
  }))
