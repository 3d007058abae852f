/**
 * Resumable uploads of clinic videos (docs/videos.md): a multipart upload of
 * `videos/<id>/source` in the object store, parts PUT by the client straight to presigned URLs,
 * completed by the API (which then queues `process_video` in the same transaction).
 */
import { Effect, Option } from "effect"
import { invalidField } from "../../Api/Errors.js"
import type { Caller } from "../../Api/Security.js"
import { type CompleteUploadRequest, partUrlMinutes, type StartUploadRequest, Upload, UploadPart } from "../../Api/Videos/Videos.js"
import { partPlan, videoMessages } from "../../Domain/Videos/Video.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { makeTransaction } from "../Repository.js"
import { nowMillis } from "../Time.js"
import { processMaxAttempts, processVideoTask } from "./VideoTaskDefs.js"
import { notAuthorized, Videos } from "./Videos.js"
import { type VideoRow, videoKeys, VideosRepo } from "./VideosRepo.js"

export class VideoUploads extends Effect.Service<VideoUploads>()("app/VideoUploads", {
  dependencies: [VideosRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* VideosRepo
    const transaction = yield* makeTransaction
    const store = yield* ObjectStore
    const jobs = yield* Jobs
    const audit = yield* AuditLog
    const videos = yield* Videos
    const config = yield* AppConfig

    /** The video, if the caller created it and it is still uploading. */
    const uploadable = (caller: Caller, id: number) =>
      Effect.gen(function*() {
        const row = yield* videos.load(yield* videos.viewerOf(caller), id)
        if (row.created_by_id !== caller.id) return yield* Effect.fail(notAuthorized())
        if (row.status !== "uploading") return yield* Effect.fail(invalidField("status", videoMessages.notUploading(row.status)))
        return row
      })

    /** Every part with a fresh URL, and the ETag of those already stored. */
    const describe = (row: VideoRow, uploadId: string) =>
      Effect.gen(function*() {
        const size = row.size_bytes ?? 0
        const partSize = row.part_size ?? partPlan(size).partSize
        const partCount = Math.max(1, Math.ceil(size / partSize))
        const key = videoKeys(row.id).source
        const stored = new Map((yield* store.multipart.listParts(key, uploadId)).map((p) => [p.partNumber, p]))
        const now = yield* nowMillis
        const lifetime = `${partUrlMinutes} minutes` as const
        const parts = yield* Effect.forEach(Array.from({ length: partCount }, (_, i) => i + 1), (partNumber) =>
          Effect.map(store.multipart.presignPart(key, uploadId, partNumber, lifetime, partSize), (url) =>
            UploadPart.make({
              part_number: partNumber,
              url,
              etag: stored.get(partNumber)?.etag ?? null,
              size: stored.get(partNumber)?.size ?? null
            })))
        return {
          upload: Upload.make({
            part_size: partSize,
            part_count: partCount,
            expires_at: new Date(now + partUrlMinutes * 60_000),
            parts
          })
        }
      })

    const start = Effect.fn("VideoUploads.start")(function*(caller: Caller, id: number, input: StartUploadRequest["upload"]) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const row = yield* uploadable(caller, id)
      if (input.size_bytes > config.clinicVideos.maxBytes) {
        return yield* Effect.fail(invalidField("size_bytes", videoMessages.tooLarge))
      }
      const key = videoKeys(id).source
      const uploadId = yield* store.multipart.create(key, input.content_type)
      const { partSize } = partPlan(input.size_bytes)
      const updated = yield* transaction(Effect.gen(function*() {
        const updated = yield* repo.startUpload(id, row.upload_id, {
          upload_id: uploadId,
          filename: input.filename,
          content_type: input.content_type,
          size_bytes: input.size_bytes,
          part_size: partSize
        })
        if (Option.isSome(updated)) {
          yield* audit.record({ actorId: caller.id, action: "video.upload_start", targetType: "video", targetId: id })
        }
        return updated
      }))
      if (Option.isNone(updated)) {
        // Another start (or a completion) won the race: drop ours and answer the video as it is now.
        yield* store.multipart.abort(key, uploadId)
        const current = yield* uploadable(caller, id)
        if (current.upload_id === null) return yield* Effect.fail(invalidField("status", videoMessages.notUploading("changing")))
        return yield* describe(current, current.upload_id)
      }
      // The upload it replaces, if any.
      if (row.upload_id !== null) yield* store.multipart.abort(key, row.upload_id)
      return yield* describe(updated.value, uploadId)
    })

    const show = Effect.fn("VideoUploads.show")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const row = yield* uploadable(caller, id)
      if (row.upload_id === null) return yield* Effect.fail(invalidField("upload", "has not been started"))
      yield* repo.touchUpload(id, row.upload_id)
      return yield* describe(row, row.upload_id)
    })

    const complete = Effect.fn("VideoUploads.complete")(function*(caller: Caller, id: number, input: CompleteUploadRequest) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const row = yield* uploadable(caller, id)
      if (row.upload_id === null) return yield* Effect.fail(invalidField("upload", "has not been started"))
      const uploadId = row.upload_id
      const key = videoKeys(id).source
      const size = row.size_bytes ?? 0
      const partCount = Math.max(1, Math.ceil(size / (row.part_size ?? partPlan(size).partSize)))
      // Checked before asking the store, so a bad request leaves the upload as it was.
      const stored = new Map((yield* store.multipart.listParts(key, uploadId)).map((p) => [p.partNumber, p]))
      const given = [...input.parts].sort((a, b) => a.part_number - b.part_number)
      const complete = given.length === partCount &&
        given.every((part, i) => part.part_number === i + 1 && stored.get(part.part_number)?.etag === part.etag) &&
        given.reduce((sum, part) => sum + stored.get(part.part_number)!.size, 0) === size
      if (!complete) return yield* Effect.fail(invalidField("parts", videoMessages.incomplete))
      const assembled = yield* store.multipart.complete(key, uploadId, given.map((p) => ({ partNumber: p.part_number, etag: p.etag }))).pipe(
        Effect.catchTag("MultipartRejected", () => Effect.fail(invalidField("parts", videoMessages.incomplete)))
      )
      if (assembled !== size) {
        yield* store.delete(key)
        yield* repo.dropUpload(id, uploadId)
        return yield* Effect.fail(invalidField("parts", videoMessages.sizeMismatch))
      }
      yield* transaction(Effect.gen(function*() {
        if (!(yield* repo.completeUpload(id, uploadId, size))) return
        yield* jobs.enqueue(processVideoTask, { video_id: id }, { jobKey: `process_video:${id}`, maxAttempts: processMaxAttempts })
        yield* audit.record({ actorId: caller.id, action: "video.upload_complete", targetType: "video", targetId: id })
      }))
      return yield* videos.show(caller, id)
    })

    const abort = Effect.fn("VideoUploads.abort")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const row = yield* uploadable(caller, id)
      const uploadId = row.upload_id
      if (uploadId === null) return
      const aborted = yield* transaction(Effect.gen(function*() {
        const aborted = yield* repo.abortUpload(id, uploadId)
        if (aborted) yield* audit.record({ actorId: caller.id, action: "video.upload_abort", targetType: "video", targetId: id })
        return aborted
      }))
      if (aborted) yield* store.multipart.abort(videoKeys(id).source, uploadId)
    })

    return { start, show, complete, abort } as const
  })
}) {}
