import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { ClaimDocumentId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import * as billing from "./helpers.js"
import { adminToken, billingSettings, claimsPath, setup } from "./helpers.js"

const pdf = Buffer.from("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const uri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString("base64")}`
type DocumentBody = { document: Record<string, unknown> & { id: number; url: string } }

const documentKeys = ["claim_id", "content_type", "created_at", "id", "kind", "name", "size", "updated_at", "url"]

const newClaim = (token: string) => Effect.flatMap(setup(token), (s) => billing.newClaim(token, s)).pipe(Effect.map((claim) => claim.id))

layer(TestApp({ billing: billingSettings({ maxDocumentBytes: 1024 }) }))("claim documents", (it) => {
  it.effect("upload, list, show, rename, replace and delete; files through the ObjectStore with 30-minute links", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const claimId = yield* newClaim(token)
      const base = `${claimsPath}/${claimId}/documents`
      const created = yield* request("POST", base, { token, body: { document: { name: "Superbill Jan.pdf", kind: "superbill", file: uri("application/pdf", pdf) } } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const document = (created.body as DocumentBody).document
      expect(Object.keys(document).sort()).toEqual(documentKeys)
      expect(document).toMatchObject({ claim_id: claimId, name: "Superbill Jan.pdf", kind: "superbill", content_type: "application/pdf", size: pdf.length })
      const key = /^memory:\/\/(.+)\?expires=(\d+)$/.exec(document.url)!
      expect(Number(key[2]) * 1000 - Date.now()).toBeGreaterThan(29 * 60_000)
      expect(Number(key[2]) * 1000 - Date.now()).toBeLessThanOrEqual(30 * 60_000 + 1000)
      const store = yield* MemoryObjectStore
      expect(Buffer.from((yield* store.objects).get(key[1]!)!.body)).toEqual(pdf)

      expect((yield* request("GET", base, { token })).body).toEqual({ documents: [document] })
      expect((yield* request("GET", `${base}/${document.id}`, { token })).body).toEqual({ document })
      const client = yield* clientAs(token)
      const documentId = ClaimDocumentId.make(document.id)
      expect((yield* client.claims.listDocuments({ path: { claim_id: claimId } })).documents.map((d) => d.id)).toEqual([documentId])
      expect((yield* client.claims.showDocument({ path: { claim_id: claimId, id: documentId } })).document).toMatchObject({ name: "Superbill Jan.pdf" })
      const renamed = yield* client.claims.updateDocument({
        path: { claim_id: claimId, id: documentId }, payload: { document: { name: "EOB.png", kind: "eob", file: uri("image/png", png) } }
      })
      expect(renamed.document).toMatchObject({ name: "EOB.png", kind: "eob", content_type: "image/png", size: png.length })
      // The replaced file is gone; the new one is stored.
      expect((yield* store.objects).has(key[1]!)).toBe(false)
      const newKey = /^memory:\/\/(.+)\?/.exec(renamed.document.url)![1]!
      expect((yield* store.objects).has(newKey)).toBe(true)

      // Another claim's path does not reach it.
      const otherClaim = yield* newClaim(token)
      const foreign = yield* request("GET", `${claimsPath}/${otherClaim}/documents/${document.id}`, { token })
      expect(foreign).toMatchObject({ status: 404, body: { errors: "Document not found" } })
      expect((yield* request("GET", `${claimsPath}/999999/documents`, { token })).body).toEqual({ errors: "Claim not found" })

      expect((yield* request("DELETE", `${base}/${document.id}`, { token })).status).toBe(204)
      expect((yield* store.objects).has(newKey)).toBe(false)
      expect((yield* request("GET", base, { token })).body).toEqual({ documents: [] })
      expect((yield* request("DELETE", `${base}/${document.id}`, { token })).status).toBe(404)
    }))

  it.effect("PDFs and images only, checked by content; bad base64 and empty files refused; nothing stored", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const claimId = yield* newClaim(token)
      const base = `${claimsPath}/${claimId}/documents`
      const store = yield* MemoryObjectStore
      const before = (yield* store.objects).size
      const refused = (file: string, message: string) =>
        Effect.gen(function*() {
          const response = yield* request("POST", base, { token, body: { document: { name: "x", file } } })
          expect(response.status, JSON.stringify(response.body)).toBe(422)
          expect(response.body).toEqual({ errors: { file: [message] } })
        })
      yield* refused(uri("application/pdf", Buffer.from("<html><script>alert(1)</script></html>")), "content does not match its declared type")
      yield* refused(uri("image/png", pdf), "content does not match its declared type")
      yield* refused(uri("text/html", Buffer.from("<html></html>")), "must be a PDF or an image (application/pdf, image/png, image/jpeg, image/gif, image/webp, image/tiff)")
      yield* refused("data:application/pdf;base64,%%%%", "is not valid base64")
      yield* refused("data:application/pdf;base64,", "can't be blank")
      yield* refused(uri("application/pdf", Buffer.concat([pdf, Buffer.alloc(1024)])), "is too large (maximum is 1 KB)")
      yield* refused("JVBERi0xLjQK", "must be a base64 data URI (data:<type>;base64,…)")
      const noKind = yield* request("POST", base, { token, body: { document: { name: "scan", kind: "photo", file: uri("image/png", png) } } })
      expect(noKind).toMatchObject({ status: 422, body: { errors: { kind: ["is not included in the list"] } } })
      expect((yield* store.objects).size).toBe(before)
      expect((yield* request("GET", base, { token })).body).toEqual({ documents: [] })
    }))

  it.effect("deleting a draft claim removes its documents and their files", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const claimId = yield* newClaim(token)
      const created = yield* request("POST", `${claimsPath}/${claimId}/documents`, { token, body: { document: { name: "note.pdf", file: uri("application/pdf", pdf) } } })
      const document = (created.body as DocumentBody).document
      expect(document.kind).toBe("other")
      const key = /^memory:\/\/(.+)\?/.exec(document.url)![1]!
      expect((yield* request("DELETE", `${claimsPath}/${claimId}`, { token })).status).toBe(204)
      const store = yield* MemoryObjectStore
      expect((yield* store.objects).has(key)).toBe(false)
    }))
})
