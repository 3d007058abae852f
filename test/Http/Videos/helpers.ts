/** Shared by the clinic video tests: people, clips made with ffmpeg (never downloaded), upload steps. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import type { CreateVideoRequest, StartUploadRequest, Upload } from "../../../src/Api/Videos/Videos.js"
import type { VideoId } from "../../../src/Domain/Ids.js"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryVideoProcessor } from "../../../src/Layers/MemoryVideoProcessor.js"
import { VideoProcessing } from "../../../src/Services/Videos/VideoProcessing.js"
import type { VideoProcessor } from "../../../src/Services/Videos/VideoProcessor.js"
import { deleteVideoObjectsTask, processVideoTask, sweepVideoUploadsTask } from "../../../src/Services/Videos/VideoTaskDefs.js"
import { clientAs, request, signIn } from "../../support/app.js"
import { ffmpegPath } from "../../support/machineTools.js"
import { insertAppointment, insertPatient } from "../Billing/helpers.js"
import { adminToken, insertUser, makeProvider, password } from "../Providers/helpers.js"

export { adminToken, insertAppointment, insertPatient, insertUser, makeProvider, password }

export const videosPath = "/v1/clinic/videos"

export interface VideoBody {
  readonly id: number
  readonly status: string
  readonly title: string
  readonly duration_seconds: number | null
  readonly file_url: string | null
  readonly thumbnail_url: string | null
  readonly patient_id: number | null
  readonly provider_id: number | null
}

export const tokenOf = (userId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${userId}`.pipe(Effect.orDie)
    return yield* signIn(row!.email, password)
  })

/** A provider (user, profile, token). */
export const provider = (admin: string, role: "provider" | "supervisor" = "provider") =>
  Effect.gen(function*() {
    const made = yield* makeProvider(admin, role)
    return { ...made, token: yield* tokenOf(made.userId) }
  })

/** A parent with a patient of their own. */
export const family = Effect.gen(function*() {
  const userId = yield* insertUser({ role: "parent" })
  const patientId = yield* insertPatient({ userId })
  return { userId, patientId, token: yield* tokenOf(userId) }
})

export const createVideo = (token: string, video: Record<string, unknown>) =>
  request("POST", videosPath, { token, body: { video } })

/** A video created through the typed client. */
export const createdVideo = (token: string, video: CreateVideoRequest["video"]) =>
  Effect.flatMap(clientAs(token), (client) => client.videos.create({ payload: { video } })).pipe(Effect.map((response) => response.video))

export type UploadBody = Upload

export const startUpload = (token: string, id: number, upload: Record<string, unknown>) =>
  request("POST", `${videosPath}/${id}/upload`, { token, body: { upload } })

/** An upload started through the typed client: its part size, count and part URLs. */
export const startedUpload = (token: string, id: VideoId, upload: StartUploadRequest["upload"]) =>
  Effect.flatMap(clientAs(token), (client) => client.videos.startUpload({ path: { id }, payload: { upload } })).pipe(
    Effect.map((response) => response.upload)
  )

const videoTasks = [processVideoTask, deleteVideoObjectsTask, sweepVideoUploadsTask]

/** Runs every due video job once, processing with `processor` (the app's ffmpeg layer unless told otherwise). */
export const runVideoJobs = (processor?: Layer.Layer<MemoryVideoProcessor | VideoProcessor>) =>
  processor === undefined
    ? runDueJobs(videoTasks)
    : runDueJobs(videoTasks).pipe(Effect.provide(VideoProcessing.Default.pipe(Layer.provide(processor))))

/** The same with the `VideoProcessor` of the context (a memory processor the test holds on to). */
export const runVideoJobsHere = runDueJobs(videoTasks).pipe(Effect.provide(VideoProcessing.Default))

/** Makes retried jobs due now (graphile-worker backs off exponentially). */
export const jobsDueNow = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL`.pipe(Effect.orDie))

const runFfmpeg = (args: ReadonlyArray<string>) =>
  Effect.async<void>((resume) => {
    const child = spawn(ffmpegPath, ["-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "2", ...args, "-y"], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => void (stderr += String(chunk)))
    child.on("close", (code) => resume(code === 0 ? Effect.void : Effect.dieMessage(`ffmpeg: ${stderr}`)))
  })

/** A clip the processor accepts: H.264/AAC MP4, `seconds` long, 320x240 (smaller when asked). */
export const mp4Clip = (dir: string, seconds = 3, size = "320x240") =>
  Effect.as(runFfmpeg([
    "-f", "lavfi", "-i", `testsrc=duration=${seconds}:size=${size}:rate=25`,
    "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`,
    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path.join(dir, `clip-${seconds}.mp4`)
  ]), path.join(dir, `clip-${seconds}.mp4`))

/** A VP9/Opus WebM. */
export const webmClip = (dir: string, seconds = 3) =>
  Effect.as(runFfmpeg([
    "-f", "lavfi", "-i", `testsrc=duration=${seconds}:size=320x240:rate=25`,
    "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`,
    "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus", "-shortest",
    path.join(dir, "clip.webm")
  ]), path.join(dir, "clip.webm"))

/** A renamed HLS playlist pointing at a local file: must never be opened. */
export const hlsPlaylist = (target: string) =>
  new TextEncoder().encode(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile://${target}\n#EXT-X-ENDLIST\n`)
