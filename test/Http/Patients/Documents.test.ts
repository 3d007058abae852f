import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { DiskObjectStoreLive } from "../../../src/Layers/DiskObjectStore.js"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import { SigningSecretLive } from "../../../src/Layers/SigningSecret.js"
import { maxDocumentBytes } from "../../../src/Domain/Patients/Records.js"
import { readDataUri } from "../../../src/Services/DataUri.js"
import { documentMessages, documentOf as documentRule } from "../../../src/Services/Patients/PatientDocuments.js"
import { clientAs, request, TestApp, testConfig } from "../../support/app.js"
import { auditActions } from "../Providers/helpers.js"
import { iso, newPatient, patientNotFound, signedIn, staffRequired } from "./helpers.js"

/** The upload's rule on a data URI given whole. */
const parseDocument = (file: string) => documentRule(readDataUri(file))

const pdf = Buffer.from("%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
const dataUri = (type: string, bytes: Uint8Array | string) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`

const family = Effect.gen(function*() {
  const staff = yield* signedIn("admin")
  const parent = yield* signedIn("parent")
  const patient = yield* newPatient(staff.token, { user_id: parent.id })
  return { staff, parent, patient }
})

const upload = (token: string, patient: number, name: string, file: string) =>
  request("POST", `/v1/clinic/patients/${patient}/documents`, { token, body: { document: { name, file } } })

const documentOf = (body: unknown) => (body as { document: Record<string, unknown> & { id: number; url: string } }).document

describe("document data URIs", () => {
  it("accept the allow-listed types whose bytes match; refuse the rest with a message for `file`", () => {
    expect(parseDocument(dataUri("application/pdf", pdf))).toMatchObject({ contentType: "application/pdf" })
    expect(parseDocument(dataUri("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])))).toMatchObject({ contentType: "image/png" })
    expect(parseDocument(dataUri("text/plain", "notes ✓"))).toMatchObject({ contentType: "text/plain" })
    expect(parseDocument("not a uri")).toBe(documentMessages.dataUri)
    expect(parseDocument(dataUri("application/x-msdownload", "MZ"))).toBe(documentMessages.contentType)
    expect(parseDocument(dataUri("text/html", "<script>"))).toBe(documentMessages.contentType)
    expect(parseDocument(dataUri("application/pdf", "MZ not a pdf"))).toBe(documentMessages.mismatch)
    expect(parseDocument(dataUri("text/plain", Buffer.from([0xff, 0xfe, 0x00])))).toBe(documentMessages.mismatch)
    expect(parseDocument("data:application/pdf;base64,%%%=")).toBe(documentMessages.base64)
    expect(parseDocument("data:text/plain;base64,")).toBe(documentMessages.empty)
    // The size is read from the encoded length, before any decoding.
    const justOver = "A".repeat(Math.ceil((maxDocumentBytes + 1) / 3) * 4)
    expect(parseDocument(`data:text/plain;base64,${justOver}`)).toBe(documentMessages.tooLarge)
  })
})

layer(TestApp())("patient documents, memory store", (it) => {
  it.effect("upload, list with 30-minute signed links, delete; the bytes live in the ObjectStore", () =>
    Effect.gen(function*() {
      const { staff, parent, patient } = yield* family
      const store = yield* MemoryObjectStore
      const uploaded = yield* upload(parent.token, patient, "consent.pdf", dataUri("application/pdf", pdf))
      expect(uploaded.status).toBe(201)
      const document = documentOf(uploaded.body)
      expect(document).toEqual({
        id: expect.any(Number), name: "consent.pdf", content_type: "application/pdf", size: pdf.byteLength, clinical: true,
        uploaded_by_id: parent.id, created_at: expect.stringMatching(iso), url: expect.stringMatching(/^memory:\/\/patients\//)
      })
      const issuedAt = Date.now()
      const expires = Number(/expires=(\d+)/.exec(document.url)![1])
      expect(expires * 1000 - issuedAt).toBeGreaterThan(Duration.toMillis("29 minutes"))
      expect(expires * 1000 - issuedAt).toBeLessThanOrEqual(Duration.toMillis("30 minutes") + 1000)
      const key = document.url.slice("memory://".length).split("?")[0]!
      const stored = (yield* store.objects).get(key)
      expect(stored?.contentType).toBe("application/pdf")
      expect(Buffer.from(stored!.body).equals(pdf)).toBe(true)

      yield* upload(staff.token, patient, "notes.txt", dataUri("text/plain", "Session notes"))
      const listed = yield* request("GET", `/v1/clinic/patients/${patient}/documents`, { token: parent.token })
      expect(listed.status).toBe(200)
      expect(listed.body).toMatchObject({
        documents: [{ name: "notes.txt", uploaded_by_id: staff.id }, { name: "consent.pdf", id: document.id }],
        pagination: { current_page: 1, total_pages: 1, total_count: 2, per_page: 25 }
      })

      const parentDelete = yield* request("DELETE", `/v1/clinic/patients/${patient}/documents/${document.id}`, { token: parent.token })
      expect(parentDelete.status).toBe(403)
      expect(parentDelete.body).toEqual(staffRequired)
      const deleted = yield* request("DELETE", `/v1/clinic/patients/${patient}/documents/${document.id}`, { token: staff.token })
      expect(deleted.status).toBe(204)
      expect((yield* store.objects).has(key)).toBe(false)
      const again = yield* request("DELETE", `/v1/clinic/patients/${patient}/documents/${document.id}`, { token: staff.token })
      expect(again.status).toBe(404)
      expect(again.body).toEqual({ errors: "Document not found" })
      expect(yield* auditActions("patient_document", document.id)).toEqual(["patient_document.create", "patient_document.delete"])
    }))

  it.effect("refuses types off the list, mismatched bytes and others' patients; nothing is stored", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family
      const other = yield* family
      const store = yield* MemoryObjectStore
      const before = (yield* store.objects).size
      for (const [file, message] of [
        [dataUri("text/html", "<script>alert(1)</script>"), documentMessages.contentType],
        [dataUri("image/png", "MZ executable"), documentMessages.mismatch],
        ["https://example.org/file.pdf", documentMessages.dataUri]
      ] as const) {
        const refused = yield* upload(staff.token, patient, "x", file)
        expect(refused.status).toBe(422)
        expect(refused.body).toEqual({ errors: { file: [message] } })
      }
      const blank = yield* request("POST", `/v1/clinic/patients/${patient}/documents`, { token: staff.token, body: { document: {} } })
      expect(blank.body).toEqual({ errors: { name: ["can't be blank"], file: ["can't be blank"] } })
      const foreignUpload = yield* upload(other.parent.token, patient, "x.pdf", dataUri("application/pdf", pdf))
      expect(foreignUpload.status).toBe(404)
      expect(foreignUpload.body).toEqual(patientNotFound)
      expect((yield* store.objects).size).toBe(before)

      const mine = documentOf((yield* upload(staff.token, patient, "a.pdf", dataUri("application/pdf", pdf))).body)
      for (const [method, url] of [
        ["GET", `/v1/clinic/patients/${patient}/documents`],
        ["DELETE", `/v1/clinic/patients/${patient}/documents/${mine.id}`]
      ] as const) {
        const refused = yield* request(method, url, { token: other.parent.token })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual(patientNotFound)
      }
      // Staff naming the document under another patient: not found.
      const crossed = yield* request("DELETE", `/v1/clinic/patients/${other.patient}/documents/${mine.id}`, { token: staff.token })
      expect(crossed.status).toBe(404)
      expect(crossed.body).toEqual({ errors: "Document not found" })
    }))
})

/** The app with documents on local disk, served through the app's own signed download route. */
const DiskApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(MemoryPush.layer, MemoryTelephony.layer, MemoryMailer.layer, DiskObjectStoreLive.pipe(Layer.provide(SigningSecretLive)))),
  Layer.provideMerge(testConfig({ signingSecret: Option.none() })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

layer(DiskApp)("patient documents, disk store", (it) => {
  it.effect("the listed link downloads the bytes for 30 minutes, then stops working", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family
      const uploaded = yield* upload(staff.token, patient, "summary.txt", dataUri("text/plain", "Discharge summary ✓"))
      expect(uploaded.status).toBe(201)
      const listed = yield* (yield* clientAs(staff.token)).patientDocuments.list({ path: { patient_id: patient }, urlParams: {} })
      const url = new URL(listed.documents[0]!.url)
      expect(url.pathname).toMatch(/^\/objects\/patients\/\d+\/documents\/[0-9a-f]{32}$/)
      const downloaded = yield* request("GET", url.pathname + url.search)
      expect(downloaded.status).toBe(200)
      expect(downloaded.headers["content-type"]).toBe("text/plain")
      expect(downloaded.body).toBe("Discharge summary ✓")
      yield* TestClock.adjust("31 minutes")
      const expired = yield* request("GET", url.pathname + url.search)
      expect(expired.status).toBe(403)
    }))
})
