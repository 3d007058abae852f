/**
 * What processing a clinic video needs from ffmpeg: probe a file, convert it to an
 * H.264/AAC MP4 (or remux one), take a thumbnail. Layers: `FfmpegVideoProcessorLive` (spawns
 * ffprobe/ffmpeg) and `MemoryVideoProcessor` (handler tests).
 */
import { Context, Data, type Effect } from "effect"
import type { ProbeResult } from "../../Domain/Videos/Video.js"

/** The input is not a video we can play (unreadable, no video stream, a playlist …): never retried. */
export class NotPlayable extends Data.TaggedError("NotPlayable")<{ readonly reason: string }> {}

export interface ConvertOptions {
  /** Re-encode (libx264/aac) rather than copy the streams. */
  readonly transcode: boolean
  /** The input's duration, for the time limit and progress. */
  readonly durationSeconds: number
  /** Called with the share done (0…1) as ffmpeg reports its position (`out_time_us`). */
  readonly onProgress: (fraction: number) => Effect.Effect<void>
}

export interface VideoProcessorShape {
  /** False when ffmpeg/ffprobe are missing: processing fails with "Video processing is unavailable". */
  readonly available: boolean
  readonly probe: (file: string) => Effect.Effect<ProbeResult, NotPlayable>
  readonly convert: (input: string, output: string, options: ConvertOptions) => Effect.Effect<void, NotPlayable>
  /** A JPEG 320 px wide of the frame at `atSeconds`. */
  readonly thumbnail: (input: string, output: string, atSeconds: number, durationSeconds: number) => Effect.Effect<void, NotPlayable>
}

export class VideoProcessor extends Context.Tag("app/VideoProcessor")<VideoProcessor, VideoProcessorShape>() {}
