/** Admin ECM patients: decode, call `EcmPatients`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { EcmPatients, ecmPatientsPageSize } from "../../../Services/Ecm/EcmPatients.js"

export const HttpEcmPatientsLive = HttpApiBuilder.group(Api, "ecmPatients", (handlers) =>
  Effect.gen(function*() {
    const patients = yield* EcmPatients
    return handlers
      .handle("list", ({ urlParams }) =>
        patients.list({ search: urlParams.search, status: urlParams.status, providerId: urlParams.provider_id },
          pageRequest(urlParams, ecmPatientsPageSize)))
      .handle("show", ({ path }) => patients.show(path.id))
  }))
