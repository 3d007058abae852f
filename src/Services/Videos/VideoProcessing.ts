/**
 * The `process_video` job and the clean-up jobs of clinic videos. Processing claims the
 * row (status `processing`), then: download the source to a per-job temp dir (always removed),
 * probe, transcode (or remux) to an H.264/AAC MP4 with +faststart, take a thumbnail at 10 %, store
 * both and delete the source. Progress is measured at each stage and written at most once a
 * second, never backwards. Bad input fails at once; crashes are retried (3 attempts) and, object
 * keys being fixed per video, never leave duplicates.
 */
import { Data, Effect, Fiber, Option, Ref } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import {
  maxDurationSeconds, needsTranscode, type ProbeResult, type Stage, stagePercent, videoMessages
} from "../../Domain/Videos/Video.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import type { JobContext } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { privateTempSubdir } from "../PrivateTemp.js"
import { makeTransaction } from "../Repository.js"
import { nowMillis } from "../Time.js"
import { VideoProcessor } from "./VideoProcessor.js"
import { videoKeys, VideosRepo } from "./VideosRepo.js"

/** The video cannot be processed as it is: failed with this message, not retried. */
class Permanent extends Data.TaggedError("Permanent")<{ readonly message: string }> {}

/** An upload untouched this long is given up. */
export const uploadIdleMs = 24 * 60 * 60 * 1000
/** Progress is written to the row at most this often (any instance answers the status). */
const progressWriteMs = 1000

/** ffprobe's answer without tags (titles, comments: free text that may name a patient). */
const probeSummary = (probe: ProbeResult) => ({
  format: { format_name: probe.format?.format_name ?? null, duration: probe.format?.duration ?? null },
  streams: (probe.streams ?? []).map((s) => ({
    codec_type: s.codec_type ?? null,
    codec_name: s.codec_name ?? null,
    width: (s as { width?: number }).width ?? null,
    height: (s as { height?: number }).height ?? null
  }))
})

const durationOf = (probe: ProbeResult): number => {
  const duration = Number(probe.format?.duration)
  return Number.isFinite(duration) && duration > 0 ? duration : 0
}

export class VideoProcessing extends Effect.Service<VideoProcessing>()("app/VideoProcessing", {
  dependencies: [VideosRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* VideosRepo
    const transaction = yield* makeTransaction
    const store = yield* ObjectStore
    const processor = yield* VideoProcessor
    const audit = yield* AuditLog
    const config = yield* AppConfig
    const permits = yield* Effect.makeSemaphore(config.clinicVideos.concurrency)

    const fail = (id: number, message: string) =>
      Effect.gen(function*() {
        yield* transaction(Effect.gen(function*() {
          if (yield* repo.markFailed(id, message)) {
            yield* audit.record({ actorId: null, action: "video.process_failed", targetType: "video", targetId: id })
          }
        }))
      })

    /** Writes `percent` unless it would go backwards; at most once a second unless `force`. */
    const progressWriter = (id: number) =>
      Effect.map(Ref.make({ at: Number.NEGATIVE_INFINITY, percent: -1 }), (last) => (percent: number, force = false) =>
        Effect.gen(function*() {
          const now = performance.now()
          const write = yield* Ref.modify(last, (state) => {
            if (percent <= state.percent || (!force && now - state.at < progressWriteMs)) return [false, state]
            return [true, { at: now, percent }]
          })
          if (!write) return
          yield* repo.raiseProgress(id, percent)
        }))

    const tempDir = Effect.acquireRelease(
      Effect.promise(() => privateTempSubdir(config.dataDir, "video-job-")),
      (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    )

    /** The download's share by bytes, measured on the growing file (the store streams into it). */
    const watchDownload = (file: string, size: number, report: (percent: number) => Effect.Effect<void>) =>
      Effect.forever(Effect.gen(function*() {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
        const bytes = yield* Effect.promise(() => fs.stat(file).then((s) => s.size, () => 0))
        yield* report(stagePercent("download", size > 0 ? bytes / size : 0))
      }))

    const runOnce = (id: number) =>
      Effect.gen(function*() {
        const claim = yield* repo.claimProcessing(id)
        // Deleted, already done, or never ours: nothing to do (a job may run twice).
        if (Option.isNone(claim)) return
        const claimed = claim.value
        if (!processor.available) return yield* Effect.fail(new Permanent({ message: videoMessages.unavailable }))
        const keys = videoKeys(id)
        const write = yield* progressWriter(id)
        const report = (stage: Stage, fraction: number, force = false) => write(stagePercent(stage, fraction), force)
        const dir = yield* tempDir
        const source = path.join(dir, "source")
        const playback = path.join(dir, "playback.mp4")
        const thumbnail = path.join(dir, "thumbnail.jpg")

        const watcher = yield* Effect.fork(watchDownload(source, Number(claimed.size_bytes ?? 0), (p) => write(p)))
        const found = yield* store.getToFile(keys.source, source)
        yield* Fiber.interrupt(watcher)
        if (!found) return yield* Effect.fail(new Permanent({ message: videoMessages.notPlayable }))
        yield* report("download", 1, true)

        const probe = yield* processor.probe(source).pipe(Effect.mapError(() => new Permanent({ message: videoMessages.notPlayable })))
        const duration = durationOf(probe)
        if (!(probe.streams ?? []).some((s) => s.codec_type === "video") || duration <= 0) {
          return yield* Effect.fail(new Permanent({ message: videoMessages.notPlayable }))
        }
        if (duration > maxDurationSeconds) return yield* Effect.fail(new Permanent({ message: videoMessages.tooLong }))
        yield* report("probe", 1, true)

        yield* processor.convert(source, playback, {
          transcode: needsTranscode(probe),
          durationSeconds: duration,
          onProgress: (fraction) => report("transcode", fraction)
        }).pipe(Effect.mapError(() => new Permanent({ message: videoMessages.notPlayable })))
        yield* report("transcode", 1, true)
        yield* processor.thumbnail(playback, thumbnail, duration * 0.1, duration).pipe(
          Effect.mapError(() => new Permanent({ message: videoMessages.notPlayable }))
        )
        yield* report("finish", 0.3, true)
        yield* store.putFile(keys.playback, playback, "video/mp4")
        yield* store.putFile(keys.thumbnail, thumbnail, "image/jpeg")

        const completed = yield* transaction(Effect.gen(function*() {
          const completed = yield* repo.markCompleted(id, {
            duration_seconds: duration,
            probe: JSON.stringify(probeSummary(probe)),
            playback_key: keys.playback,
            thumbnail_key: keys.thumbnail
          })
          if (completed) yield* audit.record({ actorId: null, action: "video.processed", targetType: "video", targetId: id })
          return completed
        }))
        if (completed) {
          yield* store.delete(keys.source)
        } else {
          // Deleted while we worked: its clean-up may already have run, so remove what we just stored.
          yield* store.delete(keys.playback)
          yield* store.delete(keys.thumbnail)
        }
      }).pipe(Effect.scoped)

    /** One run of `process_video`: permanent failures end the job; crashes retry, the last one marks the video failed. */
    const process = Effect.fn("VideoProcessing.process")(function*(id: number, job: JobContext) {
      yield* Effect.annotateCurrentSpan({ "video.id": id, "job.attempt": job.attempt })
      return yield* permits.withPermits(1)(runOnce(id)).pipe(
        Effect.catchTag("Permanent", (error) => fail(id, error.message)),
        Effect.tapErrorCause(() => (job.attempt >= job.maxAttempts ? fail(id, videoMessages.crashed) : Effect.void))
      )
    })

    /** Every stored object of a deleted video, and its unfinished upload. Safe to run again. */
    const removeObjects = Effect.fn("VideoProcessing.removeObjects")(function*(id: number, uploadId: string | null) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const keys = videoKeys(id)
      const current = yield* repo.uploadOf(id)
      for (const upload of new Set([uploadId, Option.getOrNull(current)])) {
        if (upload !== null) yield* store.multipart.abort(keys.source, upload)
      }
      yield* store.delete(keys.source)
      yield* store.delete(keys.playback)
      yield* store.delete(keys.thumbnail)
      yield* repo.markObjectsRemoved(id)
    })

    /** Uploads idle 24 h: failed "Upload was not completed" and aborted; one still receiving parts is kept. */
    const sweepUploads = Effect.gen(function*() {
      const rows = yield* repo.idleUploads(new Date((yield* nowMillis) - uploadIdleMs), 500)
      for (const row of rows) {
        const key = videoKeys(row.id).source
        if (row.upload_id !== null) {
          const parts = yield* store.multipart.listParts(key, row.upload_id)
          const bytes = parts.reduce((sum, part) => sum + part.size, 0)
          if (bytes > row.uploaded_bytes) {
            yield* repo.recordUploadReceiving(row.id, bytes)
            continue
          }
        }
        const failed = yield* transaction(Effect.gen(function*() {
          const expired = yield* repo.markUploadExpired(row.id, row.upload_id, videoMessages.notCompleted)
          if (expired) yield* audit.record({ actorId: null, action: "video.upload_expired", targetType: "video", targetId: row.id })
          return expired
        }))
        if (failed && row.upload_id !== null) yield* store.multipart.abort(key, row.upload_id)
      }
    }).pipe(Effect.withSpan("VideoProcessing.sweepUploads"))

    return { process, removeObjects, sweepUploads } as const
  })
}) {}
