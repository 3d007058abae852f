import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  addendum, adminNotesPath, adminToken, answer, answeredAddendum, askedAddendum, auditActions, content, createdNote, type NoteBody, noteIn,
  pngDataUri, setting, signedOff, signOff, staffMember, updatedNote
} from "./helpers.js"

type SignOffBody = { sign_off: Record<string, unknown> & { id: number; signature_url: string } }

const signatureError = (field: string, message: string) => ({ status: 422, body: { errors: { [field]: [message] } } })
const png = "must be a PNG image (data:image/png;base64,…)"

/** The raw bytes and content type of a GET. */
const download = (url: string, token: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.get(url).pipe(HttpClientRequest.setHeader("x-user-token", token)))
    const bytes = new Uint8Array(yield* response.arrayBuffer)
    return { status: response.status, type: response.headers["content-type"], bytes }
  }).pipe(Effect.orDie)

const fontDirectory = new URL("../../../node_modules/pdfjs-dist/standard_fonts/", import.meta.url).pathname

const pdfText = (bytes: Uint8Array) =>
  Effect.promise(async () => {
    const document = await getDocument({ data: bytes, useSystemFonts: false, standardFontDataUrl: fontDirectory }).promise
    const parts: Array<string> = []
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n)
      const text = await page.getTextContent()
      parts.push(text.items.map((item) => ("str" in item ? item.str : "")).join(" "))
    }
    return parts.join("\n")
  })

layer(TestApp())("session notes: addenda, sign-offs, signatures, admin and PDF", (it) => {
  it.effect("signatures: PNGs only, within the size and dimension caps; stored with the hash of what was signed", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const id = yield* noteIn(s, "pending_signature")
      const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString("base64")
      const validPng = pngDataUri()
      const truncated = validPng.slice(0, 22 + 64)
      const cases: Array<[string, string]> = [
        [`data:image/jpeg;base64,${jpeg}`, png],
        [`data:image/png;base64,${jpeg}`, png],
        ["not a data uri", png],
        ["data:image/png;base64,!!!!", png],
        [`data:text/plain;base64,${Buffer.from("hello").toString("base64")}`, png],
        [truncated, "is not a valid PNG image"],
        [pngDataUri(3000, 2), "is too large (maximum is 2000×2000 pixels)"],
        [pngDataUri(300, 300, true), "is too long (maximum is 349560 characters)"]
      ]
      for (const [signature, message] of cases) {
        expect(yield* signOff(admin, id, { signature }), message).toMatchObject(signatureError("signature", message))
        expect(yield* addendum(admin, id, { signature }), message).toMatchObject(signatureError("signature", message))
      }
      const adminClient = yield* clientAs(admin)
      expect((yield* adminClient.sessionNotes.show({ path: { id } })).session_note).toMatchObject({ status: "pending_signature", sign_offs: [] })
      // A valid one: stored under the note, linked, with the content hash the reviewer signed.
      const signed = yield* signOff(admin, id, { signature: validPng, instructions: "Reviewed.", review_date: "2026-01-06T15:30:00-08:00" })
      expect(signed.status).toBe(201)
      const body = (signed.body as SignOffBody).sign_off
      expect(Object.keys(body).sort()).toEqual(["created_at", "id", "instructions", "review_date", "reviewer_id", "session_note_id", "signature", "signature_url"])
      // The spec's signature is the base64 PNG data itself; the signed link goes beside it.
      expect(body).toMatchObject({ session_note_id: id, instructions: "Reviewed.", review_date: "2026-01-06T23:30:00.000Z", signature: validPng })
      expect(body.signature_url).toMatch(new RegExp(`^memory://session-notes/${id}/signature-[0-9a-f]{64}\\.png\\?expires=\\d+$`))
      const objects = yield* Effect.flatMap(MemoryObjectStore, (store) => store.objects)
      const key = body.signature_url.slice("memory://".length).split("?")[0]!
      expect(objects.get(key)?.contentType).toBe("image/png")
      expect(Buffer.from(objects.get(key)!.body).toString("base64")).toBe(validPng.split(",")[1])
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ signed_content_sha256: string; content_sha256: string }>`SELECT o.signed_content_sha256, n.content_sha256
        FROM session_note_sign_offs o JOIN session_notes n ON n.id = o.session_note_id WHERE o.id = ${body.id}`.pipe(Effect.orDie)
      expect(row!.signed_content_sha256).toBe(row!.content_sha256)
      const note = ((yield* request("GET", `${adminNotesPath}/${id}`, { token: admin })).body as NoteBody).session_note
      const embedded = {
        id: body.id, reviewer_id: body.reviewer_id, review_date: "2026-01-06T23:30:00.000Z", signature: validPng,
        signature_url: expect.stringMatching(new RegExp(`^memory://${key}\\?expires=\\d+$`)),
        content_sha256: row!.content_sha256, content_matches: true
      }
      expect(note.sign_offs).toEqual([embedded])
      // Lists carry the same (session-notes.md: the cost).
      const listed = (yield* request("GET", `${adminNotesPath}?patient_id=${s.patientId}`, { token: admin })).body as { session_notes: Array<NoteBody["session_note"]> }
      expect(listed.session_notes.find((n) => n.id === id)!.sign_offs).toEqual([embedded])
      // Addenda carry both signatures.
      const other = yield* setting(admin)
      const open = yield* noteIn(other, "pending_review")
      const asked = yield* askedAddendum(admin, open, { signature: pngDataUri(60, 30) })
      expect(asked).toMatchObject({
        signature: pngDataUri(60, 30), signature_url: expect.stringMatching(/^memory:\/\/session-notes\//), responded_signature: null, responded_signature_url: null
      })
      expect(yield* answer(other.provider.token, asked.id, { responded_signature: `data:image/png;base64,${jpeg}` }))
        .toMatchObject(signatureError("responded_signature", png))
      const answered = yield* answeredAddendum(other.provider.token, asked.id, { responded_signature: pngDataUri(50, 25) })
      expect(answered).toMatchObject({
        signature: pngDataUri(60, 30), responded_signature: pngDataUri(50, 25), responded_signature_url: expect.stringMatching(/^memory:\/\/session-notes\//)
      })
    }))

  it.effect("sign-offs are changed and withdrawn by their reviewer or an admin until the note is completed", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin, { supervised: true })
      const supervisor = s.supervisor!
      const { id: noteId } = yield* createdNote(s.provider.token, s)
      expect((yield* updatedNote(s.provider.token, noteId, { status: "pending_review" })).status).toBe("pending_review")
      const given = yield* signedOff(supervisor.token, noteId, { instructions: "First look." })
      expect(given).toMatchObject({ session_note_id: noteId, reviewer_id: supervisor.userId, instructions: "First look." })
      const signOffId = given.id
      const path = `${adminNotesPath}/sign_offs/${signOffId}`
      expect(yield* request("PUT", path, { token: s.provider.token, body: { sign_off: { instructions: "x" } } }))
        .toMatchObject({ status: 422, body: { errors: { sign_off: ["can only be changed by its reviewer or an admin"] } } })
      const stranger = yield* staffMember(admin)
      expect(yield* request("PUT", path, { token: stranger.token, body: { sign_off: { instructions: "x" } } }))
        .toMatchObject({ status: 404, body: { errors: "Sign off not found" } })
      // A date alone (raw: the typed client sends timestamps) is midnight UTC.
      const changed = yield* request("PUT", path, { token: supervisor.token, body: { sign_off: { instructions: "Second look.", review_date: "2026-01-08" } } })
      expect(changed).toMatchObject({ status: 200, body: { sign_off: { instructions: "Second look.", review_date: "2026-01-08T00:00:00.000Z" } } })
      const supervisorClient = yield* clientAs(supervisor.token)
      const typedChange = yield* supervisorClient.sessionNoteReviews.updateSignOff({
        path: { id: signOffId }, payload: { sign_off: { review_date: new Date("2026-01-09T12:00:00.000Z") } }
      })
      expect(typedChange.sign_off).toMatchObject({ id: signOffId, instructions: "Second look.", review_date: new Date("2026-01-09T12:00:00.000Z") })
      expect(yield* request("DELETE", path, { token: s.provider.token })).toMatchObject({ status: 422 })
      yield* supervisorClient.sessionNoteReviews.deleteSignOff({ path: { id: signOffId } })
      expect(yield* request("DELETE", path, { token: supervisor.token })).toMatchObject({ status: 404, body: { errors: "Sign off not found" } })
      expect(yield* auditActions("session_note", noteId)).toEqual(expect.arrayContaining([
        "session_note.sign_off_create", "session_note.sign_off_update", "session_note.sign_off_delete"
      ]))
      // Once completed, sign-offs stay.
      const done = yield* noteIn(yield* setting(admin), "completed")
      const final = (yield* (yield* clientAs(admin)).sessionNotes.show({ path: { id: done } })).session_note.sign_offs
      const finalPath = `${adminNotesPath}/sign_offs/${final[0]!.id}`
      const locked = { status: 422, body: { errors: { status: ["is completed: the sign-offs of a completed note can't be changed"] } } }
      expect(yield* request("PUT", finalPath, { token: admin, body: { sign_off: { instructions: "late" } } })).toMatchObject(locked)
      expect(yield* request("DELETE", finalPath, { token: admin })).toMatchObject(locked)
      expect(yield* request("PUT", `${adminNotesPath}/addendums/999999`, { token: admin, body: { addendum: { instructions_response: "x" } } }))
        .toMatchObject({ status: 404, body: { errors: "Addendum not found" } })
      expect(yield* addendum(admin, 999999)).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
    }))

  it.effect("admin list, filters and compliance-restricted deletion", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const a = yield* setting(admin)
      const b = yield* setting(admin)
      const draft = yield* noteIn(a, "draft")
      const review = yield* noteIn(b, "pending_review")
      const client = yield* clientAs(admin)
      const ids = (page: { readonly session_notes: ReadonlyArray<{ readonly id: number }> }) => page.session_notes.map((n) => n.id)
      expect(ids(yield* client.sessionNotes.list({ urlParams: { patient_id: a.patientId } }))).toEqual([draft])
      expect(ids(yield* client.sessionNotes.list({ urlParams: { provider_id: ProviderId.make(b.provider.id), status: "pending_review" } }))).toEqual([review])
      const providerB = (yield* client.sessionNotes.show({ path: { id: review } })).session_note.provider
      expect(ids(yield* client.sessionNotes.list({ urlParams: { search: providerB.last_name } }))).toEqual([review])
      const filtered = yield* client.sessionNotes.filter({
        payload: { filters: { status: ["draft", "pending_review"], provider_name: providerB.last_name, appointment_type: "therapy" } }
      })
      expect(ids(filtered)).toEqual([review])
      const byDate = yield* client.sessionNotes.filter({ payload: { filters: { status: "draft", date: { start_date: "2001-01-01", end_date: "2001-01-02" } } } })
      expect(byDate.session_notes).toEqual([])
      const options = yield* client.sessionNotes.filters()
      expect(options.statuses).toEqual(["draft", "pending_review", "pending_signature", "completed", "requires_addendum", "archived"])
      expect(options.appointment_types).toContain("therapy")
      expect(options.providers).toEqual(expect.arrayContaining([expect.objectContaining({ id: a.provider.id })]))
      // Only drafts are deleted.
      expect(yield* request("DELETE", `${adminNotesPath}/${review}`, { token: admin })).toMatchObject({
        status: 422, body: { errors: { status: ["is pending_review: notes in that status are kept for compliance; only draft notes can be deleted"] } }
      })
      yield* client.sessionNotes.delete({ path: { id: draft } })
      expect(yield* request("GET", `${adminNotesPath}/${draft}`, { token: admin })).toMatchObject({ status: 404, body: { errors: "Session note not found" } })
      expect(yield* auditActions("session_note", draft)).toEqual(["session_note.create", "session_note.read", "session_note.delete"])
      // Non-admins are refused here.
      expect(yield* request("GET", adminNotesPath, { token: a.provider.token })).toMatchObject({ status: 403, body: { errors: "Admin access required" } })
    }))

  it.effect("a signed note downloads as a PDF with its content, addenda and sign-offs", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const draft = yield* noteIn(s, "draft")
      expect(yield* request("GET", `${adminNotesPath}/${draft}/pdf`, { token: admin })).toMatchObject({
        status: 422, body: { errors: { status: ["is draft: only signed notes can be exported"] } }
      })
      const other = yield* setting(admin)
      const id = yield* noteIn(other, "completed")
      const asked = yield* askedAddendum(admin, id, { instructions: "Clarify the homework.", signature: pngDataUri(80, 40) })
      yield* answeredAddendum(other.provider.token, asked.id, { instructions_response: "Homework: feelings chart daily." })
      const pdf = yield* download(`${adminNotesPath}/${id}/pdf`, admin)
      expect(pdf.status).toBe(200)
      expect(pdf.type).toMatch(/^application\/pdf/)
      expect(Buffer.from(pdf.bytes.subarray(0, 5)).toString("latin1")).toBe("%PDF-")
      const text = yield* pdfText(pdf.bytes)
      for (const expected of [`Session note ${id}`, content.subjective, content.plan, "Clarify the homework.", "Homework: feelings chart daily.", "Sign-offs", "matches the stored content"]) {
        expect(text).toContain(expected)
      }
      expect(yield* auditActions("session_note", id)).toContain("session_note.pdf")
    }))
})
