/**
 * Clinic video records (general §2.9, §4.10, §5.4): create and its 422s, update and the
 * status rule, delete (a job removes every object), the access matrix, and the upload protocol on
 * the memory store with the memory processor (multi-part, resume, incomplete, abort, retry, crash).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { UpdateVideoRequest } from "../../../src/Api/Videos/Videos.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { fakeVideo, MemoryVideoProcessor } from "../../../src/Layers/MemoryVideoProcessor.js"
import type { VideoId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  adminToken, createdVideo, createVideo, family, insertAppointment, insertPatient, jobsDueNow, provider, runVideoJobs, runVideoJobsHere,
  startedUpload, startUpload, type UploadBody, type VideoBody, videosPath
} from "./helpers.js"

const mib = 1024 * 1024

/** Sends every part of `data` through the memory store, as a client PUT to each URL would. */
const sendParts = (upload: UploadBody, data: Uint8Array, only?: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const store = yield* MemoryObjectStore
    const etags: Array<{ part_number: number; etag: string }> = []
    for (const part of upload.parts) {
      if (only !== undefined && !only.includes(part.part_number)) continue
      const uploadId = /uploads\/([0-9a-f]+)\//.exec(part.url)![1]!
      const body = data.subarray((part.part_number - 1) * upload.part_size, part.part_number * upload.part_size)
      const etag = yield* store.uploadPart(uploadId, part.part_number, body)
      etags.push({ part_number: part.part_number, etag: Option.getOrThrow(etag) })
    }
    return etags
  })

/** A fake video `seconds` long padded to `size` bytes. */
const fakeFile = (seconds: number, size: number) => {
  const data = new Uint8Array(size)
  data.set(fakeVideo(seconds))
  return data
}

/** Uploads `data` and completes the upload through the typed client; the video as it then is. */
const uploadAndComplete = (token: string, id: VideoId, data: Uint8Array) =>
  Effect.gen(function*() {
    const upload = yield* startedUpload(token, id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: data.byteLength })
    const parts = yield* sendParts(upload, data)
    return (yield* (yield* clientAs(token)).videos.completeUpload({ path: { id }, payload: { parts } })).video
  })

layer(TestApp())("clinic videos", (it) => {
  it.effect("create: 201 uploading; the 422s save nothing", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const patientId = yield* insertPatient()
      const other = yield* insertPatient()
      const appointment = yield* insertAppointment(patientId, p.id)
      const created = yield* createVideo(p.token, {
        title: " Session 1 ", category: "therapy_session", patient_id: patientId, provider_id: p.id, appointment_id: appointment.id,
        duration_seconds: 12
      })
      expect(created.status).toBe(201)
      const video = (created.body as { video: VideoBody & Record<string, unknown> }).video
      expect(video).toMatchObject({ title: "Session 1", status: "uploading", file_url: null, thumbnail_url: null, duration_seconds: 12 })
      expect(Object.keys(video).sort()).toEqual([
        "appointment_id", "category", "content_type", "created_at", "created_by_id", "description", "duration_seconds", "file_url",
        "id", "patient_id", "provider_id", "shared_with_family", "size_bytes", "status", "thumbnail_url", "title", "updated_at"
      ])

      const sql = yield* SqlClient.SqlClient
      const [before] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM videos`
      const cases: ReadonlyArray<[Record<string, unknown>, Record<string, ReadonlyArray<string>>]> = [
        [{ title: " ", category: "educational" }, { "video.title": ["can't be blank"] }],
        [{ title: "x".repeat(201), category: "educational" }, { "video.title": ["is too long (maximum is 200 characters)"] }],
        [{ title: "t", category: "cooking" }, { "video.category": ["is not included in the list"] }],
        [{ title: "t", category: "therapy_session" }, { patient_id: ["can't be blank"] }],
        [{ title: "t", category: "educational", patient_id: 999999, provider_id: 999999, appointment_id: 999999 },
          { patient_id: ["must exist"], provider_id: ["must exist"], appointment_id: ["must exist"] }],
        [{ title: "t", category: "consultation", patient_id: other, appointment_id: appointment.id }, { appointment_id: ["does not match the patient"] }]
      ]
      for (const [body, errors] of cases) {
        const response = yield* createVideo(p.token, body)
        expect(response.status, JSON.stringify(body)).toBe(422)
        const got = (response.body as { errors: Record<string, ReadonlyArray<string>> }).errors
        for (const [field, messages] of Object.entries(errors)) {
          const key = Object.keys(got).find((k) => k === field || k.endsWith(field.replace("video.", "")))
          expect(key, `${field} in ${JSON.stringify(got)}`).toBeDefined()
          expect(got[key!]).toEqual(messages)
        }
      }
      const [after] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM videos`
      expect(after!.n).toBe(before!.n)
    }))

  it.effect("update: fields, completed ↔ archived only; unknown and deleted → 404", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const video = yield* createdVideo(p.token, { title: "Intro", category: "educational" })
      const put = (id: number, body: Record<string, unknown>, token = p.token) => request("PUT", `${videosPath}/${id}`, { token, body: { video: body } })
      const client = yield* clientAs(p.token)
      const update = (changes: UpdateVideoRequest["video"]) =>
        Effect.map(client.videos.update({ path: { id: video.id }, payload: { video: changes } }), (response) => response.video)
      expect(yield* update({ title: "Intro 2", description: "About us" })).toMatchObject({ title: "Intro 2", description: "About us" })
      const moved = yield* put(video.id, { status: "completed" })
      expect(moved).toMatchObject({ status: 422, body: { errors: { status: ["cannot change from uploading to completed"] } } })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE videos SET status = 'processing' WHERE id = ${video.id}`
      expect((yield* put(video.id, { status: "completed" })).body).toEqual({ errors: { status: ["cannot change from processing to completed"] } })
      yield* sql`UPDATE videos SET status = 'completed', completed_at = now(), playback_key = ${`videos/${video.id}/playback.mp4`} WHERE id = ${video.id}`
      expect((yield* update({ status: "archived" })).status).toBe("archived")
      expect((yield* update({ status: "completed" })).status).toBe("completed")
      expect((yield* put(video.id, { category: "therapy_session" })).body).toEqual({ errors: { patient_id: ["can't be blank"] } })

      expect(yield* request("GET", `${videosPath}/999999`, { token: p.token })).toMatchObject({ status: 404, body: { errors: "Video not found" } })
      yield* client.videos.delete({ path: { id: video.id } })
      expect(yield* request("GET", `${videosPath}/${video.id}`, { token: p.token })).toMatchObject({ status: 404, body: { errors: "Video not found" } })
      expect((yield* put(video.id, { title: "x" })).status).toBe(404)
      const [row] = yield* sql<{ status: string; deleted_at: Date | null }>`SELECT status, deleted_at FROM videos WHERE id = ${video.id}`
      expect(row!.status).toBe("deleted")
      expect(row!.deleted_at).not.toBeNull()
    }))

  it.effect("access (§5.4): admins, creator, provider, primary patients, supervisees, parents, everyone for education", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const supervisor = yield* provider(admin, "supervisor")
      const creator = yield* provider(admin)
      const assigned = yield* provider(admin)
      const primary = yield* provider(admin)
      const stranger = yield* provider(admin)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE providers SET supervisor_id = ${supervisor.id} WHERE id = ${assigned.id}`
      const parent = yield* family
      const otherParent = yield* family
      yield* sql`UPDATE patients SET provider_id = ${primary.id} WHERE id = ${parent.patientId}`
      // The creator names a patient they may see: an appointment with them (a care relationship).
      yield* insertAppointment(parent.patientId, creator.id)
      const video = yield* createdVideo(creator.token, {
        title: "Session", category: "therapy_session", patient_id: parent.patientId, provider_id: assigned.id
      })
      const education = yield* createdVideo(creator.token, { title: "Welcome", category: "educational" })
      const show = (token: string, id = video.id) => Effect.map(request("GET", `${videosPath}/${id}`, { token }), (r) => r.status)
      const put = (token: string) => Effect.map(request("PUT", `${videosPath}/${video.id}`, { token, body: { video: { description: "d" } } }), (r) => r.status)

      expect(yield* show(admin)).toBe(200)
      expect(yield* show(creator.token)).toBe(200)
      expect(yield* show(assigned.token)).toBe(200)
      expect(yield* show(primary.token)).toBe(200)
      expect(yield* show(supervisor.token)).toBe(200)
      const refused = yield* request("GET", `${videosPath}/${video.id}`, { token: stranger.token })
      expect(refused).toMatchObject({ status: 403, body: { errors: "You are not authorized to perform this action." } })
      // Parents: only once completed and shared with the family, and only their own patient's.
      expect(yield* show(parent.token)).toBe(403)
      yield* sql`UPDATE videos SET status = 'completed', completed_at = now(), playback_key = ${`videos/${video.id}/playback.mp4`} WHERE id = ${video.id}`
      expect(yield* show(parent.token)).toBe(403)
      yield* sql`UPDATE videos SET shared_with_family = true WHERE id = ${video.id}`
      expect(yield* show(parent.token)).toBe(200)
      expect(yield* show(otherParent.token)).toBe(403)
      // Writers: creator, the video's provider, admins.
      expect(yield* put(creator.token)).toBe(200)
      expect(yield* put(assigned.token)).toBe(200)
      expect(yield* put(admin)).toBe(200)
      expect(yield* put(primary.token)).toBe(403)
      expect(yield* put(supervisor.token)).toBe(403)
      expect(yield* put(parent.token)).toBe(403)
      // Patient-less education: everyone once completed.
      expect(yield* show(otherParent.token, education.id)).toBe(403)
      yield* sql`UPDATE videos SET status = 'completed', completed_at = now() WHERE id = ${education.id}`
      expect(yield* show(otherParent.token, education.id)).toBe(200)
      expect(yield* show(stranger.token, education.id)).toBe(200)
      // Parents cannot create.
      expect((yield* createVideo(parent.token, { title: "t", category: "educational" })).status).toBe(403)
      // Lists hold exactly the readable ones.
      const listed = (token: string) =>
        Effect.flatMap(clientAs(token), (client) => client.videos.list({ urlParams: { page_size: 100 } })).pipe(
          Effect.map((page) => page.videos.map((v) => v.id))
        )
      expect(yield* listed(parent.token)).toEqual(expect.arrayContaining([video.id, education.id]))
      expect(yield* listed(otherParent.token)).not.toContain(video.id)
      expect(yield* listed(stranger.token)).not.toContain(video.id)
      expect(yield* listed(supervisor.token)).toContain(video.id)
      const filtered = yield* (yield* clientAs(admin)).videos.list({ urlParams: { patient_id: parent.patientId, category: "therapy_session" } })
      expect(filtered.videos.map((v) => v.id)).toEqual([video.id])
      // A patient video's link is audited.
      const [audited] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events WHERE action = 'video.link' AND target_id = ${video.id}`
      expect(audited!.n).toBeGreaterThan(0)
    }))

  it.effect("upload in parts, resume, incomplete, complete → processing → completed; delete leaves no object", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const other = yield* provider(admin)
      const video = yield* createdVideo(p.token, { title: "Talk", category: "training" })
      const data = fakeFile(7, 40 * mib)
      expect((yield* startUpload(p.token, video.id, { filename: "a.avi", content_type: "video/x-msvideo", size_bytes: 10 })).status).toBe(422)
      expect((yield* startUpload(p.token, video.id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: 3 * 1024 * mib })).body)
        .toEqual({ errors: { size_bytes: ["is too large"] } })
      expect((yield* startUpload(other.token, video.id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: 10 })).status).toBe(403)
      const upload = yield* startedUpload(p.token, video.id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: data.byteLength })
      expect(upload).toMatchObject({ part_size: 16 * mib, part_count: 3 })
      // Two parts, then the client goes away.
      const first = yield* sendParts(upload, data, [1, 3])
      const incomplete = yield* request("POST", `${videosPath}/${video.id}/upload/complete`, { token: p.token, body: { parts: first } })
      expect(incomplete).toMatchObject({ status: 422, body: { errors: { parts: ["is incomplete"] } } })
      // Resume: the stored parts and URLs for all; part 1 is sent again.
      const client = yield* clientAs(p.token)
      const again = (yield* client.videos.showUpload({ path: { id: video.id } })).upload
      expect(again.parts.map((part) => part.etag !== null)).toEqual([true, false, true])
      const status = yield* client.videos.status({ path: { id: video.id } })
      expect(status).toMatchObject({ status: "uploading", progress_percentage: Math.floor((16 * mib + 8 * mib) * 100 / (40 * mib)) })
      const rest = yield* sendParts(again, data, [1, 2])
      const parts = [...rest, ...first.filter((part) => part.part_number === 3)]
      const done = yield* client.videos.completeUpload({ path: { id: video.id }, payload: { parts } })
      expect(done.video.status).toBe("processing")

      yield* runVideoJobs(MemoryVideoProcessor.layer)
      const shown = (yield* client.videos.show({ path: { id: video.id } })).video
      expect(shown).toMatchObject({ status: "completed", duration_seconds: 7 })
      expect(shown.file_url).toMatch(/^memory:\/\/videos\/\d+\/playback\.mp4\?expires=/)
      expect(yield* client.videos.status({ path: { id: video.id } })).toMatchObject({ status: "completed", progress_percentage: 100, error_message: null })
      const store = yield* MemoryObjectStore
      const keys = () => Effect.map(store.objects, (objects) => [...objects.keys()].filter((k) => k.startsWith(`videos/${video.id}/`)).sort())
      expect(yield* keys()).toEqual([`videos/${video.id}/playback.mp4`, `videos/${video.id}/thumbnail.jpg`])

      yield* client.videos.delete({ path: { id: video.id } })
      yield* runVideoJobs(MemoryVideoProcessor.layer)
      expect(yield* keys()).toEqual([])
    }))

  it.effect("abort; bad input fails at once, no retry; a crash retries; retry re-enqueues a failed one", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const store = yield* MemoryObjectStore
      const client = yield* clientAs(p.token)
      const statusOf = (id: VideoId) => client.videos.status({ path: { id } })
      // Abort drops the upload.
      const aborted = yield* createdVideo(p.token, { title: "Abort", category: "training" })
      yield* startedUpload(p.token, aborted.id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: 100 })
      expect((yield* store.uploads).size).toBeGreaterThan(0)
      const before = (yield* store.uploads).size
      yield* client.videos.abortUpload({ path: { id: aborted.id } })
      expect((yield* store.uploads).size).toBe(before - 1)

      // Not a video: failed, not retried.
      const bad = yield* createdVideo(p.token, { title: "Bad", category: "training" })
      expect((yield* uploadAndComplete(p.token, bad.id, new TextEncoder().encode("not a video at all"))).status).toBe("processing")
      yield* runVideoJobs(MemoryVideoProcessor.layer)
      expect(yield* statusOf(bad.id)).toMatchObject({ status: "failed", error_message: "File is not a playable video", estimated_completion: null })
      const sql = yield* SqlClient.SqlClient
      const [pending] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs`
      expect(pending!.n).toBe(0)

      // A crashed worker: the job runs again and completes, objects stored once.
      const crash = yield* createdVideo(p.token, { title: "Crash", category: "training" })
      expect((yield* uploadAndComplete(p.token, crash.id, fakeFile(5, 1000))).status).toBe("processing")
      // Both runs share one memory processor.
      yield* Effect.gen(function*() {
        const memory = yield* MemoryVideoProcessor
        yield* memory.crashNext(1)
        yield* runVideoJobsHere
        expect(yield* statusOf(crash.id)).toMatchObject({ status: "processing" })
        yield* jobsDueNow
        yield* runVideoJobsHere
        expect(yield* memory.conversions).toEqual([false])
      }).pipe(Effect.provide(MemoryVideoProcessor.layer))
      expect(yield* statusOf(crash.id)).toMatchObject({ status: "completed" })
      const objects = [...(yield* store.objects).keys()].filter((k) => k.startsWith(`videos/${crash.id}/`)).sort()
      expect(objects).toEqual([`videos/${crash.id}/playback.mp4`, `videos/${crash.id}/thumbnail.jpg`])

      // Retry: a failed video runs again.
      const retry = yield* client.videos.retry({ path: { id: bad.id } })
      expect(retry.video).toMatchObject({ id: bad.id, status: "processing" })
      expect((yield* request("POST", `${videosPath}/${bad.id}/retry`, { token: p.token })).status).toBe(422)
      yield* runVideoJobs(MemoryVideoProcessor.layer)
      expect(yield* statusOf(bad.id)).toMatchObject({ status: "failed" })
    }))

  it.effect("the hourly sweep fails uploads idle 24 h and aborts them", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const p = yield* provider(admin)
      const video = yield* createdVideo(p.token, { title: "Idle", category: "training" })
      yield* startedUpload(p.token, video.id, { filename: "a.mp4", content_type: "video/mp4", size_bytes: 100 })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE videos SET upload_activity_at = now() - interval '25 hours' WHERE id = ${video.id}`
      const store = yield* MemoryObjectStore
      const before = (yield* store.uploads).size
      yield* sql`SELECT graphile_worker.add_job('sweep_video_uploads', '{}'::json)`
      yield* runVideoJobs(MemoryVideoProcessor.layer)
      expect(yield* (yield* clientAs(p.token)).videos.status({ path: { id: video.id } }))
        .toMatchObject({ status: "failed", error_message: "Upload was not completed" })
      expect((yield* store.uploads).size).toBe(before - 1)
    }))
})
