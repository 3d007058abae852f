/** Clinic videos (general §4.10): decode, take the caller, call the video services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { videosPageSize } from "../../../Api/Videos/Videos.js"
import { Videos } from "../../../Services/Videos/Videos.js"
import { VideoUploads } from "../../../Services/Videos/VideoUploads.js"

export const HttpVideosLive = HttpApiBuilder.group(Api, "videos", (handlers) =>
  Effect.gen(function*() {
    const videos = yield* Videos
    const uploads = yield* VideoUploads
    const video = <E, R>(effect: Effect.Effect<import("../../../Domain/Videos/Video.js").Video, E, R>) =>
      Effect.map(effect, (video) => ({ video }))
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          videos.list(caller, {
            category: urlParams.category,
            status: urlParams.status,
            patientId: urlParams.patient_id,
            providerId: urlParams.provider_id
          }, pageRequest(urlParams, videosPageSize))))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => video(videos.create(caller, payload.video))))
      .handle("show", ({ path }) => Effect.flatMap(CurrentUser, (caller) => video(videos.show(caller, path.id))))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentUser, (caller) => video(videos.update(caller, path.id, payload.video))))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => videos.remove(caller, path.id)))
      .handle("status", ({ path }) => Effect.flatMap(CurrentUser, (caller) => videos.status(caller, path.id)))
      .handle("startUpload", ({ path, payload }) => Effect.flatMap(CurrentUser, (caller) => uploads.start(caller, path.id, payload.upload)))
      .handle("showUpload", ({ path }) => Effect.flatMap(CurrentUser, (caller) => uploads.show(caller, path.id)))
      .handle("completeUpload", ({ path, payload }) => Effect.flatMap(CurrentUser, (caller) => video(uploads.complete(caller, path.id, payload))))
      .handle("abortUpload", ({ path }) => Effect.flatMap(CurrentUser, (caller) => uploads.abort(caller, path.id)))
      .handle("retry", ({ path }) => Effect.flatMap(CurrentUser, (caller) => video(videos.retry(caller, path.id))))
  }))
