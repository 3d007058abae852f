/** Admin supervisors (general §4.15). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { providersPageSize } from "../../../Api/Providers/Providers.js"
import { Providers } from "../../../Services/Providers/Providers.js"

export const HttpSupervisorsLive = HttpApiBuilder.group(Api, "supervisors", (handlers) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    return handlers.handle("list", ({ urlParams }) =>
      providers.supervisors({ active: urlParams.active, specialty: urlParams.specialty }, pageRequest(urlParams, providersPageSize)))
  }))
