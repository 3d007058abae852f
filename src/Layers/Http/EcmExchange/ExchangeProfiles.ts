/** Exchange profiles: decode, take the caller, call `ExchangeProfiles`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ExchangeProfiles, exchangeProfilesPageSize } from "../../../Services/EcmExchange/ExchangeProfiles.js"

export const HttpEcmExchangeProfilesLive = HttpApiBuilder.group(Api, "ecmExchangeProfiles", (handlers) =>
  Effect.gen(function*() {
    const profiles = yield* ExchangeProfiles
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(profiles.create(caller.id, payload), (exchange_profile) => ({ exchange_profile }))))
      .handle("list", ({ urlParams }) => profiles.list(pageRequest(urlParams, exchangeProfilesPageSize)))
      .handle("show", ({ path }) => Effect.map(profiles.show(path.id), (exchange_profile) => ({ exchange_profile })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(profiles.update(caller.id, path.id, payload), (exchange_profile) => ({ exchange_profile }))))
  }))
