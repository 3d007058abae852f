/** Clinic videos: records, uploads and the processing the job worker does. */
import { Layer } from "effect"
import { VideoProcessing } from "../../../Services/Videos/VideoProcessing.js"
import { deleteVideoObjectsTask, processVideoTask, sweepVideoUploadsTask } from "../../../Services/Videos/VideoTaskDefs.js"
import { Videos } from "../../../Services/Videos/Videos.js"
import { VideoUploads } from "../../../Services/Videos/VideoUploads.js"
import { defineArea } from "../../Area.js"
import { FfmpegVideoProcessorLive } from "../../FfmpegVideoProcessor.js"
import { HttpVideosLive } from "./Videos.js"

export const VideosArea = defineArea({
  handlers: HttpVideosLive,
  services: VideoUploads.Default.pipe(
    Layer.provideMerge(Videos.Default),
    Layer.provideMerge(VideoProcessing.Default),
    Layer.provide(FfmpegVideoProcessorLive)
  ),
  tasks: [processVideoTask, deleteVideoObjectsTask, sweepVideoUploadsTask],
  // Uploads idle 24 h are failed and aborted.
  schedules: [{ task: sweepVideoUploadsTask, pattern: "29 * * * *" }]
})
