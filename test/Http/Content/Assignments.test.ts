import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { canMove, type UserPieceStatus } from "../../../src/Domain/Content/Content.js"
import { PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { newPatient } from "../Patients/helpers.js"
import { adminToken, assign, family, idOf, importBundle, piece, pieceIds, signedIn, tag, updatePiece } from "./helpers.js"

const statuses: ReadonlyArray<UserPieceStatus> = ["assigned", "started", "in_progress", "completed", "skipped"]
const pairSlugs = statuses.flatMap((from) => statuses.map((to) => `pair-${from}-${to}`.replace(/_/g, "-")))

const library = importBundle({
  tags: [tag("anxiety")],
  collections: [
    { slug: "set", title: "A set", age_group: "all" },
    { slug: "empty", title: "Nothing published", age_group: "all" }
  ],
  pieces: [
    piece("one", { tags: ["anxiety"], collections: ["set"] }),
    piece("two", { content_type: "quiz", collections: ["set"] }),
    piece("three", { collections: ["set"] }),
    piece("draft", { published: false, collections: ["set", "empty"] }),
    ...pairSlugs.map((slug) => piece(slug))
  ]
})

const userPieceOf = (body: unknown) => (body as { user_piece: Record<string, unknown> }).user_piece

layer(TestApp({ contentDemo: false }))("user pieces and user collections", (it) => {
  it.effect("who may assign to whom: the parent rule, staff to a patient's account, validation with nothing saved", () =>
    Effect.gen(function*() {
      yield* library
      const ids = yield* pieceIds
      const { staff, parent, patient } = yield* family()
      const other = yield* family()
      const one = ids.get("one")!

      const own = yield* assign(parent.token, { content_piece_id: one, due_date: "2999-01-01", notes: " Watch together " })
      expect(own.status).toBe(201)
      expect(userPieceOf(own.body)).toEqual({
        id: expect.any(Number), content_piece_id: one, user_id: parent.id, patient_id: null, status: "assigned",
        assigned_by: parent.id, assigned_at: expect.any(String), due_date: "2999-01-01", completed_at: null, rating: null,
        feedback: null, notes: "Watch together", content_piece: { id: one, title: "Title of one", content_type: "video" }
      })
      const forPatient = yield* assign(parent.token, { content_piece_id: one, patient_id: patient })
      expect(forPatient.status).toBe(201)
      expect(userPieceOf(forPatient.body)).toMatchObject({ user_id: parent.id, patient_id: patient })
      const taken = yield* assign(parent.token, { content_piece_id: one, patient_id: patient })
      expect(taken.body).toEqual({ errors: { content_piece_id: ["has already been taken"] } })

      const byStaff = yield* assign(staff.token, { content_piece_id: ids.get("two"), patient_id: patient })
      expect(byStaff.status).toBe(201)
      expect(userPieceOf(byStaff.body)).toMatchObject({ user_id: parent.id, patient_id: patient, assigned_by: staff.id })
      const colleague = yield* signedIn("supervisor")
      const namedBy = yield* assign(staff.token, { content_piece_id: ids.get("three"), patient_id: patient, assigned_by: colleague.id })
      expect(userPieceOf(namedBy.body)).toMatchObject({ assigned_by: colleague.id })
      const parentNaming = yield* assign(parent.token, { content_piece_id: ids.get("three"), assigned_by: staff.id })
      expect(parentNaming.body).toEqual({ errors: { assigned_by: ["is invalid"] } })
      const namingParent = yield* assign(staff.token, { content_piece_id: ids.get("three"), user_id: parent.id, assigned_by: other.parent.id })
      expect(namingParent.body).toEqual({ errors: { assigned_by: ["is invalid"] } })

      const noAccount = yield* newPatient(staff.token)
      const orphan = yield* assign(staff.token, { content_piece_id: one, patient_id: noAccount })
      expect(orphan.status).toBe(422)
      expect(orphan.body).toEqual({ errors: { patient_id: ["has no account"] } })
      const foreign = yield* assign(parent.token, { content_piece_id: one, patient_id: other.patient })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ errors: "Patient not found" })
      const foreignUser = yield* assign(parent.token, { content_piece_id: one, user_id: other.parent.id })
      expect(foreignUser.status).toBe(422)

      const invalid = yield* assign(parent.token, { content_piece_id: ids.get("draft") ?? 999_999, due_date: "2000-01-01" })
      expect(invalid.body).toEqual({ errors: { content_piece_id: ["must exist"], due_date: ["must be in the future"] } })
      const long = yield* assign(parent.token, { content_piece_id: ids.get("three"), notes: "x".repeat(2001) })
      expect(long.body).toEqual({ errors: { notes: ["is too long (maximum is 2000 characters)"] } })

      // Lists: a parent sees their own account's; staff filter by account and patient.
      const mine = yield* request("GET", "/v1/content/user_pieces", { token: parent.token })
      expect(mine.body).toMatchObject({ pagination: { total_count: 4, per_page: 25 } })
      const othersList = yield* request("GET", "/v1/content/user_pieces", { token: other.parent.token })
      expect(othersList.body).toMatchObject({ user_pieces: [], pagination: { total_count: 0 } })
      const foreignFilter = yield* request("GET", `/v1/content/user_pieces?patient_id=${patient}`, { token: other.parent.token })
      expect(foreignFilter.status).toBe(404)
      const patientOnly = yield* request("GET", `/v1/content/user_pieces?patient_id=${patient}`, { token: staff.token })
      expect(patientOnly.body).toMatchObject({ pagination: { total_count: 3 } })
      const quizzes = yield* request("GET", `/v1/content/user_pieces?user_id=${parent.id}&content_type=quiz`, { token: staff.token })
      expect(quizzes.body).toMatchObject({ user_pieces: [{ content_piece: { content_type: "quiz" } }], pagination: { total_count: 1 } })
      const paged = yield* request("GET", `/v1/content/user_pieces?user_id=${parent.id}&page_size=3&page=2`, { token: staff.token })
      expect(paged.body).toMatchObject({ user_pieces: [{ notes: "Watch together" }], pagination: { total_pages: 2, current_page: 2 } })
      const badStatus = yield* request("GET", "/v1/content/user_pieces?status=done", { token: staff.token })
      expect(badStatus.body).toEqual({ errors: { status: ["is not included in the list"] } })

      const ownId = idOf(own.body)
      const notYours = yield* updatePiece(other.parent.token, ownId, { status: "started" })
      expect(notYours.status).toBe(404)
      expect(notYours.body).toEqual({ errors: "User piece not found" })
      expect((yield* updatePiece(parent.token, 999_999, { status: "started" })).body).toEqual({ errors: "User piece not found" })
      const started = yield* updatePiece(staff.token, ownId, { status: "started" })
      expect(userPieceOf(started.body)).toMatchObject({ status: "started" })
      const filtered = yield* request("GET", "/v1/content/user_pieces?status=started", { token: parent.token })
      expect(filtered.body).toMatchObject({ user_pieces: [{ id: ownId }], pagination: { total_count: 1 } })
    }))

  it.effect("every status pair; completion time, rating and feedback rules", () =>
    Effect.gen(function*() {
      const ids = yield* pieceIds
      const parent = yield* signedIn("parent")
      for (const from of statuses) {
        for (const to of statuses) {
          const created = yield* assign(parent.token, { content_piece_id: ids.get(`pair-${from}-${to}`.replace(/_/g, "-")) })
          const id = idOf(created.body)
          if (from !== "assigned") expect((yield* updatePiece(parent.token, id, { status: from })).status).toBe(200)
          const moved = yield* updatePiece(parent.token, id, { status: to })
          if (canMove(from, to)) {
            expect(moved.status, `${from} → ${to}`).toBe(200)
            expect(userPieceOf(moved.body).status).toBe(to)
            expect(userPieceOf(moved.body).completed_at === null, `${from} → ${to}`).toBe(to !== "completed")
          } else {
            expect(moved.status, `${from} → ${to}`).toBe(422)
            expect(moved.body).toEqual({ errors: { status: [`cannot change from ${from} to ${to}`] } })
          }
        }
      }
      expect(canMove("completed", "in_progress")).toBe(false)
      expect(canMove("skipped", "assigned")).toBe(true)
      expect(canMove("assigned", "completed")).toBe(true)
      expect(canMove("in_progress", "started")).toBe(false)

      const three = ids.get("three")!
      const created = yield* assign(parent.token, { content_piece_id: three })
      const id = idOf(created.body)
      const assignedAt = new Date(userPieceOf(created.body).assigned_at as string)
      const early = yield* updatePiece(parent.token, id, { rating: 5 })
      expect(early.body).toEqual({ errors: { rating: ["can only be given once completed"] } })
      for (const rating of [0, 6, 2.5, "5"]) {
        const bad = yield* updatePiece(parent.token, id, { status: "completed", rating })
        expect(bad.status).toBe(422)
        expect(bad.body).toEqual({ errors: { rating: ["must be between 1 and 5"] } })
      }
      const future = new Date(assignedAt.getTime() + 3_600_000).toISOString()
      const past = new Date(assignedAt.getTime() - 3_600_000).toISOString()
      expect((yield* updatePiece(parent.token, id, { status: "completed", completed_at: future })).body)
        .toEqual({ errors: { completed_at: ["is invalid"] } })
      expect((yield* updatePiece(parent.token, id, { status: "completed", completed_at: past })).body)
        .toEqual({ errors: { completed_at: ["is invalid"] } })
      const long = yield* updatePiece(parent.token, id, { feedback: "y".repeat(2001) })
      expect(long.body).toEqual({ errors: { feedback: ["is too long (maximum is 2000 characters)"] } })

      yield* TestClock.adjust("10 minutes")
      const done = yield* updatePiece(parent.token, id, { status: "completed", rating: 4, feedback: "Helpful" })
      expect(done.status).toBe(200)
      expect(userPieceOf(done.body)).toMatchObject({
        status: "completed", rating: 4, feedback: "Helpful", completed_at: new Date(assignedAt.getTime() + 600_000).toISOString()
      })
      // Completed is final, but the rating and feedback may change; the time may be corrected.
      const rerated = yield* updatePiece(parent.token, id, { rating: 2, feedback: null, completed_at: new Date(assignedAt.getTime() + 60_000).toISOString() })
      expect(userPieceOf(rerated.body)).toMatchObject({
        status: "completed", rating: 2, feedback: null, completed_at: new Date(assignedAt.getTime() + 60_000).toISOString()
      })
      // A completed piece frees the piece for a new assignment; a reopened skip may collide with it.
      const second = yield* assign(parent.token, { content_piece_id: three })
      expect(second.status).toBe(201)
      expect((yield* updatePiece(parent.token, idOf(second.body), { status: "skipped" })).status).toBe(200)
      const third = yield* assign(parent.token, { content_piece_id: three })
      expect(third.status).toBe(201)
      const reopen = yield* updatePiece(parent.token, idOf(second.body), { status: "assigned" })
      expect(reopen.body).toEqual({ errors: { status: ["has already been taken"] } })
    }))

  it.effect("user collections: one transaction, open assignments reused, derived status and progress, skip and due dates", () =>
    Effect.gen(function*() {
      const ids = yield* pieceIds
      const { staff, parent, patient } = yield* family()
      const other = yield* family()
      const token = yield* adminToken
      const collections = yield* (yield* clientAs(token)).contentLibrary.collections({ urlParams: {} })
      const set = collections.collections.find((c) => c.title === "A set")!.id
      const empty = collections.collections.find((c) => c.title === "Nothing published")!.id

      const existing = yield* assign(parent.token, { content_piece_id: ids.get("two"), patient_id: patient })
      const created = yield* request("POST", "/v1/content/user_collections", {
        token: staff.token, body: { user_collection: { content_collection_id: set, patient_id: patient, due_date: "2999-02-01", notes: "Before May" } }
      })
      expect(created.status).toBe(201)
      const collection = (created.body as { user_collection: Record<string, any> }).user_collection
      expect(collection).toEqual({
        id: expect.any(Number), content_collection_id: set, user_id: parent.id, patient_id: patient, status: "assigned",
        assigned_by: staff.id, assigned_at: expect.any(String), due_date: "2999-02-01", completed_at: null, notes: "Before May",
        progress: { completed: 0, skipped: 0, total: 3 },
        content_collection: { id: set, title: "A set", piece_count: 3 },
        user_pieces: [
          { id: expect.any(Number), content_piece_id: ids.get("one"), status: "assigned" },
          { id: idOf(existing.body), content_piece_id: ids.get("two"), status: "assigned" },
          { id: expect.any(Number), content_piece_id: ids.get("three"), status: "assigned" }
        ]
      })
      const pieceIdsOf = collection.user_pieces.map((p: { id: number }) => p.id) as Array<number>
      expect((yield* updatePiece(parent.token, pieceIdsOf[0]!, { status: "completed" })).status).toBe(200)
      const list = (query: string, t = parent.token) => request("GET", `/v1/content/user_collections${query}`, { token: t })
      expect((yield* list("")).body).toMatchObject({
        user_collections: [{ status: "in_progress", progress: { completed: 1, skipped: 0, total: 3 } }], pagination: { total_count: 1 }
      })
      expect((yield* list("?status=assigned")).body).toMatchObject({ user_collections: [] })
      expect((yield* list("?status=in_progress")).body).toMatchObject({ pagination: { total_count: 1 } })
      expect((yield* list("", other.parent.token)).body).toMatchObject({ user_collections: [] })
      expect((yield* list(`?patient_id=${patient}`, other.parent.token)).status).toBe(404)

      const id = collection.id as number
      const moved = yield* request("PUT", `/v1/content/user_collections/${id}`, {
        token: parent.token, body: { user_collection: { due_date: "2999-03-01", notes: "Moved" } }
      })
      expect(moved.body).toMatchObject({ user_collection: { due_date: "2999-03-01", notes: "Moved" } })
      const parentClient = yield* clientAs(parent.token)
      const pieces = yield* parentClient.userPieces.list({ urlParams: { patient_id: PatientId.make(patient) } })
      expect(pieces.user_pieces.filter((p) => p.status !== "completed").map((p) => p.due_date)).toEqual(["2999-03-01", "2999-03-01"])
      expect(pieces.user_pieces.find((p) => p.status === "completed")?.due_date).toBe("2999-02-01")
      const pastDue = yield* request("PUT", `/v1/content/user_collections/${id}`, { token: parent.token, body: { user_collection: { due_date: "2001-01-01" } } })
      expect(pastDue.body).toEqual({ errors: { due_date: ["must be in the future"] } })
      const notYours = yield* request("PUT", `/v1/content/user_collections/${id}`, { token: other.parent.token, body: { user_collection: { status: "skipped" } } })
      expect(notYours.status).toBe(404)
      expect(notYours.body).toEqual({ errors: "User collection not found" })
      const skipped = yield* request("PUT", `/v1/content/user_collections/${id}`, { token: parent.token, body: { user_collection: { status: "skipped" } } })
      expect(skipped.body).toMatchObject({
        user_collection: { status: "completed", completed_at: expect.any(String), progress: { completed: 1, skipped: 2, total: 3 } }
      })
      const badStatus = yield* request("PUT", `/v1/content/user_collections/${id}`, { token: parent.token, body: { user_collection: { status: "completed" } } })
      expect(badStatus.body).toEqual({ errors: { status: ["is not included in the list"] } })

      // All skipped: skipped. A collection with nothing published, or unknown, cannot be assigned.
      const again = yield* parentClient.userCollections.create({ payload: { user_collection: { content_collection_id: set } } })
      const againId = again.user_collection.id
      const allSkipped = yield* request("PUT", `/v1/content/user_collections/${againId}`, { token: parent.token, body: { user_collection: { status: "skipped" } } })
      expect(allSkipped.body).toMatchObject({ user_collection: { status: "skipped", completed_at: null, progress: { completed: 0, skipped: 3, total: 3 } } })
      expect((yield* list("?status=skipped")).body).toMatchObject({ user_collections: [{ id: againId }] })
      const none = yield* request("POST", "/v1/content/user_collections", { token: parent.token, body: { user_collection: { content_collection_id: empty } } })
      expect(none.body).toEqual({ errors: { content_collection_id: ["has no published pieces"] } })
      const unknown = yield* request("POST", "/v1/content/user_collections", {
        token: parent.token, body: { user_collection: { content_collection_id: 999_999, due_date: "2000-01-01" } }
      })
      expect(unknown.body).toEqual({ errors: { content_collection_id: ["must exist"], due_date: ["must be in the future"] } })
      const foreign = yield* request("POST", "/v1/content/user_collections", {
        token: parent.token, body: { user_collection: { content_collection_id: set, patient_id: other.patient } }
      })
      expect(foreign.status).toBe(404)
    }))
})
