/**
 * Clinic videos (general §2.9, §4.10, §5.4): the records, and — not shown by the spec,
 * ours (docs/videos.md) — resumable multipart uploads straight to the object store, processing
 * status and retries.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AppointmentId, PatientId, PatientIdFromText, ProviderId, ProviderIdFromText, VideoIdFromText } from "../../Domain/Ids.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { maxParts, UploadContentType, Video, VideoCategory, VideoStatus, VideoStatusReport } from "../../Domain/Videos/Video.js"
import { groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"
import { listQuery } from "../Lists.js"

export const videosPageSize = 25
export const maxTitleLength = 200
export const maxDescriptionLength = 5000
export const maxFilenameLength = 255
/** Part URLs live this long. */
export const partUrlMinutes = 60

const Duration = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n), { message: () => "is not a number" }),
  Schema.greaterThanOrEqualTo(0, { message: () => "must be greater than or equal to 0" }),
  Schema.lessThanOrEqualTo(86_400, { message: () => "must be less than or equal to 86400" }),
  Schema.annotations({ description: "Seconds; replaced by the file's own duration once processed" })
)

const access = "Signed-in users, per record (§5.4): admins all; providers and supervisors read the videos they created or " +
  "are provider of, those of the patients of their care relationships and their supervisees'; parents completed videos shared with the family " +
  "of their own patients; anyone completed educational and training videos without a patient. The creator, the video's " +
  "provider and admins change them. Others get 403 `You are not authorized to perform this action.`"
const writers = "The creator, the video's provider and admins (else 403)."
/** A patient's video outside the reader's rules opens to break-glass (the `status` and `show` reads). */
const videoPatient = {
  records: "clinical",
  refusal: { sentence: "Any other patient's video is 403, as above." }
} as const
/** The patient a video is about, named in the body. */
const namedPatient = { records: "clinical", refusal: "mustExist", staffOnly: true } as const

const videoExample = { title: "Session 4: exposure practice", category: "therapy_session", patient_id: 12, provider_id: 3, appointment_id: 345 }

export class CreateVideoRequest extends Schema.Class<CreateVideoRequest>("CreateVideoRequest")({
  video: Schema.Struct({
    title: RequiredString(maxTitleLength),
    category: VideoCategory,
    description: Schema.optional(Schema.NullOr(BoundedString(maxDescriptionLength))),
    patient_id: Schema.optional(Schema.NullOr(PatientId)),
    provider_id: Schema.optional(Schema.NullOr(ProviderId)),
    appointment_id: Schema.optional(Schema.NullOr(AppointmentId)),
    duration_seconds: Schema.optional(Schema.NullOr(Duration)),
    shared_with_family: Schema.optional(Schema.Boolean.annotations({ description: "Parents of the patient see it once completed (default false)" }))
  })
}, requestBody({ video: videoExample }, { video: { title: "Breathing exercises", category: "educational", duration_seconds: 300 } })) {}

export class UpdateVideoRequest extends Schema.Class<UpdateVideoRequest>("UpdateVideoRequest")({
  video: Schema.Struct({
    title: Schema.optional(RequiredString(maxTitleLength)),
    category: Schema.optional(VideoCategory),
    description: Schema.optional(Schema.NullOr(BoundedString(maxDescriptionLength))),
    patient_id: Schema.optional(Schema.NullOr(PatientId)),
    provider_id: Schema.optional(Schema.NullOr(ProviderId)),
    appointment_id: Schema.optional(Schema.NullOr(AppointmentId)),
    duration_seconds: Schema.optional(Schema.NullOr(Duration)),
    shared_with_family: Schema.optional(Schema.Boolean),
    status: Schema.optional(VideoStatus.annotations({ description: "Only completed ↔ archived" }))
  })
}, requestBody({ video: { title: "Session 4 (edited)", shared_with_family: true } }, { video: { status: "archived" } })) {}

const VideoListQuery = listQuery({
  size: "page_size",
  fields: {
    category: Schema.optional(VideoCategory),
    status: Schema.optional(VideoStatus),
    patient_id: Schema.optional(PatientIdFromText),
    provider_id: Schema.optional(ProviderIdFromText)
  }
})

export class VideoList extends Schema.Class<VideoList>("VideoList")({ videos: Schema.Array(Video), pagination: Pagination }) {}
export class VideoResponse extends Schema.Class<VideoResponse>("VideoResponse")({ video: Video }) {}

export class StartUploadRequest extends Schema.Class<StartUploadRequest>("StartUploadRequest")({
  upload: Schema.Struct({
    filename: RequiredString(maxFilenameLength),
    content_type: UploadContentType.annotations({ description: "video/mp4, video/quicktime or video/webm" }),
    size_bytes: Schema.Int.pipe(
      Schema.greaterThan(0, { message: () => "must be greater than 0" }),
      Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER, { message: () => "is too large" }),
      Schema.annotations({ description: "The file's exact size; at most VIDEO_MAX_BYTES (2 GiB by default)" })
    )
  })
}, requestBody({ upload: { filename: "session-4.mp4", content_type: "video/mp4", size_bytes: 52_428_800 } })) {}

export class UploadPart extends Schema.Class<UploadPart>("UploadPart")({
  part_number: Schema.Int,
  url: Schema.String.annotations({ description: "PUT the part's bytes here (no other header needed); keep the response's `ETag`" }),
  etag: Schema.NullOr(Schema.String).annotations({ description: "The stored part's ETag; null until it is stored" }),
  size: Schema.NullOr(Schema.Number)
}) {}

export class Upload extends Schema.Class<Upload>("Upload")({
  part_size: Schema.Int.annotations({ description: "Every part but the last has exactly this many bytes" }),
  part_count: Schema.Int,
  expires_at: IsoTimestamp.annotations({ description: `When the part URLs stop working (${partUrlMinutes} minutes); ask again for fresh ones` }),
  parts: Schema.Array(UploadPart)
}) {}

export class UploadResponse extends Schema.Class<UploadResponse>("UploadResponse")({ upload: Upload }) {}

export class CompleteUploadRequest extends Schema.Class<CompleteUploadRequest>("CompleteUploadRequest")({
  parts: BoundedArray(Schema.Struct({
    part_number: Schema.Int.pipe(
      Schema.greaterThanOrEqualTo(1, { message: () => "must be greater than 0" }),
      Schema.lessThanOrEqualTo(maxParts, { message: () => `must be less than or equal to ${maxParts}` })
    ),
    etag: RequiredString(200)
  }), maxParts)
}, requestBody({ parts: [{ part_number: 1, etag: "\"9b2cf535f27731c974343645a3985328\"" }, { part_number: 2, etag: "\"5f363e0e58a95f06cbe9bbc662c5dfb6\"" }] })) {}

export class VideoStatusResponse extends Schema.Class<VideoStatusResponse>("VideoStatusResponse")(VideoStatusReport.fields) {}

const idPath = Schema.Struct({ id: VideoIdFromText })

export class VideosApi extends HttpApiGroup.make("videos")
  .add(
    HttpApiEndpoint.get("list", "/clinic/videos")
      .setUrlParams(VideoListQuery)
      .addSuccess(VideoList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List videos",
        description: `The videos the caller may read, newest first, ${videosPageSize} a page by default; filters by category, ` +
          "status, patient and provider. Deleted videos are never listed. A parent naming another family's patient gets " +
          "404 `Patient not found`.",
        access,
        spec: "general §2.9, §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/videos")
      .setPayload(CreateVideoRequest)
      .addSuccess(VideoResponse, { status: 201 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Create a video record",
        description: "A video in status `uploading`; then send the file with the upload endpoints. 422, nothing saved: a blank " +
          "or too long title, a category outside the six, an unknown patient, provider or appointment (\"must exist\"), an " +
          "appointment of another patient or provider (\"does not match the patient\"); therapy_session, consultation, " +
          "group_session and assessment need `patient_id`.",
        access: "Admins, providers and supervisors (others 403).",
        patients: namedPatient,
        spec: "general §2.9, §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/videos/:id")
      .setPath(idPath)
      .addSuccess(VideoResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a video",
        description: "One video with signed `file_url` and `thumbnail_url` once completed (null before); 404 `Video not found` " +
          "for an unknown or deleted one.",
        access,
        patients: videoPatient,
        spec: "general §2.9, §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/videos/:id")
      .setPath(idPath)
      .setPayload(UpdateVideoRequest)
      .addSuccess(VideoResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a video",
        description: "Changes the given fields with the create rules. `status` moves only completed ↔ archived, else 422 " +
          "`{\"errors\":{\"status\":[\"cannot change from processing to completed\"]}}`.",
        access: writers,
        patients: namedPatient,
        spec: "general §2.9, §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/clinic/videos/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete a video",
        description: "Status `deleted` (the record stays, answering 404); a job removes every stored file of it (retried).",
        access: writers,
        spec: "general §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.get("status", "/clinic/videos/:id/status")
      .setPath(idPath)
      .addSuccess(VideoStatusResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Video processing status",
        description: "Measured progress, never timed: while uploading, the stored bytes ÷ size; while processing, download 10 %, " +
          "probe 5 %, transcode 75 % (by ffmpeg's position), thumbnail and storing 10 %. 100 only when completed. " +
          "`estimated_completion` is null before 5 % and 2 s, the finish time when completed, null when failed.",
        access,
        spec: "general §2.9, §4.10"
      }))
  )
  .add(
    HttpApiEndpoint.post("startUpload", "/clinic/videos/:id/upload")
      .setPath(idPath)
      .setPayload(StartUploadRequest)
      .addSuccess(UploadResponse, { status: 201 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Start the file upload",
        description: "Starts a multipart upload of the file (mp4, QuickTime or WebM, at most VIDEO_MAX_BYTES) and answers a " +
          `signed PUT URL per part, valid ${partUrlMinutes} minutes. Starting again replaces an unfinished upload. ` +
          "Not in the spec (docs/videos.md).",
        access: "The video's creator, while it is uploading (else 403 / 422).",
        spec: "general §4.10 (not shown there: ours, docs/videos.md)"
      }))
  )
  .add(
    HttpApiEndpoint.get("showUpload", "/clinic/videos/:id/upload")
      .setPath(idPath)
      .addSuccess(UploadResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Resume the file upload",
        description: "The parts stored so far (with their ETags) and fresh URLs for every part; a part may be sent again.",
        access: "The video's creator, while it is uploading.",
        spec: "general §4.10 (not shown there: ours, docs/videos.md)"
      }))
  )
  .add(
    HttpApiEndpoint.post("completeUpload", "/clinic/videos/:id/upload/complete")
      .setPath(idPath)
      .setPayload(CompleteUploadRequest)
      .addSuccess(VideoResponse, { status: 202 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Complete the file upload",
        description: "Assembles the parts (every one, with the ETag its PUT answered) and queues processing: 202 with status " +
          "`processing`. Missing or wrong parts: 422 `parts` \"is incomplete\", still uploading.",
        access: "The video's creator, while it is uploading.",
        spec: "general §4.10 (not shown there: ours, docs/videos.md)"
      }))
  )
  .add(
    HttpApiEndpoint.del("abortUpload", "/clinic/videos/:id/upload")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Abort the file upload",
        description: "Drops the unfinished upload and its parts; the video stays `uploading` for a new one.",
        access: "The video's creator, while it is uploading.",
        spec: "general §4.10 (not shown there: ours, docs/videos.md)"
      }))
  )
  .add(
    HttpApiEndpoint.post("retry", "/clinic/videos/:id/retry")
      .setPath(idPath)
      .addSuccess(VideoResponse, { status: 202 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Retry processing",
        description: "Queues a failed video's processing again (its source is kept until it completes); 422 under `status` " +
          "for any other status, or a failure that left no file (an upload that was never completed).",
        access: writers,
        spec: "general §4.10 (not shown there: ours, docs/videos.md)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Videos",
    description: "Clinic videos: records, resumable uploads straight to storage, ffmpeg processing into an H.264/AAC MP4 " +
      "with a thumbnail, status, and signed playback links that honour Range."
  }))
{}
