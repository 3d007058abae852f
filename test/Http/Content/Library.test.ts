import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { ContentPieceId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { adminToken, assign, family, importBundle, piece, signedIn, tag } from "./helpers.js"

const pdf = Buffer.from("%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\ntrailer\n<</Root 1 0 R>>\n%%EOF\n")
const dataUri = (type: string, bytes: Uint8Array) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`

layer(TestApp())("content library (demo loaded at start-up)", (it) => {
  it.effect("a fresh install shows the demo library; lists filter and paginate; enums are checked", () =>
    Effect.gen(function*() {
      const { parent } = yield* family()
      const tags = yield* request("GET", "/v1/content/tags?page_size=100", { token: parent.token })
      expect(tags.status).toBe(200)
      const library = (yield* clientAs(parent.token)).contentLibrary
      const tagBody = yield* library.tags({ urlParams: { page_size: 100 } })
      expect(tagBody.tags.length).toBeGreaterThanOrEqual(12)
      expect(tagBody.tags.map((t) => t.name)).toEqual(expect.arrayContaining(["anxiety", "depression", "adhd", "behavior", "sleep"]))
      const conditions = yield* library.tags({ urlParams: { category: "condition" } })
      expect(conditions.tags.length).toBeGreaterThan(0)
      expect(conditions.tags.every((t) => t.category === "condition")).toBe(true)

      const collections = yield* request("GET", "/v1/content/collections", { token: parent.token })
      expect(collections.body).toMatchObject({ pagination: { total_count: 4, per_page: 25, current_page: 1, total_pages: 1 } })
      const teenTitles = (yield* library.collections({ urlParams: { age_group: "teen" } })).collections
      expect(teenTitles.map((c) => c.age_group).sort()).toEqual(["all", "all", "teen"])
      const sleep = tagBody.tags.find((t) => t.name === "sleep")!
      const bySleep = yield* request("GET", `/v1/content/collections?tag_id=${sleep.id}`, { token: parent.token })
      expect(bySleep.body).toMatchObject({ collections: [{ title: "Restful nights", piece_count: 5, tags: [{ id: sleep.id, name: "sleep" }] }] })

      const pieces = yield* request("GET", "/v1/content/pieces", { token: parent.token })
      expect(pieces.body).toMatchObject({ pagination: { total_count: 32, per_page: 25, total_pages: 2 } })
      const page2 = yield* library.pieces({ urlParams: { page: 2 } })
      expect(page2.pieces).toHaveLength(7)
      const quizList = (yield* library.pieces({ urlParams: { content_type: "quiz", page_size: 50 } })).pieces
      expect(quizList.length).toBeGreaterThan(0)
      expect(quizList.every((p) => p.content_type === "quiz")).toBe(true)
      const sleepPieces = yield* library.pieces({ urlParams: { tag_id: sleep.id, page_size: 50 } })
      expect(sleepPieces.pieces.length).toBeGreaterThan(0)
      expect(sleepPieces.pieces.every((p) => p.tags.some((t) => t.name === "sleep"))).toBe(true)

      for (const url of ["/v1/content/pieces?content_type=podcast", "/v1/content/collections?age_group=baby"]) {
        const bad = yield* request("GET", url, { token: parent.token })
        expect(bad.status).toBe(422)
        expect(JSON.stringify(bad.body)).toContain("is not included in the list")
      }
      const anonymous = yield* request("GET", "/v1/content/tags")
      expect(anonymous.status).toBe(401)
    }))
})

layer(TestApp({ contentDemo: false }))("content import, export and files", (it) => {
  it.effect("an empty library without the demo; import is idempotent, collection order is the bundle's, export round-trips", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const empty = yield* request("GET", "/v1/content/pieces", { token })
      expect(empty.body).toEqual({ pieces: [], pagination: { current_page: 1, total_pages: 0, total_count: 0, per_page: 25 } })
      const bundle = {
        tags: [tag("anxiety", { display_name: "Anxiety", category: "condition", color: "#4a90d9" }), tag("sleep")],
        collections: [{ slug: "calm", title: "Calm", age_group: "child", estimated_duration: 30, tags: ["anxiety"] }],
        pieces: [
          piece("b-second", { tags: ["anxiety"], collections: ["calm"] }),
          piece("a-first", { tags: ["sleep", "anxiety"], collections: ["calm"], content_type: "article", difficulty_level: "advanced" }),
          piece("hidden", { published: false })
        ]
      }
      const dry = yield* importBundle(bundle, "?dry_run=true")
      expect(dry).toEqual({
        created: { tags: 2, collections: 1, pieces: 3 }, updated: { tags: 0, collections: 0, pieces: 0 },
        unchanged: { tags: 0, collections: 0, pieces: 0 }, deleted: { tags: 0, collections: 0, pieces: 0 }, dry_run: true
      })
      expect((yield* request("GET", "/v1/content/tags", { token })).body).toMatchObject({ tags: [] })
      const first = yield* importBundle(bundle)
      expect(first).toMatchObject({ created: { tags: 2, collections: 1, pieces: 3 }, dry_run: false })
      const again = yield* importBundle(bundle)
      expect(again).toMatchObject({
        created: { tags: 0, collections: 0, pieces: 0 }, updated: { tags: 0, collections: 0, pieces: 0 },
        unchanged: { tags: 2, collections: 1, pieces: 3 }
      })
      const tags = (yield* request("GET", "/v1/content/tags", { token })).body as { tags: Array<Record<string, unknown>> }
      expect(tags.tags[0]).toEqual({
        id: expect.any(Number), name: "anxiety", display_name: "Anxiety", category: "condition", description: null,
        color: "#4A90D9", created_at: expect.any(String)
      })
      const library = (yield* clientAs(token)).contentLibrary
      const collection = yield* library.collections({ urlParams: {} })
      expect(collection.collections[0]).toMatchObject({ title: "Calm", piece_count: 2, estimated_duration: 30, age_group: "child" })
      const calm = collection.collections[0]!.id
      const ordered = yield* library.pieces({ urlParams: { collection_id: calm } })
      expect(ordered.pieces.map((p) => p.title)).toEqual(["Title of b-second", "Title of a-first"])
      const newest = yield* request("GET", "/v1/content/pieces", { token })
      const listed = (newest.body as { pieces: Array<Record<string, unknown>> }).pieces
      expect(listed.map((p) => p.title)).toEqual(["Title of a-first", "Title of b-second"])
      expect(listed[0]).toEqual({
        id: expect.any(Number), title: "Title of a-first", description: null, content_type: "article", duration_minutes: null,
        url: "https://content.test/a-first", thumbnail_url: null, age_group: "all", difficulty_level: "advanced",
        tags: [{ id: expect.any(Number), name: "anxiety" }, { id: expect.any(Number), name: "sleep" }], created_at: expect.any(String)
      })
      const shown = yield* request("GET", `/v1/content/pieces/${listed[0]!.id}`, { token })
      expect(shown.body).toEqual({ piece: listed[0] })
      const typedPiece = yield* library.piece({ path: { id: ContentPieceId.make(listed[0]!.id as number) } })
      expect(typedPiece.piece).toMatchObject({ title: "Title of a-first", content_type: "article", difficulty_level: "advanced" })

      const exported = yield* request("GET", "/v1/admin/content/export", { token })
      expect(exported.status).toBe(200)
      const typedExport = yield* (yield* clientAs(token)).adminContent.export()
      expect(typedExport.pieces.map((p) => [p.slug, p.published])).toEqual([["b-second", true], ["a-first", true], ["hidden", false]])
      const roundTrip = yield* importBundle(exported.body as Record<string, unknown>)
      expect(roundTrip).toMatchObject({ unchanged: { tags: 2, collections: 1, pieces: 3 }, updated: { tags: 0, collections: 0, pieces: 0 } })

      // Reordering is an update.
      const reordered = yield* importBundle({ ...bundle, pieces: [bundle.pieces[1], bundle.pieces[0], bundle.pieces[2]] })
      expect(reordered).toMatchObject({ updated: { pieces: 2 }, unchanged: { pieces: 1 } })
      const reorderedList = yield* library.pieces({ urlParams: { collection_id: calm } })
      expect(reorderedList.pieces.map((p) => p.title)).toEqual(["Title of a-first", "Title of b-second"])
    }))

  it.effect("errors by path, all or nothing; missing pieces are deleted, assigned ones unpublished", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      yield* importBundle({ tags: [tag("anxiety")], pieces: [piece("keep"), piece("assigned"), piece("gone")] })
      const bad = yield* request("POST", "/v1/admin/content/import", {
        token,
        body: {
          tags: [tag("anxiety"), tag("anxiety"), tag("Bad Slug"), tag("colour", { color: "red" })],
          collections: [],
          pieces: [
            piece("new-one", { url: "http://insecure.test/x" }),
            piece("p1", { tags: ["anxiety", "nope"] }),
            piece("p2", { url: undefined }),
            piece("p3", { file_key: "content/files/unknown.pdf" }),
            piece("p4", { collections: ["missing"] })
          ]
        }
      })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({
        errors: {
          "tags[2].slug": ["invalid format"],
          "tags[3].color": ["invalid format"],
          "pieces[0].url": ["invalid format"]
        }
      })
      const semantic = yield* request("POST", "/v1/admin/content/import", {
        token,
        body: {
          tags: [tag("anxiety"), tag("anxiety")],
          collections: [],
          pieces: [
            piece("p1", { tags: ["anxiety", "nope"] }),
            piece("p2", { url: undefined }),
            piece("p3", { file_key: "content/files/unknown.pdf" }),
            piece("p4", { collections: ["missing"] })
          ]
        }
      })
      expect(semantic.status).toBe(422)
      expect(semantic.body).toEqual({
        errors: {
          "tags[1].slug": ["has already been taken"],
          "pieces[0].tags[1]": ["must exist"],
          "pieces[1].url": ["can't be blank"],
          "pieces[2].file_key": ["can't be given with url", "must exist"],
          "pieces[3].collections[0]": ["must exist"]
        }
      })
      // Nothing changed.
      const library = (yield* clientAs(token)).contentLibrary
      const before = yield* library.pieces({ urlParams: {} })
      expect(before.pieces).toHaveLength(3)

      const { parent } = yield* family()
      const assignedId = before.pieces.find((p) => p.url?.endsWith("/assigned"))!.id
      expect((yield* assign(parent.token, { content_piece_id: assignedId })).status).toBe(201)
      const result = yield* importBundle({ tags: [], pieces: [piece("keep")] })
      expect(result).toMatchObject({
        unchanged: { pieces: 1 }, updated: { pieces: 1 }, deleted: { tags: 1, pieces: 1 }
      })
      const after = yield* library.pieces({ urlParams: {} })
      expect(after.pieces.map((p) => p.url)).toEqual(["https://content.test/keep"])
      const hidden = yield* request("GET", `/v1/content/pieces/${assignedId}`, { token: parent.token })
      expect(hidden.status).toBe(404)
      expect(hidden.body).toEqual({ errors: "Content piece not found" })
      // The assignment survives the unpublishing.
      const mine = yield* request("GET", "/v1/content/user_pieces", { token: parent.token })
      expect(mine.body).toMatchObject({ user_pieces: [{ content_piece_id: assignedId }] })
      const exported = yield* (yield* clientAs(token)).adminContent.export()
      expect(exported.pieces.map((p) => [p.slug, p.published])).toEqual([["keep", true], ["assigned", false]])
      expect((yield* request("GET", "/v1/content/pieces/999999", { token })).body).toEqual({ errors: "Content piece not found" })
    }))

  it.effect("files: type sniffed from the bytes, stored, named by file_key, served through a signed link", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const [uploaded, uploadResponse] = yield* (yield* clientAs(token)).adminContent.uploadFile({
        payload: { file: dataUri("application/octet-stream", pdf), filename: "worksheet.pdf" }, withResponse: true
      })
      expect(uploadResponse.status).toBe(201)
      const key = uploaded.object_key
      expect(key).toMatch(/^content\/files\/[0-9a-f-]+\.pdf$/)
      const objects = yield* (yield* MemoryObjectStore).objects
      expect(objects.get(key)?.contentType).toBe("application/pdf")
      const text = yield* request("POST", "/v1/admin/content/files", {
        token, body: { file: dataUri("application/pdf", Buffer.from("<html>not a pdf</html>")), filename: "x.pdf" }
      })
      expect(text.status).toBe(422)
      expect(text.body).toEqual({ errors: { file: ["must be a PDF, MP3, MP4, PNG or JPEG"] } })
      const notUri = yield* request("POST", "/v1/admin/content/files", { token, body: { file: "hello", filename: "x.pdf" } })
      expect(notUri.body).toEqual({ errors: { file: ["must be a base64 data URI (data:<type>;base64,…)"] } })
      const parent = yield* signedIn("parent")
      const refused = yield* request("POST", "/v1/admin/content/files", { token: parent.token, body: { file: dataUri("application/pdf", pdf), filename: "x.pdf" } })
      expect(refused.status).toBe(403)

      yield* importBundle({ pieces: [piece("stored", { url: null, file_key: key, thumbnail_file_key: key, content_type: "worksheet" })] })
      const listed = yield* (yield* clientAs(parent.token)).contentLibrary.pieces({ urlParams: {} })
      const stored1 = listed.pieces[0]!
      expect(stored1.url).not.toContain("content.test")
      expect(stored1.url).toMatch(new RegExp(`^memory://${key}\\?expires=\\d+$`))
      expect(stored1.thumbnail_url).toBe(stored1.url)
      const exported = yield* (yield* clientAs(token)).adminContent.export()
      expect(exported.pieces[0]).toMatchObject({ slug: "stored", url: null, file_key: key })
    }))
})
