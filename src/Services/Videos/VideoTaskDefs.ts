/** The clinic video jobs: process one video, remove a deleted one's files, sweep abandoned uploads. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { VideoProcessing } from "./VideoProcessing.js"

/** Runs, first included, before a video whose processing keeps crashing is marked failed. */
export const processMaxAttempts = 3

export const processVideoTask = defineTask({
  name: "process_video",
  payload: Schema.Struct({ video_id: Schema.Int }),
  run: (payload, job) => Effect.flatMap(VideoProcessing, (processing) => processing.process(payload.video_id, job))
})

export const deleteVideoObjectsTask = defineTask({
  name: "delete_video_objects",
  payload: Schema.Struct({ video_id: Schema.Int, upload_id: Schema.NullOr(Schema.String) }),
  run: (payload) => Effect.flatMap(VideoProcessing, (processing) => processing.removeObjects(payload.video_id, payload.upload_id))
})

/** Hourly: uploads idle 24 h fail ("Upload was not completed") and are aborted. */
export const sweepVideoUploadsTask = defineTask({
  name: "sweep_video_uploads",
  payload: Schema.Unknown,
  run: () => Effect.flatMap(VideoProcessing, (processing) => processing.sweepUploads)
})
