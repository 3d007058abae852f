/** ECM activities (ECM §4.1): decode, take the caller, call `Activities`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { activitiesPageSize, ActivityDetailResponse, ActivityList, CommentResponse, CreatedActivityResponse } from "../../../Api/Ecm/Activities.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Activities } from "../../../Services/Ecm/Activities.js"

export const HttpEcmActivitiesLive = HttpApiBuilder.group(Api, "ecmActivities", (handlers) =>
  Effect.gen(function*() {
    const activities = yield* Activities
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.map(
          activities.list(path.patient_id, {
            activityType: urlParams.activity_type,
            assignedToId: urlParams.assigned_to_id,
            status: urlParams.status
          }, pageRequest(urlParams, activitiesPageSize)),
          (listed) => ActivityList.make(listed, true)
        ))
      .handle("show", ({ path }) =>
        Effect.map(activities.show(path.patient_id, path.id), (activity) => ActivityDetailResponse.make({ activity }, true)))
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => activities.create(caller.id, path.patient_id, payload.activity)).pipe(
          Effect.map((activity) => CreatedActivityResponse.make({ activity }, true))
        ))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => activities.update(caller.id, path.patient_id, path.id, payload.activity)).pipe(
          Effect.map((activity) => ActivityDetailResponse.make({ activity }, true))
        ))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => activities.remove(caller.id, path.patient_id, path.id)))
      .handle("comment", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => activities.comment(caller.id, path.patient_id, path.activity_id, payload.comment.body)).pipe(
          Effect.map((comment) => CommentResponse.make({ comment }, true))
        ))
  }))
