/**
 * Clinic video records (general §2.9, §4.10, §5.4): list, create, show, update, delete,
 * status and retry, with the record-level access rules of `Access.scope.videos` (applied by `VideosRepo`).
 */
import { Effect, Option } from "effect"
import { forbidden, invalid, invalidField, messages, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import type { CreateVideoRequest, UpdateVideoRequest } from "../../Api/Videos/Videos.js"
import type { VideoId } from "../../Domain/Ids.js"
import {
  estimateCompletion, patientCategories, type VideoCategory, VideoStatusReport, videoMessages
} from "../../Domain/Videos/Video.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { Access, canCreateVideo, isParent, type ProviderViewer } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import { nowMillis } from "../Time.js"
import { deleteVideoObjectsTask, processVideoTask } from "./VideoTaskDefs.js"
import { toVideo, type VideoFilters, type VideoRow, VideosRepo } from "./VideosRepo.js"

export const notAuthorized = () => forbidden(messages.unauthorized)
export const videoNotFound = () => notFound("Video")

type VideoFields = UpdateVideoRequest["video"]

export type { VideoFilters }

/** Upload progress is re-measured (ListParts) at most this often. */
export const uploadCheckMs = 10_000

export class Videos extends Effect.Service<Videos>()("app/Videos", {
  dependencies: [VideosRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* VideosRepo
    const transaction = yield* makeTransaction
    const store = yield* ObjectStore
    const jobs = yield* Jobs
    const audit = yield* AuditLog
    const access = yield* Access

    /**
     * A parent naming a patient (a filter, a body field) gets 404 "Patient not found" for another
     * family's, like every patient-scoped record (Access): ids never leak. Staff go on to the
     * video rules ("must exist" for an unknown patient).
     */
    const parentNamesPatient = (caller: Caller, patientId: number | null | undefined) =>
      isParent(caller) && patientId !== undefined && patientId !== null
        ? Effect.asVoid(access.visiblePatient(caller, patientId))
        : Effect.void

    const viewerOf = (caller: Caller): Effect.Effect<ProviderViewer> => access.withActiveProvider(caller)

    /** The video if it exists and is not deleted, with what the caller may do with it. */
    const load = (viewer: ProviderViewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* repo.findWithRights(viewer, id)
        if (Option.isNone(row)) return yield* Effect.fail(videoNotFound())
        return row.value
      })

    /** Readable or writable; a patient's video outside the rules opens to break-glass (`Access.visibleRecord`). */
    const readable = (viewer: ProviderViewer, id: number) =>
      Effect.flatMap(load(viewer, id), (row) =>
        Effect.as(access.visibleRecord(viewer, { visible: row.readable || row.writable, patient_id: row.patient_id }, notAuthorized, "clinical"), row))

    const writable = (viewer: ProviderViewer, id: number) =>
      Effect.flatMap(load(viewer, id), (row) => (row.writable ? Effect.succeed(row) : Effect.fail(notAuthorized())))

    /** Links to a patient's video are audited (who was handed the file). */
    const shown = (viewer: ProviderViewer, rows: ReadonlyArray<VideoRow>) =>
      Effect.gen(function*() {
        const videos = yield* Effect.forEach(rows, (row) => toVideo(store, row))
        const linked = videos.filter((v) => v.file_url !== null && v.patient_id !== null)
        if (linked.length > 0) {
          yield* audit.recordMany(linked.map((v) => ({ actorId: viewer.id, action: "video.link", targetType: "video", targetId: v.id })))
        }
        return videos
      })

    /**
     * The create/update rules over the merged fields: 422 with every problem, nothing saved. A newly
     * named patient the caller may not see (Access, clinical content; break-glass applies) is
     * `must exist`, exactly as an unknown one; a patient the video already had is not checked again.
     */
    const check = (viewer: ProviderViewer, patientBefore: number | null, fields: {
      readonly category: VideoCategory
      readonly patient_id: number | null
      readonly provider_id: number | null
      readonly appointment_id: number | null
    }) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        const add = (field: string, message: string) => void (errors[field] ??= []).push(message)
        // A patient the caller may not see is answered as an unknown one, which no appointment matches.
        let patientHidden = false
        if (fields.patient_id !== null) {
          if (fields.patient_id !== patientBefore && !(yield* Effect.isSuccess(access.visiblePatient(viewer, fields.patient_id, "clinical")))) {
            add("patient_id", videoMessages.mustExist)
            patientHidden = true
          }
        } else if (patientCategories.includes(fields.category)) {
          add("patient_id", "can't be blank")
        }
        if (fields.provider_id !== null) {
          if (!(yield* repo.providerExists(fields.provider_id))) add("provider_id", videoMessages.mustExist)
        }
        if (fields.appointment_id !== null) {
          const appointment = yield* repo.appointmentParties(fields.appointment_id)
          if (Option.isNone(appointment)) {
            add("appointment_id", videoMessages.mustExist)
          } else if (
            patientHidden ||
            appointment.value.patient_id !== fields.patient_id ||
            (fields.provider_id !== null && appointment.value.provider_id !== fields.provider_id)
          ) {
            add("appointment_id", videoMessages.doesNotMatch)
          }
        }
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      })

    const list = Effect.fn("Videos.list")(function*(caller: Caller, filters: VideoFilters, request: PageRequest) {
      yield* parentNamesPatient(caller, filters.patientId)
      const viewer = yield* viewerOf(caller)
      const { pagination, rows } = yield* repo.list(viewer, filters, request)
      return { videos: yield* shown(viewer, rows), pagination }
    })

    const create = Effect.fn("Videos.create")(function*(caller: Caller, input: CreateVideoRequest["video"]) {
      yield* parentNamesPatient(caller, input.patient_id)
      if (!canCreateVideo(caller)) return yield* Effect.fail(notAuthorized())
      const fields = {
        category: input.category,
        patient_id: input.patient_id ?? null,
        provider_id: input.provider_id ?? null,
        appointment_id: input.appointment_id ?? null
      }
      yield* check(yield* viewerOf(caller), null, fields)
      const row = yield* transaction(Effect.gen(function*() {
        const row = yield* repo.insert({
          title: input.title.trim(),
          description: input.description ?? null,
          ...fields,
          duration_seconds: input.duration_seconds ?? null,
          shared_with_family: input.shared_with_family ?? false,
          created_by_id: caller.id
        })
        yield* audit.record({ actorId: caller.id, action: "video.create", targetType: "video", targetId: row.id })
        return row
      }))
      return yield* toVideo(store, row)
    })

    const show = Effect.fn("Videos.show")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const viewer = yield* viewerOf(caller)
      const row = yield* readable(viewer, id)
      const [video] = yield* shown(viewer, [row])
      return video!
    })

    const update = Effect.fn("Videos.update")(function*(caller: Caller, id: number, input: VideoFields) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      yield* parentNamesPatient(caller, input.patient_id)
      const viewer = yield* viewerOf(caller)
      const row = yield* writable(viewer, id)
      if (input.status !== undefined && input.status !== row.status) {
        const allowed = (row.status === "completed" && input.status === "archived") ||
          (row.status === "archived" && input.status === "completed")
        if (!allowed) return yield* Effect.fail(invalidField("status", videoMessages.move(row.status, input.status)))
      }
      const fields = {
        category: input.category ?? row.category,
        patient_id: input.patient_id === undefined ? row.patient_id : input.patient_id,
        provider_id: input.provider_id === undefined ? row.provider_id : input.provider_id,
        appointment_id: input.appointment_id === undefined ? row.appointment_id : input.appointment_id
      }
      yield* check(viewer, row.patient_id, fields)
      const status = input.status ?? row.status
      const updated = yield* transaction(Effect.gen(function*() {
        const updated = yield* repo.update(id, row.status, {
          title: input.title?.trim() ?? row.title,
          description: input.description === undefined ? row.description : input.description,
          ...fields,
          duration_seconds: input.duration_seconds === undefined ? row.duration_seconds : input.duration_seconds,
          shared_with_family: input.shared_with_family ?? row.shared_with_family,
          status
        })
        if (Option.isNone(updated)) return updated
        const action = status === row.status ? "video.update" : status === "archived" ? "video.archive" : "video.unarchive"
        yield* audit.record({ actorId: caller.id, action, targetType: "video", targetId: id })
        return updated
      }))
      // Its status moved meanwhile (processing finished, deleted): the caller sees the video as it is now.
      if (Option.isNone(updated)) return yield* show(caller, id)
      return yield* toVideo(store, updated.value)
    })

    /** Status deleted; a job removes every stored object (and any unfinished upload). */
    const remove = Effect.fn("Videos.remove")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const viewer = yield* viewerOf(caller)
      yield* writable(viewer, id)
      yield* transaction(Effect.gen(function*() {
        const row = yield* repo.markDeleted(id)
        if (Option.isNone(row)) return
        yield* jobs.enqueue(deleteVideoObjectsTask, { video_id: id, upload_id: row.value.upload_id }, { jobKey: `delete_video:${id}` })
        yield* audit.record({ actorId: caller.id, action: "video.delete", targetType: "video", targetId: id })
      }))
    })

    const status = Effect.fn("Videos.status")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const viewer = yield* viewerOf(caller)
      let row: VideoRow = yield* readable(viewer, id)
      const now = yield* nowMillis
      if (row.status === "uploading" && row.upload_id !== null && row.size_bytes !== null &&
        (row.uploaded_checked_at === null || now - row.uploaded_checked_at.getTime() >= uploadCheckMs)) {
        const parts = yield* store.multipart.listParts(`videos/${id}/source`, row.upload_id)
        const bytes = parts.reduce((sum, part) => sum + part.size, 0)
        const updated = yield* repo.recordUploadCheck(id, row.upload_id, bytes)
        if (Option.isSome(updated)) row = updated.value
      }
      return statusOf(row, now)
    })

    /** Re-enqueues a failed video's processing; its source must still be stored. */
    const retry = Effect.fn("Videos.retry")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "video.id": id })
      const viewer = yield* viewerOf(caller)
      const row = yield* writable(viewer, id)
      if (row.status !== "failed" || !row.source_stored) {
        return yield* Effect.fail(invalidField("status", videoMessages.notFailed(row.status === "failed" ? "failed without a file" : row.status)))
      }
      const done = yield* transaction(Effect.gen(function*() {
        if (!(yield* repo.markRetried(id))) return false
        yield* jobs.enqueue(processVideoTask, { video_id: id }, { jobKey: `process_video:${id}`, maxAttempts: 3 })
        yield* audit.record({ actorId: caller.id, action: "video.retry", targetType: "video", targetId: id })
        return true
      }))
      if (!done) return yield* Effect.fail(invalidField("status", videoMessages.notFailed("no longer failed")))
      return yield* show(caller, id)
    })

    return { viewerOf, load, readable, writable, list, create, show, update, remove, status, retry } as const
  })
}) {}

/** The status report of a row at `now` (ms). */
export const statusOf = (row: VideoRow, now: number): VideoStatusReport => {
  const base = { id: row.id as VideoId, status: row.status, error_message: row.error_message }
  switch (row.status) {
    case "completed":
    case "archived":
      return VideoStatusReport.make({ ...base, progress_percentage: 100, estimated_completion: row.completed_at })
    case "uploading": {
      const size = Number(row.size_bytes ?? 0)
      const percent = size > 0 ? Math.min(99, Math.floor(Number(row.uploaded_bytes) * 100 / size)) : 0
      const started = row.upload_started_at?.getTime()
      return VideoStatusReport.make({
        ...base,
        progress_percentage: percent,
        estimated_completion: started === undefined ? null : estimateCompletion(started, now, percent)
      })
    }
    case "processing": {
      const started = row.processing_started_at?.getTime()
      return VideoStatusReport.make({
        ...base,
        progress_percentage: Math.min(99, row.progress),
        estimated_completion: started === undefined ? null : estimateCompletion(started, now, row.progress)
      })
    }
    default:
      return VideoStatusReport.make({ ...base, progress_percentage: Math.min(99, row.progress), estimated_completion: null })
  }
}
