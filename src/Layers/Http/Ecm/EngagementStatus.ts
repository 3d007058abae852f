/** ECM engagement status: decode, take the caller, call `EngagementStatuses`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { CurrentUser } from "../../../Api/Security.js"
import { EngagementStatuses } from "../../../Services/Ecm/EngagementStatuses.js"

export const HttpEcmEngagementStatusLive = HttpApiBuilder.group(Api, "ecmEngagementStatus", (handlers) =>
  Effect.gen(function*() {
    const statuses = yield* EngagementStatuses
    return handlers
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(statuses.update(caller.id, path.id, payload), (entry) => ({
            message: `Engagement status changed to ${entry.status}`,
            engagement_status: entry
          }))))
      .handle("show", ({ path }) => statuses.show(path.id))
  }))
