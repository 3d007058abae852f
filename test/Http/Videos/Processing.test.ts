/**
 * Clinic video processing with the real ffmpeg on the disk store: clips made here with
 * lavfi (never downloaded), uploaded through the app's signed part route, processed by the
 * `process_video` job: MP4 remuxed with duration 3 and a 320-px JPEG, WebM transcoded to
 * H.264/AAC, corrupt bytes and a renamed HLS playlist failed at once, monotonic progress (20 s
 * clip), playback with Range (206).
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { DiskObjectStoreLive } from "../../../src/Layers/DiskObjectStore.js"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { SigningSecretLive } from "../../../src/Layers/SigningSecret.js"
import type { StartUploadRequest } from "../../../src/Api/Videos/Videos.js"
import type { VideoId } from "../../../src/Domain/Ids.js"
import { clientAs, request, tempDir, testConfig } from "../../support/app.js"
import { recordVideoProgress } from "../../support/fixtures.js"
import { ffprobePath } from "../../support/machineTools.js"
import { adminToken, createdVideo, hlsPlaylist, mp4Clip, provider, runVideoJobs, startedUpload, videosPath, webmClip } from "./helpers.js"

/** The app with the local-disk store (its signed part and download routes mounted). */
const DiskApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(
    MemoryTelephony.layer, MemoryMailer.layer, MemoryPush.layer, DiskObjectStoreLive.pipe(Layer.provide(SigningSecretLive))
  )),
  Layer.provideMerge(testConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

const local = (url: string) => url.replace("http://localhost", "")

/** The client's PUT of a part to its signed URL; the ETag. */
const putPart = (url: string, body: Uint8Array) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.put(local(url)).pipe(HttpClientRequest.bodyUint8Array(body)))
    expect(response.status).toBe(200)
    return response.headers["etag"]!
  }).pipe(Effect.scoped, Effect.orDie)

const getBytes = (url: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.get(local(url)).pipe(HttpClientRequest.setHeaders(headers)))
    return { status: response.status, headers: response.headers, body: new Uint8Array(yield* response.arrayBuffer) }
  }).pipe(Effect.scoped, Effect.orDie)

/** Creates a video and uploads `file` through the part route (the typed client for the API's steps); the video id. */
const upload = (token: string, file: Uint8Array, contentType: StartUploadRequest["upload"]["content_type"] = "video/mp4") =>
  Effect.gen(function*() {
    const video = yield* createdVideo(token, { title: "Clip", category: "training" })
    const plan = yield* startedUpload(token, video.id, { filename: "clip", content_type: contentType, size_bytes: file.byteLength })
    const parts = yield* Effect.forEach(plan.parts, (part) =>
      Effect.map(
        putPart(part.url, file.subarray((part.part_number - 1) * plan.part_size, part.part_number * plan.part_size)),
        (etag) => ({ part_number: part.part_number, etag })
      ))
    const done = yield* (yield* clientAs(token)).videos.completeUpload({ path: { id: video.id }, payload: { parts } })
    expect(done.video.status).toBe("processing")
    return video.id
  })

const readClip = (made: Effect.Effect<string>) =>
  Effect.flatMap(made, (file) => Effect.promise(async () => new Uint8Array(await fs.readFile(file))))

const show = (token: string, id: VideoId) =>
  Effect.flatMap(clientAs(token), (client) => client.videos.show({ path: { id } })).pipe(Effect.map((response) => response.video))

const statusOf = (token: string, id: VideoId) => Effect.flatMap(clientAs(token), (client) => client.videos.status({ path: { id } }))

/** ffprobe of a local file: codec names by stream type and the format. */
const probe = (file: string) =>
  Effect.async<{ format: string; codecs: Record<string, string> }>((resume) => {
    const child = spawn(ffprobePath, ["-v", "error", "-of", "json", "-show_format", "-show_streams", file])
    let out = ""
    child.stdout.on("data", (chunk) => void (out += String(chunk)))
    child.on("close", () => {
      const json = JSON.parse(out) as { format: { format_name: string }; streams: Array<{ codec_type: string; codec_name: string }> }
      resume(Effect.succeed({
        format: json.format.format_name,
        codecs: Object.fromEntries(json.streams.map((s) => [s.codec_type, s.codec_name]))
      }))
    })
  })

/** Width and height of a baseline or progressive JPEG (its SOF segment). */
const jpegSize = (jpeg: Uint8Array) => {
  expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8])
  let i = 2
  while (i < jpeg.length) {
    const marker = jpeg[i + 1]!
    const length = (jpeg[i + 2]! << 8) + jpeg[i + 3]!
    if (marker >= 0xc0 && marker <= 0xc2) return { height: (jpeg[i + 5]! << 8) + jpeg[i + 6]!, width: (jpeg[i + 7]! << 8) + jpeg[i + 8]! }
    i += 2 + length
  }
  throw new Error("no SOF segment")
}

layer(DiskApp, { timeout: 120_000 })("clinic video processing (ffmpeg, disk store)", (it) => {
  it.scoped("an MP4 is remuxed: duration 3, a 320-px JPEG, the file honours Range; delete leaves no object", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const dir = yield* tempDir
      const clip = yield* readClip(mp4Clip(dir))
      const id = yield* upload(p.token, clip)
      yield* runVideoJobs()
      const video = yield* show(p.token, id)
      expect(video.status).toBe("completed")
      expect(video.duration_seconds).toBeCloseTo(3, 0)
      const thumbnail = yield* getBytes(video.thumbnail_url!)
      expect(thumbnail.status).toBe(200)
      expect(jpegSize(thumbnail.body)).toEqual({ width: 320, height: 240 })

      const whole = yield* getBytes(video.file_url!)
      expect(whole.status).toBe(200)
      expect(whole.headers["accept-ranges"]).toBe("bytes")
      const file = path.join(dir, "playback.mp4")
      yield* Effect.promise(() => fs.writeFile(file, whole.body))
      expect(yield* probe(file)).toMatchObject({ codecs: { video: "h264", audio: "aac" } })
      const ranged = yield* getBytes(video.file_url!, { range: "bytes=0-99" })
      expect(ranged.status).toBe(206)
      expect(ranged.body.byteLength).toBe(100)
      expect(ranged.headers["content-range"]).toBe(`bytes 0-99/${whole.body.byteLength}`)
      expect((yield* getBytes(video.file_url!, { range: `bytes=${whole.body.byteLength}-` })).status).toBe(416)

      const sql = yield* SqlClient.SqlClient
      const [status] = yield* sql<{ probe: unknown }>`SELECT probe FROM videos WHERE id = ${id}`
      expect(JSON.stringify(status!.probe)).not.toContain("tags")
      yield* (yield* clientAs(p.token)).videos.delete({ path: { id } })
      yield* runVideoJobs()
      expect((yield* getBytes(video.file_url!)).status).toBe(404)
      expect((yield* getBytes(video.thumbnail_url!)).status).toBe(404)
    }), 180_000)

  it.scoped("a VP9/Opus WebM becomes H.264/AAC MP4", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const dir = yield* tempDir
      const clip = yield* readClip(webmClip(dir))
      const id = yield* upload(p.token, clip, "video/webm")
      yield* runVideoJobs()
      const video = yield* show(p.token, id)
      expect(video.status).toBe("completed")
      const file = path.join(dir, "out.mp4")
      const body = (yield* getBytes(video.file_url!)).body
      yield* Effect.promise(() => fs.writeFile(file, body))
      const probed = yield* probe(file)
      expect(probed.codecs).toEqual({ video: "h264", audio: "aac" })
      expect(probed.format).toContain("mp4")
    }), 180_000)

  it.scoped("corrupt bytes and a renamed HLS playlist fail at once, with no retry", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const dir = yield* tempDir
      const secret = path.join(dir, "secret.txt")
      yield* Effect.promise(() => fs.writeFile(secret, "not for ffmpeg"))
      const corrupt = yield* upload(p.token, new Uint8Array(4096).map((_, i) => (i * 37) % 256))
      const hls = yield* upload(p.token, hlsPlaylist(secret))
      yield* runVideoJobs()
      for (const id of [corrupt, hls]) {
        expect(yield* statusOf(p.token, id)).toMatchObject({ status: "failed", error_message: "File is not a playable video", estimated_completion: null })
      }
      const sql = yield* SqlClient.SqlClient
      const [pending] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs`
      expect(pending!.n).toBe(0)
    }), 180_000)

  it.scoped("progress only grows, 100 once completed, written at most about once a second (20 s clip)", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const dir = yield* tempDir
      // Every write of the row's progress, as the database saw it.
      const progressOf = yield* recordVideoProgress
      const clip = yield* readClip(mp4Clip(dir, 20, "160x120"))
      const id = yield* upload(p.token, clip, "video/quicktime")
      yield* runVideoJobs()
      const log = yield* progressOf(id)
      expect(log.length).toBeGreaterThanOrEqual(3)
      expect(log.at(-1)).toBe(100)
      expect(log.slice(0, -1).every((value) => value < 100)).toBe(true)
      expect([...log].sort((a, b) => a - b)).toEqual(log)
      expect(yield* statusOf(p.token, id)).toMatchObject({ status: "completed", progress_percentage: 100, error_message: null })
      // The wire format of the time (the typed client decodes any date).
      expect((yield* request("GET", `${videosPath}/${id}/status`, { token: p.token })).body).toMatchObject({ estimated_completion: expect.stringMatching(/Z$/) })
    }), 180_000)
})
