/** ECM events (ECM §4.2): decode, call `Events`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { EventList, EventResponse, eventsPageSize } from "../../../Api/Ecm/Events.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { Events } from "../../../Services/Ecm/Events.js"

export const HttpEcmEventsLive = HttpApiBuilder.group(Api, "ecmEvents", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.map(
          events.list(path.patient_id, {
            eventType: urlParams.event_type,
            startDate: urlParams.start_date,
            endDate: urlParams.end_date
          }, pageRequest(urlParams, eventsPageSize)),
          (listed) => EventList.make(listed, true)
        ))
      .handle("show", ({ path }) => Effect.map(events.show(path.patient_id, path.id), (event) => EventResponse.make({ event }, true)))
      .handle("counts", ({ path, urlParams }) => events.counts(path.patient_id, urlParams.start_date, urlParams.end_date))
  }))
