/**
 * Clinic videos (general §2.9): the record, its status, and the pure rules of uploads
 * (part plan), progress (measured stages) and playback links.
 */
import { Schema } from "effect"
import { AppointmentId, PatientId, ProviderId, UserId, VideoId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

export const videoCategories = ["therapy_session", "consultation", "group_session", "educational", "assessment", "training"] as const
export const VideoCategory = Schema.Literal(...videoCategories).annotations({ message: () => "is not included in the list" })
export type VideoCategory = typeof VideoCategory.Type

/** Categories about one patient: they need `patient_id`. */
export const patientCategories: ReadonlyArray<VideoCategory> = ["therapy_session", "consultation", "group_session", "assessment"]

export const videoStatuses = ["uploading", "processing", "completed", "failed", "archived", "deleted"] as const
export const VideoStatus = Schema.Literal(...videoStatuses).annotations({ message: () => "is not included in the list" })
export type VideoStatus = typeof VideoStatus.Type

export const uploadContentTypes = ["video/mp4", "video/quicktime", "video/webm"] as const
export const UploadContentType = Schema.Literal(...uploadContentTypes).annotations({ message: () => "is not included in the list" })

export class Video extends Schema.Class<Video>("Video")({
  id: VideoId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  category: VideoCategory,
  status: VideoStatus,
  patient_id: Schema.NullOr(PatientId),
  provider_id: Schema.NullOr(ProviderId),
  appointment_id: Schema.NullOr(AppointmentId),
  duration_seconds: Schema.NullOr(Schema.Number).annotations({ description: "As given until processing probes the file, then the file's" }),
  file_url: Schema.NullOr(Schema.String).annotations({
    description: "Signed link to the H.264/AAC MP4 (honours `Range`), null until completed; valid max(30 min, duration + 30 min), at most 6 h"
  }),
  thumbnail_url: Schema.NullOr(Schema.String).annotations({ description: "Signed link to a 320-px-wide JPEG taken at 10 % of the video; null until completed" }),
  shared_with_family: Schema.Boolean,
  created_by_id: UserId,
  size_bytes: Schema.NullOr(Schema.Number).annotations({ description: "The uploaded file's size, once an upload started" }),
  content_type: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class VideoStatusReport extends Schema.Class<VideoStatusReport>("VideoStatusReport")({
  id: VideoId,
  status: VideoStatus,
  progress_percentage: Schema.Int,
  estimated_completion: Schema.NullOr(IsoTimestamp),
  error_message: Schema.NullOr(Schema.String)
}) {}

// Uploads

export const mib = 1024 * 1024
/** Parts are 16 MiB (S3 wants ≥ 5 MiB but the last, and ≤ 10,000 parts), larger only for files over 156 GiB. */
export const defaultPartSize = 16 * mib
export const maxParts = 10_000

export interface PartPlan {
  readonly partSize: number
  readonly partCount: number
}

export const partPlan = (sizeBytes: number): PartPlan => {
  const partSize = Math.max(defaultPartSize, Math.ceil(sizeBytes / maxParts / mib) * mib)
  return { partSize, partCount: Math.max(1, Math.ceil(sizeBytes / partSize)) }
}

// Progress (measured, never timed)

/** Share of the processing bar per stage: download 10, probe 5, transcode/remux 75, thumbnail and store 10. */
export const stageSpans = {
  download: [0, 10],
  probe: [10, 15],
  transcode: [15, 90],
  finish: [90, 99]
} as const
export type Stage = keyof typeof stageSpans

/** The percentage at `fraction` (0…1) of a stage; 100 only for a completed video. */
export const stagePercent = (stage: Stage, fraction: number): number => {
  const [from, to] = stageSpans[stage]
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0))
  return Math.floor(from + (to - from) * f)
}

/**
 * now + elapsed × (100 − p) ÷ p, once p ≥ 5 and 2 s have passed; null before (too little to go on).
 */
export const estimateCompletion = (startedAtMs: number, nowMs: number, percent: number): Date | null => {
  const elapsed = nowMs - startedAtMs
  if (percent < 5 || elapsed < 2000 || percent >= 100) return null
  return new Date(nowMs + Math.round(elapsed * (100 - percent) / percent))
}

// Playback links

/** max(30 min, duration + 30 min), at most 6 h, in seconds. */
export const linkLifetimeSeconds = (durationSeconds: number | null): number =>
  Math.min(6 * 3600, Math.max(30 * 60, Math.ceil(durationSeconds ?? 0) + 30 * 60))

// Processing

/** Longest video processed (4 h). */
export const maxDurationSeconds = 4 * 3600

export interface ProbeStream {
  readonly codec_type?: string
  readonly codec_name?: string
}

export interface ProbeResult {
  readonly format?: { readonly format_name?: string; readonly duration?: string }
  readonly streams?: ReadonlyArray<ProbeStream>
}

/** An MP4 with H.264 video and AAC (or no) audio plays everywhere as it is: remux, else transcode. */
export const needsTranscode = (probe: ProbeResult): boolean => {
  const format = probe.format?.format_name ?? ""
  const streams = probe.streams ?? []
  const video = streams.filter((s) => s.codec_type === "video")
  const audio = streams.filter((s) => s.codec_type === "audio")
  const isMp4 = format.split(",").includes("mp4")
  return !(isMp4 && video.length > 0 && video.every((s) => s.codec_name === "h264") && audio.every((s) => s.codec_name === "aac"))
}

export const videoMessages = {
  notFound: "Video not found",
  notPlayable: "File is not a playable video",
  tooLong: "Video is longer than 4 hours",
  unavailable: "Video processing is unavailable",
  notCompleted: "Upload was not completed",
  crashed: "Video processing failed",
  incomplete: "is incomplete",
  tooLarge: "is too large",
  sizeMismatch: "does not match size_bytes",
  notUploading: (status: string) => `is ${status}: the upload is closed`,
  move: (from: string, to: string) => `cannot change from ${from} to ${to}`,
  mustExist: "must exist",
  doesNotMatch: "does not match the patient",
  notFailed: (status: string) => `is ${status}: only failed videos can be retried`
} as const
