/**
 * The only SQL on `videos` (ARCHITECTURE "Persistence"): the records, their uploads and their
 * processing. Rows are decoded with schemas; SQL errors are defects. Every write of a state
 * timestamp takes the one clock (`Time.now`). Writes that race (a second start, a completion, a
 * deletion) are guarded by the status or upload they expect and answer whether they applied.
 * Who may read and write a video (general §5.4) is the access module's `Access.scope.videos`,
 * applied here. The existence checks on `providers` and `appointments` a video's
 * references need stay here until those areas' repositories offer the same lookups.
 */
import type { PageRequest } from "../../Api/Pagination.js"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AppointmentId, PatientId, ProviderId, UserId, VideoId } from "../../Domain/Ids.js"
import { linkLifetimeSeconds, Video, VideoCategory, VideoStatus } from "../../Domain/Videos/Video.js"
import { Access, type ProviderViewer } from "../Access/Access.js"
import type { ObjectStoreShape } from "../ObjectStore.js"
import { makeListPage } from "../Lists.js"
import { orDefect, ScopeAnswer, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf
const NullTimestamp = Schema.NullOr(Schema.DateFromSelf)
/** A `bigint`: node-postgres reads it as text. */
const Bigint = Schema.Union(Schema.Number, Schema.NumberFromString)

export const VideoRow = Schema.Struct({
  id: VideoId,
  title: Text,
  description: NullText,
  category: VideoCategory,
  status: VideoStatus,
  patient_id: Schema.NullOr(PatientId),
  provider_id: Schema.NullOr(ProviderId),
  appointment_id: Schema.NullOr(AppointmentId),
  duration_seconds: Schema.NullOr(Schema.Number),
  shared_with_family: Schema.Boolean,
  created_by_id: UserId,
  upload_id: NullText,
  filename: NullText,
  content_type: NullText,
  size_bytes: Schema.NullOr(Bigint),
  part_size: Schema.NullOr(Schema.Int),
  upload_started_at: NullTimestamp,
  uploaded_bytes: Bigint,
  uploaded_checked_at: NullTimestamp,
  source_stored: Schema.Boolean,
  progress: Schema.Int,
  processing_started_at: NullTimestamp,
  completed_at: NullTimestamp,
  playback_key: NullText,
  thumbnail_key: NullText,
  error_message: NullText,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type VideoRow = typeof VideoRow.Type

/** A video with what the viewer may do with it (`Access.scope.videos`). */
export const VideoWithRights = Schema.Struct({ ...VideoRow.fields, readable: ScopeAnswer, writable: ScopeAnswer })
export type VideoWithRights = typeof VideoWithRights.Type

/** What a video list may be narrowed by. */
export const VideoFilters = Schema.Struct({
  category: Schema.optional(VideoCategory),
  status: Schema.optional(VideoStatus),
  patientId: Schema.optional(Schema.Number),
  providerId: Schema.optional(Schema.Number)
})
export type VideoFilters = typeof VideoFilters.Type

/** What a video's record says of it, as a new record and an update write it. */
const describedFields = {
  title: Text,
  description: NullText,
  category: VideoCategory,
  patient_id: Schema.NullOr(Schema.Number),
  provider_id: Schema.NullOr(Schema.Number),
  appointment_id: Schema.NullOr(Schema.Number),
  duration_seconds: Schema.NullOr(Schema.Number),
  shared_with_family: Schema.Boolean
}

/** A new record (status `uploading`, the column default). */
export const NewVideo = Schema.Struct({ ...describedFields, created_by_id: Schema.Number })
export type NewVideo = typeof NewVideo.Type

/** Every field an update writes (the service has merged the request into the current row and checked the move). */
export const VideoChange = Schema.Struct({ ...describedFields, status: VideoStatus })
export type VideoChange = typeof VideoChange.Type

/** A started upload: the store's multipart id and the declared file. */
export const UploadStart = Schema.Struct({
  upload_id: Text,
  filename: Text,
  content_type: Text,
  size_bytes: Schema.Number,
  part_size: Schema.Int
})
export type UploadStart = typeof UploadStart.Type

/** What processing stores of a finished video. */
export const ProcessedVideo = Schema.Struct({
  duration_seconds: Schema.Number,
  /** ffprobe's summary as JSON text (ids and numbers only). */
  probe: Text,
  playback_key: Text,
  thumbnail_key: Text
})
export type ProcessedVideo = typeof ProcessedVideo.Type

/** An upload the idle sweep looks at. */
export const IdleUpload = Schema.Struct({ id: VideoId, upload_id: NullText, uploaded_bytes: Bigint })
export type IdleUpload = typeof IdleUpload.Type

const columnNames = [
  "id", "title", "description", "category", "status", "patient_id", "provider_id", "appointment_id", "duration_seconds",
  "shared_with_family", "created_by_id", "upload_id", "filename", "content_type", "size_bytes", "part_size",
  "upload_started_at", "uploaded_bytes", "uploaded_checked_at", "source_stored", "progress", "processing_started_at",
  "completed_at", "playback_key", "thumbnail_key", "error_message", "created_at", "updated_at"
]
const videoColumns = columnNames.map((c) => `v.${c}`).join(", ")
const returnedColumns = columnNames.join(", ")

const ById = Schema.Struct({ id: Schema.Number })
const Returned = Schema.Struct({ id: Schema.Number })
const Exists = Schema.Struct({ exists: Schema.Boolean })
const Parties = Schema.Struct({ patient_id: Schema.Number, provider_id: Schema.Number })
const Claimed = Schema.Struct({ size_bytes: Schema.NullOr(Bigint), content_type: NullText })
const UploadOf = Schema.Struct({ upload_id: NullText })
const DeletedRow = Schema.Struct({ id: Schema.Number, upload_id: NullText })
const Guard = Schema.Struct({ id: Schema.Number, uploadId: Schema.NullOr(Schema.String), at: Timestamp })

export class VideosRepo extends Effect.Service<VideosRepo>()("app/VideosRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(videoColumns)
    const returned = sql.literal(returnedColumns)

    /** The video unless deleted, with the viewer's rights on it (`Access.scope.videos`; `ScopeAnswer`: a scope on a null column is NULL, no right). */
    const findWithRights = (viewer: ProviderViewer, at: Date, id: number) =>
      SqlSchema.findOne({
        Request: ById,
        Result: VideoWithRights,
        execute: (r) =>
          sql`SELECT ${columns}, ${Access.scope.videos.readable(sql, viewer, at)} AS readable,
              ${Access.scope.videos.writable(sql, viewer)} AS writable
            FROM videos v WHERE v.id = ${r.id} AND v.status <> 'deleted'`
      })({ id })

    const byCreated = { created_at: sql`v.created_at` }
    /** A page of the videos the viewer may read, newest first. */
    const list = (viewer: ProviderViewer, filters: VideoFilters, page: PageRequest) =>
      Effect.flatMap(now, (at) =>
        listPage({
          select: columns,
          from: sql`videos v`,
          row: VideoRow,
          scope: sql.and([sql`v.status <> 'deleted'`, Access.scope.videos.readable(sql, viewer, at)]),
          filters: [
            filters.category !== undefined && sql`v.category = ${filters.category}`,
            filters.status !== undefined && sql`v.status = ${filters.status}`,
            filters.patientId !== undefined && sql`v.patient_id = ${filters.patientId}`,
            filters.providerId !== undefined && sql`v.provider_id = ${filters.providerId}`
          ],
          sort: { columns: byCreated, by: "created_at", dir: "DESC", id: sql`v.id` }
        }, page))

    const findProvider = SqlSchema.single({
      Request: ById,
      Result: Exists,
      execute: ({ id }) => sql`SELECT EXISTS (SELECT 1 FROM providers WHERE id = ${id}) AS exists`
    })

    const findAppointment = SqlSchema.findOne({
      Request: ById,
      Result: Parties,
      execute: ({ id }) => sql`SELECT patient_id, provider_id FROM appointments WHERE id = ${id}`
    })

    const insertOne = SqlSchema.single({
      Request: NewVideo,
      Result: VideoRow,
      execute: (video) => sql`INSERT INTO videos ${sql.insert(video)} RETURNING ${returned}`
    })

    const updateOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, from: VideoStatus, change: VideoChange, at: Timestamp }),
      Result: VideoRow,
      execute: ({ at, change, from, id }) =>
        sql`UPDATE videos SET ${sql.update({ ...change, updated_at: at })} WHERE id = ${id} AND status = ${from}
          RETURNING ${returned}`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Timestamp }),
      Result: DeletedRow,
      execute: ({ at, id }) =>
        sql`UPDATE videos v SET status = 'deleted', deleted_at = ${at}, updated_at = ${at}
          FROM (SELECT id, upload_id FROM videos WHERE id = ${id} FOR UPDATE) old
          WHERE v.id = old.id AND v.status <> 'deleted' RETURNING v.id, old.upload_id`
    })

    const updateUploadCheck = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, uploadId: Text, bytes: Schema.Number, at: Timestamp }),
      Result: VideoRow,
      execute: ({ at, bytes, id, uploadId }) =>
        sql`UPDATE videos SET uploaded_bytes = GREATEST(uploaded_bytes, ${bytes}),
            uploaded_checked_at = ${at},
            upload_activity_at = CASE WHEN ${bytes} > uploaded_bytes THEN ${at} ELSE upload_activity_at END
          WHERE id = ${id} AND upload_id = ${uploadId}
          RETURNING ${returned}`
    })

    const updateRetry = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Timestamp }),
      Result: Returned,
      execute: ({ at, id }) =>
        sql`UPDATE videos SET status = 'processing', error_message = NULL, progress = 0,
            processing_started_at = NULL, updated_at = ${at}
          WHERE id = ${id} AND status = 'failed' RETURNING id`
    })

    const updateUploadStart = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, replaces: NullText, upload: UploadStart, at: Timestamp }),
      Result: VideoRow,
      execute: ({ at, id, replaces, upload }) =>
        sql`UPDATE videos SET upload_id = ${upload.upload_id}, filename = ${upload.filename},
            content_type = ${upload.content_type}, size_bytes = ${upload.size_bytes}, part_size = ${upload.part_size},
            upload_started_at = ${at}, upload_activity_at = ${at}, uploaded_bytes = 0, uploaded_checked_at = NULL,
            updated_at = ${at}
          WHERE id = ${id} AND status = 'uploading' AND upload_id IS NOT DISTINCT FROM ${replaces}
          RETURNING ${returned}`
    })

    const updateUploadActivity = SqlSchema.void({
      Request: Guard,
      execute: ({ at, id, uploadId }) => sql`UPDATE videos SET upload_activity_at = ${at} WHERE id = ${id} AND upload_id = ${uploadId}`
    })

    const updateUploadDropped = SqlSchema.void({
      Request: Guard,
      execute: ({ at, id, uploadId }) => sql`UPDATE videos SET upload_id = NULL, updated_at = ${at} WHERE id = ${id} AND upload_id = ${uploadId}`
    })

    const updateUploadComplete = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, uploadId: Text, size: Schema.Number, at: Timestamp }),
      Result: Returned,
      execute: ({ at, id, size, uploadId }) =>
        sql`UPDATE videos SET status = 'processing', upload_id = NULL, source_stored = true,
            uploaded_bytes = ${size}, upload_activity_at = ${at}, progress = 0, processing_started_at = NULL,
            error_message = NULL, updated_at = ${at}
          WHERE id = ${id} AND status = 'uploading' AND upload_id = ${uploadId} RETURNING id`
    })

    const updateUploadAbort = SqlSchema.findOne({
      Request: Guard,
      Result: Returned,
      execute: ({ at, id, uploadId }) =>
        sql`UPDATE videos SET upload_id = NULL, uploaded_bytes = 0, uploaded_checked_at = NULL,
            upload_activity_at = ${at}, updated_at = ${at}
          WHERE id = ${id} AND status = 'uploading' AND upload_id = ${uploadId} RETURNING id`
    })

    const updateClaim = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Timestamp }),
      Result: Claimed,
      execute: ({ at, id }) =>
        sql`UPDATE videos SET processing_started_at = COALESCE(processing_started_at, ${at}), updated_at = ${at}
          WHERE id = ${id} AND status = 'processing' RETURNING size_bytes, content_type`
    })

    const updateProgress = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, percent: Schema.Int }),
      execute: ({ id, percent }) =>
        sql`UPDATE videos SET progress = GREATEST(progress, ${percent}) WHERE id = ${id} AND status = 'processing'`
    })

    const updateCompleted = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, video: ProcessedVideo, at: Timestamp }),
      Result: Returned,
      execute: ({ at, id, video }) =>
        sql`UPDATE videos SET status = 'completed', progress = 100, completed_at = ${at},
            duration_seconds = ${video.duration_seconds}, probe = ${video.probe}::jsonb,
            playback_key = ${video.playback_key}, thumbnail_key = ${video.thumbnail_key}, source_stored = false,
            error_message = NULL, updated_at = ${at}
          WHERE id = ${id} AND status = 'processing' RETURNING id`
    })

    const updateFailed = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, message: Text, at: Timestamp }),
      Result: Returned,
      execute: ({ at, id, message }) =>
        sql`UPDATE videos SET status = 'failed', error_message = ${message}, updated_at = ${at}
          WHERE id = ${id} AND status = 'processing' RETURNING id`
    })

    const findUpload = SqlSchema.findOne({
      Request: ById,
      Result: UploadOf,
      execute: ({ id }) => sql`SELECT upload_id FROM videos WHERE id = ${id}`
    })

    const updateObjectsRemoved = SqlSchema.void({
      Request: ById,
      execute: ({ id }) => sql`UPDATE videos SET upload_id = NULL, source_stored = false WHERE id = ${id} AND status = 'deleted'`
    })

    const findIdleUploads = SqlSchema.findAll({
      Request: Schema.Struct({ before: Timestamp, limit: Schema.Int }),
      Result: IdleUpload,
      execute: ({ before, limit }) =>
        sql`SELECT id, upload_id, uploaded_bytes FROM videos
          WHERE status = 'uploading' AND COALESCE(upload_activity_at, created_at) < ${before} ORDER BY id LIMIT ${limit}`
    })

    const updateUploadReceiving = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, bytes: Schema.Number, at: Timestamp }),
      execute: ({ at, bytes, id }) =>
        sql`UPDATE videos SET uploaded_bytes = ${bytes}, upload_activity_at = ${at} WHERE id = ${id} AND status = 'uploading'`
    })

    const updateUploadExpired = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, uploadId: NullText, message: Text, at: Timestamp }),
      Result: Returned,
      execute: ({ at, id, message, uploadId }) =>
        sql`UPDATE videos SET status = 'failed', error_message = ${message}, upload_id = NULL, updated_at = ${at}
          WHERE id = ${id} AND status = 'uploading' AND upload_id IS NOT DISTINCT FROM ${uploadId} RETURNING id`
    })

    /** Whether a guarded write applied. */
    const applied = <E, R>(write: Effect.Effect<Option.Option<unknown>, E, R>) => Effect.map(write, Option.isSome)

    return {
      /** The video unless deleted, with whether the viewer may read and write it. */
      findWithRights: (viewer: ProviderViewer, id: number) => orDefect(Effect.flatMap(now, (at) => findWithRights(viewer, at, id))),
      /** One page of the videos the viewer may read, newest first. */
      list,
      /** Whether the provider exists. */
      providerExists: (id: number) => Effect.map(orDefect(findProvider({ id })), (row) => row.exists),
      /** The appointment's patient and provider, if it exists. */
      appointmentParties: (id: number) => orDefect(findAppointment({ id })),
      /** A new record, `uploading`. */
      insert: (video: NewVideo) => orDefect(insertOne(video)),
      /** Writes a checked change if the video is still in status `from`; none when it moved meanwhile. */
      update: (id: number, from: VideoStatus, change: VideoChange) =>
        Effect.flatMap(now, (at) => updateOne({ id, from, change, at })).pipe(orDefect),
      /** Marks the video deleted (none if it already was), with the upload it had. */
      markDeleted: (id: number) => Effect.flatMap(now, (at) => deleteOne({ id, at })).pipe(orDefect),
      /** Records the bytes the store holds of the upload (never fewer than before); none when the upload changed. */
      recordUploadCheck: (id: number, uploadId: string, bytes: number) =>
        Effect.flatMap(now, (at) => updateUploadCheck({ id, uploadId, bytes, at })).pipe(orDefect),
      /** A failed video back to `processing` from the start; false when it is no longer failed. */
      markRetried: (id: number) => Effect.flatMap(now, (at) => updateRetry({ id, at })).pipe(applied, orDefect),
      /** Starts an upload replacing `replaces` (none if another start or a completion won). */
      startUpload: (id: number, replaces: string | null, upload: UploadStart) =>
        Effect.flatMap(now, (at) => updateUploadStart({ id, replaces, upload, at })).pipe(orDefect),
      /** The client is still at work on the upload. */
      touchUpload: (id: number, uploadId: string) => Effect.flatMap(now, (at) => updateUploadActivity({ id, uploadId, at })).pipe(orDefect),
      /** Forgets an upload whose assembled file was not what was declared. */
      dropUpload: (id: number, uploadId: string) => Effect.flatMap(now, (at) => updateUploadDropped({ id, uploadId, at })).pipe(orDefect),
      /** The assembled upload is stored: on to `processing`; false when the upload changed meanwhile. */
      completeUpload: (id: number, uploadId: string, size: number) =>
        Effect.flatMap(now, (at) => updateUploadComplete({ id, uploadId, size, at })).pipe(applied, orDefect),
      /** Drops the unfinished upload; false when it changed meanwhile. */
      abortUpload: (id: number, uploadId: string) =>
        Effect.flatMap(now, (at) => updateUploadAbort({ id, uploadId, at })).pipe(applied, orDefect),
      /** Claims a `processing` video for a run (its start kept across retries); none if not processing. */
      claimProcessing: (id: number) => Effect.flatMap(now, (at) => updateClaim({ id, at })).pipe(orDefect),
      /** Raises the processing progress (never lowers it). */
      raiseProgress: (id: number, percent: number) => orDefect(updateProgress({ id, percent })),
      /** The processed video: `completed`; false when it is no longer processing (deleted meanwhile). */
      markCompleted: (id: number, video: ProcessedVideo) =>
        Effect.flatMap(now, (at) => updateCompleted({ id, video, at })).pipe(applied, orDefect),
      /** Processing failed with `message`; false when it is no longer processing. */
      markFailed: (id: number, message: string) =>
        Effect.flatMap(now, (at) => updateFailed({ id, message, at })).pipe(applied, orDefect),
      /** The upload a video has now (none if the video is gone). */
      uploadOf: (id: number) => Effect.map(orDefect(findUpload({ id })), Option.flatMap((row) => Option.fromNullable(row.upload_id))),
      /** A deleted video's stored objects are gone. */
      markObjectsRemoved: (id: number) => orDefect(updateObjectsRemoved({ id })),
      /** Uploading videos untouched since `before`, by id. */
      idleUploads: (before: Date, limit: number) => orDefect(findIdleUploads({ before, limit })),
      /** An idle upload still received parts: its bytes and activity now. */
      recordUploadReceiving: (id: number, bytes: number) =>
        Effect.flatMap(now, (at) => updateUploadReceiving({ id, bytes, at })).pipe(orDefect),
      /** An idle upload given up: `failed` with `message`; false when it changed meanwhile. */
      markUploadExpired: (id: number, uploadId: string | null, message: string) =>
        Effect.flatMap(now, (at) => updateUploadExpired({ id, uploadId, message, at })).pipe(applied, orDefect)
    } as const
  })
}) {}

/** Where a video's files live: deterministic, so a retried job overwrites rather than duplicates. */
export const videoKeys = (id: number) => ({
  source: `videos/${id}/source`,
  playback: `videos/${id}/playback.mp4`,
  thumbnail: `videos/${id}/thumbnail.jpg`
})

/** The record as the API shows it: signed links only once completed (or archived). */
export const toVideo = (store: ObjectStoreShape, row: VideoRow) =>
  Effect.gen(function*() {
    const playable = row.status === "completed" || row.status === "archived"
    const lifetime = `${linkLifetimeSeconds(row.duration_seconds)} seconds` as const
    const fileUrl = playable && row.playback_key ? yield* store.signedUrl(row.playback_key, lifetime) : null
    const thumbnailUrl = playable && row.thumbnail_key ? yield* store.signedUrl(row.thumbnail_key, lifetime) : null
    return Video.make({
      id: row.id,
      title: row.title,
      description: row.description,
      category: row.category,
      status: row.status,
      patient_id: row.patient_id,
      provider_id: row.provider_id,
      appointment_id: row.appointment_id,
      duration_seconds: row.duration_seconds,
      file_url: fileUrl,
      thumbnail_url: thumbnailUrl,
      shared_with_family: row.shared_with_family,
      created_by_id: row.created_by_id,
      size_bytes: row.size_bytes,
      content_type: row.content_type,
      created_at: row.created_at,
      updated_at: row.updated_at
    })
  })
