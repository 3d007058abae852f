/**
 * `VideoProcessor` on Debian's ffmpeg/ffprobe (5.1, security-patched): `child_process.spawn` with
 * argument arrays (no shell). Uploads are hostile, so every call reads only local files in the
 * formats we take (`-protocol_whitelist file -format_whitelist …`: a renamed HLS or concat
 * playlist could otherwise make ffmpeg read other files or URLs), with `-threads 2`, a lowered
 * priority and a time limit (4 × duration + 5 min), killed past it.
 */
import { Effect, Layer, Queue } from "effect"
import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { access } from "node:fs/promises"
import * as os from "node:os"
import type { ProbeResult } from "../Domain/Videos/Video.js"
import { AppConfig } from "../Services/AppConfig.js"
import { NotPlayable, VideoProcessor } from "../Services/Videos/VideoProcessor.js"

/** Containers ffmpeg may open: MP4/QuickTime family and Matroska/WebM. */
export const inputGuards = [
  "-protocol_whitelist", "file",
  "-format_whitelist", "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm"
] as const

const threads = ["-threads", "2"] as const
/** How long a call may run: 4 × the video's duration + 5 minutes. */
export const timeLimitMs = (durationSeconds: number) => Math.ceil((4 * Math.max(0, durationSeconds) + 300) * 1000)

interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
}

/**
 * Runs a binary to its end (or kills it at `limitMs`), at a lowered priority; `onLine` sees each
 * stdout line as it comes. Output kept in memory is bounded (ffprobe's JSON, ffmpeg's last errors).
 */
const run = (binary: string, args: ReadonlyArray<string>, limitMs: number, onLine?: (line: string) => void) =>
  Effect.async<RunResult>((resume) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], shell: false })
    if (child.pid !== undefined) {
      try {
        os.setPriority(child.pid, 10)
      } catch {
        // Not permitted here: run at the normal priority.
      }
    }
    let stdout = ""
    let stderr = ""
    let pending = ""
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, limitMs)
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (onLine) {
        pending += chunk
        const lines = pending.split("\n")
        pending = lines.pop() ?? ""
        for (const line of lines) onLine(line)
      } else if (stdout.length < 4 * 1024 * 1024) {
        stdout += chunk
      }
    })
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-8192)
    })
    child.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code: -1, stdout, stderr: String(error), timedOut }))
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr, timedOut }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

const isExecutable = (file: string) => access(file, constants.X_OK).then(() => true, () => false)

export const makeFfmpegVideoProcessor = (ffmpeg: string, ffprobe: string, available: boolean) =>
  VideoProcessor.of({
    available,
    probe: Effect.fn("VideoProcessor.probe")(function*(file) {
      const result = yield* run(ffprobe, [
        "-v", "error", ...inputGuards, ...threads, "-of", "json", "-show_format", "-show_streams", "--", file
      ], timeLimitMs(0))
      if (result.code !== 0) return yield* Effect.fail(new NotPlayable({ reason: "probe failed" }))
      try {
        return JSON.parse(result.stdout) as ProbeResult
      } catch {
        return yield* Effect.fail(new NotPlayable({ reason: "probe output unreadable" }))
      }
    }),
    convert: Effect.fn("VideoProcessor.convert")(function*(input, output, options) {
      yield* Effect.annotateCurrentSpan({ "video.transcode": options.transcode })
      const codecs = options.transcode
        ? ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p", "-c:a", "aac"]
        : ["-c", "copy"]
      const durationUs = Math.max(1, options.durationSeconds * 1_000_000)
      const updates = yield* Queue.sliding<number>(1)
      const result = yield* Effect.raceFirst(
        run(ffmpeg, [
          "-nostdin", "-hide_banner", "-loglevel", "error", ...inputGuards, "-i", input, ...threads,
          "-map", "0:v:0", "-map", "0:a:0?", ...codecs, "-movflags", "+faststart", "-nostats", "-progress", "pipe:1",
          "-f", "mp4", "-y", output
        ], timeLimitMs(options.durationSeconds), (line) => {
          const match = /^out_time_us=(\d+)$/.exec(line.trim())
          if (match) Queue.unsafeOffer(updates, Number(match[1]) / durationUs)
        }),
        // ffmpeg's position, reported as it comes (the latest only, should the writer fall behind).
        Effect.forever(Effect.flatMap(Queue.take(updates), options.onProgress)).pipe(Effect.zipRight(Effect.never))
      )
      if (result.code !== 0) {
        return yield* Effect.fail(new NotPlayable({ reason: result.timedOut ? "time limit" : "conversion failed" }))
      }
      yield* options.onProgress(1)
    }),
    thumbnail: Effect.fn("VideoProcessor.thumbnail")(function*(input, output, atSeconds, durationSeconds) {
      const result = yield* run(ffmpeg, [
        "-nostdin", "-hide_banner", "-loglevel", "error", ...inputGuards, ...threads, "-ss", atSeconds.toFixed(3), "-i", input,
        "-frames:v", "1", "-vf", "scale=320:-2", "-f", "image2", "-c:v", "mjpeg", "-y", output
      ], timeLimitMs(durationSeconds))
      if (result.code !== 0) return yield* Effect.fail(new NotPlayable({ reason: "thumbnail failed" }))
    })
  })

/** Warns at start-up when ffmpeg or ffprobe is missing: processing then fails each video with a message. */
export const FfmpegVideoProcessorLive: Layer.Layer<VideoProcessor, never, AppConfig> = Layer.effect(
  VideoProcessor,
  Effect.gen(function*() {
    const { clinicVideos } = yield* AppConfig
    const available = yield* Effect.promise(async () =>
      (await isExecutable(clinicVideos.ffmpegPath)) && (await isExecutable(clinicVideos.ffprobePath))
    )
    if (!available) {
      yield* Effect.logWarning(
        "ffmpeg/ffprobe not found: clinic videos cannot be processed (apt-get install ffmpeg, or set FFMPEG_PATH and FFPROBE_PATH)"
      )
    }
    return makeFfmpegVideoProcessor(clinicVideos.ffmpegPath, clinicVideos.ffprobePath, available)
  })
)
