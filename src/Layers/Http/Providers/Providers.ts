/** Admin providers (general §4.9): decode, take the caller, call `Providers`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { providersPageSize } from "../../../Api/Providers/Providers.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Providers } from "../../../Services/Providers/Providers.js"

export const HttpProvidersLive = HttpApiBuilder.group(Api, "providers", (handlers) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    return handlers
      .handle("list", ({ urlParams }) =>
        providers.list({ search: urlParams.search, sortBy: urlParams.sort_by, sortDir: urlParams.sort_dir }, pageRequest(urlParams, providersPageSize)))
      .handle("filter", ({ payload }) =>
        providers.list({
          // Of `filters`, only the search query is honoured (general §4.9).
          search: payload.search ?? payload.filters?.search,
          sortBy: payload.sort_by,
          sortDir: payload.sort_dir
        }, pageRequest(payload, providersPageSize)))
      .handle("show", ({ path }) => Effect.map(providers.show(path.id), (provider) => ({ provider })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => providers.update(caller.id, path.id, payload.provider)).pipe(
          Effect.map((provider) => ({ provider }))
        ))
  }))
