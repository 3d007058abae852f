/**
 * The `videos` rows: columns, object keys, and the record as the API shows it (signed links once
 * completed). Who may read and write a video (§5.4) is Access's `scope.videos`.
 */
import { Effect } from "effect"
import type { AppointmentId, PatientId, ProviderId, UserId, VideoId } from "../../Domain/Ids.js"
import { linkLifetimeSeconds, Video, type VideoCategory, type VideoStatus } from "../../Domain/Videos/Video.js"
import type { ObjectStoreShape } from "../ObjectStore.js"

export interface VideoRow {
  readonly id: number
  readonly title: string
  readonly description: string | null
  readonly category: VideoCategory
  readonly status: VideoStatus
  readonly patient_id: number | null
  readonly provider_id: number | null
  readonly appointment_id: number | null
  readonly duration_seconds: number | null
  readonly shared_with_family: boolean
  readonly created_by_id: number
  readonly upload_id: string | null
  readonly filename: string | null
  readonly content_type: string | null
  readonly size_bytes: string | number | null
  readonly part_size: number | null
  readonly upload_started_at: Date | null
  readonly uploaded_bytes: string | number
  readonly uploaded_checked_at: Date | null
  readonly source_stored: boolean
  readonly progress: number
  readonly processing_started_at: Date | null
  readonly completed_at: Date | null
  readonly playback_key: string | null
  readonly thumbnail_key: string | null
  readonly error_message: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const videoColumns = [
  "id", "title", "description", "category", "status", "patient_id", "provider_id", "appointment_id", "duration_seconds",
  "shared_with_family", "created_by_id", "upload_id", "filename", "content_type", "size_bytes", "part_size",
  "upload_started_at", "uploaded_bytes", "uploaded_checked_at", "source_stored", "progress", "processing_started_at",
  "completed_at", "playback_key", "thumbnail_key", "error_message", "created_at", "updated_at"
].map((c) => `v.${c}`).join(", ")

/** Where a video's files live: deterministic, so a retried job overwrites rather than duplicates. */
export const videoKeys = (id: number) => ({
  source: `videos/${id}/source`,
  playback: `videos/${id}/playback.mp4`,
  thumbnail: `videos/${id}/thumbnail.jpg`
})

export const bytesOf = (value: string | number | null): number | null => (value === null ? null : Number(value))

/** The record as the API shows it: signed links only once completed (or archived). */
export const toVideo = (store: ObjectStoreShape, row: VideoRow) =>
  Effect.gen(function*() {
    const playable = row.status === "completed" || row.status === "archived"
    const lifetime = `${linkLifetimeSeconds(row.duration_seconds)} seconds` as const
    const fileUrl = playable && row.playback_key ? yield* store.signedUrl(row.playback_key, lifetime) : null
    const thumbnailUrl = playable && row.thumbnail_key ? yield* store.signedUrl(row.thumbnail_key, lifetime) : null
    return Video.make({
      id: row.id as VideoId,
      title: row.title,
      description: row.description,
      category: row.category,
      status: row.status,
      patient_id: row.patient_id as PatientId | null,
      provider_id: row.provider_id as ProviderId | null,
      appointment_id: row.appointment_id as AppointmentId | null,
      duration_seconds: row.duration_seconds,
      file_url: fileUrl,
      thumbnail_url: thumbnailUrl,
      shared_with_family: row.shared_with_family,
      created_by_id: row.created_by_id as UserId,
      size_bytes: bytesOf(row.size_bytes),
      content_type: row.content_type,
      created_at: row.created_at,
      updated_at: row.updated_at
    })
  })
