import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { Readable } from "node:stream"
import { X12parser } from "x12-parser"
import { checkInterchange, parseInterchange } from "../../../src/Domain/Billing/Edi/Check.js"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import type { ClaimId } from "../../../src/Domain/Ids.js"
import { ObjectStore } from "../../../src/Services/ObjectStore.js"
import { clientAs, request, TestApp, testConfig } from "../../support/app.js"
import { adminToken, claimsPath, newClaim, readyClaim, setup } from "./helpers.js"

type Batch = { batch_id: string; batch_name: string | null; file_url: string; claim_count: number; total_amount: number; generated_at: string }
const generate = (token: string, body: Record<string, unknown>) => request("POST", `${claimsPath}/generate_edi`, { token, body })

const fileOf = (batchId: string) =>
  Effect.gen(function*() {
    const store = yield* MemoryObjectStore
    const stored = (yield* store.objects).get(`edi/${batchId}.x12`)
    if (stored === undefined) return yield* Effect.dieMessage("no file stored")
    return { text: new TextDecoder().decode(stored.body), contentType: stored.contentType }
  })

const statuses = (ids: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number; status: string }>`SELECT id, status FROM claims WHERE id = ANY(${ids as Array<number>}::int[]) ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => r.status)),
    Effect.orDie
  )

const independentSegments = (text: string): Promise<Array<Record<string, string>>> =>
  new Promise((resolve, reject) => {
    const out: Array<Record<string, string>> = []
    Readable.from([text]).pipe(new X12parser()).on("data", (s: Record<string, string>) => out.push(s)).on("end", () => resolve(out)).on("error", reject)
  })

const twelveCodes = ["F90.0", "F41.1", "Z63.72", "F43.10", "F51.01", "F84.0", "F81.81", "F95.2", "F43.0", "F43.22", "F34.1", "R69"]

layer(TestApp())("generate_edi", (it) => {
  it.effect("an adult subscriber and a child under a guardian with 12 codes: a valid 837P, claims submitted with the batch", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const adult = yield* setup(token)
      const child = yield* setup(token, { guardian: true })
      const a = yield* readyClaim(token, adult, { amount: 150 })
      const c = yield* readyClaim(token, child, { amount: 200.5, cpt_code: "90847", diagnosis_codes: twelveCodes, modifiers: ["ho"] })
      const response = yield* generate(token, { claim_ids: [a, c, a], format: "837P", batch_name: "Week 1" })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      const batch = response.body as Batch
      expect(Object.keys(batch).sort()).toEqual(["batch_id", "batch_name", "claim_count", "file_url", "generated_at", "total_amount"])
      expect(batch).toMatchObject({ batch_name: "Week 1", claim_count: 2, total_amount: 350.5 })
      expect(batch.batch_id).toMatch(/^EDI\d{9}$/)
      expect(batch.file_url).toMatch(new RegExp(`^memory://edi/${batch.batch_id}\\.x12\\?expires=\\d+$`))
      const expires = Number(/expires=(\d+)/.exec(batch.file_url)![1]) * 1000
      expect(expires - Date.parse(batch.generated_at)).toBeGreaterThan(29 * 60_000)
      expect(expires - Date.parse(batch.generated_at)).toBeLessThanOrEqual(31 * 60_000)

      const file = yield* fileOf(batch.batch_id)
      expect(file.contentType).toBe("application/edi-x12")
      const check = checkInterchange(file.text)
      expect(check.problems).toEqual([])
      expect(check.counts).toMatchObject({ transactions: 1, billingProviders: 1, subscribers: 2, patients: 1, claims: 2, serviceLines: 2 })
      const segments = parseInterchange(file.text)!.segments
      expect(segments[0]![13]).toBe(batch.batch_id.slice(3))
      const hi = segments.filter((s) => s[0] === "HI")
      expect(hi.map((s) => s.length - 1)).toEqual([1, 12])
      // Claims keep the dot; the 837P never carries it.
      expect(hi.map((s) => s.slice(1, 4))).toEqual([["ABK:F329"], ["ABK:F900", "ABF:F411", "ABF:Z6372"]])
      expect(segments.filter((s) => s[0] === "SBR").map((s) => s[2])).toEqual(["18", ""])
      expect(segments.find((s) => s[0] === "NM1" && s[1] === "IL" && s[3] === "GUARDIAN")).toBeDefined()
      expect(segments.filter((s) => s[0] === "SV1").map((s) => s[1])).toEqual(["HC:90837", "HC:90847:HO"])
      // Read by code we did not write: the same segment and loop counts.
      const independent = yield* Effect.promise(() => independentSegments(file.text))
      expect(independent).toHaveLength(check.counts.segments)
      expect(independent.filter((s) => s.name === "CLM")).toHaveLength(check.counts.claims)
      expect(independent.filter((s) => s.name === "HL" && s["3"] === "23")).toHaveLength(check.counts.patients)

      for (const id of [a, c]) {
        const { claim } = yield* (yield* clientAs(token)).claims.show({ path: { id } })
        expect(claim).toMatchObject({ status: "submitted", edi_batch_id: batch.batch_id })
        expect(claim.submission_date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      }
    }))

  it.effect("claims that are not ready, unknown or lack coverage: 422 listing each, nothing submitted, no file stored", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const ok = yield* readyClaim(token, yield* setup(token))
      const draftSetup = yield* setup(token)
      const draft = (yield* newClaim(token, draftSetup, { cpt_code: "90834", diagnosis_codes: ["F41.1"], amount: 90 })).id
      const uncovered = yield* setup(token)
      const sql = yield* SqlClient.SqlClient
      const noCoverage = yield* readyClaim(token, uncovered)
      yield* sql`DELETE FROM patient_coverages WHERE patient_id = ${uncovered.patientId}`.pipe(Effect.orDie)
      const store = yield* MemoryObjectStore
      const filesBefore = (yield* store.objects).size
      const response = yield* generate(token, { claim_ids: [ok, draft, 999999, noCoverage] })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({
        errors: {
          claim_ids: [
            "claim 999999 not found",
            `claim ${draft} is draft, not ready`,
            `claim ${noCoverage}: the patient has no insurance coverage`
          ]
        }
      })
      expect(yield* statuses([ok, draft, noCoverage])).toEqual(["ready", "draft", "ready"])
      expect((yield* store.objects).size).toBe(filesBefore)
      const empty = yield* generate(token, { claim_ids: [] })
      expect(empty).toMatchObject({ status: 422, body: { errors: { claim_ids: ["can't be blank"] } } })
      const format = yield* generate(token, { claim_ids: [ok], format: "837I" })
      expect(format).toMatchObject({ status: 422, body: { errors: { format: ["is not included in the list"] } } })
    }))

  it.effect("batch_name comes back trimmed; none or a blank one is null", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const ids = yield* Effect.forEach([1, 2, 3], () => Effect.flatMap(setup(token), (s) => readyClaim(token, s)))
      const named = yield* generate(token, { claim_ids: [ids[0]], batch_name: "  January week 1 " })
      expect(named).toMatchObject({ status: 201, body: { batch_name: "January week 1" } })
      expect(yield* generate(token, { claim_ids: [ids[1]] })).toMatchObject({ status: 201, body: { batch_name: null } })
      expect(yield* generate(token, { claim_ids: [ids[2]], batch_name: "   " })).toMatchObject({ status: 201, body: { batch_name: null } })
    }))

  it.effect("a claim the 837P cannot carry (a name with no Latin letters): 422 naming it, nothing submitted", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const id = yield* readyClaim(token, s)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE patients SET first_name = '美', last_name = '王' WHERE id = ${s.patientId}`.pipe(Effect.orDie)
      const response = yield* generate(token, { claim_ids: [id] })
      expect(response.status).toBe(422)
      const claimNumber = (yield* (yield* clientAs(token)).claims.show({ path: { id } })).claim.claim_number
      expect(response.body).toEqual({ errors: { claim_ids: [`claim ${claimNumber}: the patient's name has no Latin letters an 837P can carry`] } })
      expect(yield* statuses([id])).toEqual(["ready"])
    }))

  it.effect("concurrent batches: control numbers never repeat; a claim goes into one batch only", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const ids = yield* Effect.forEach([1, 2, 3, 4], () => Effect.flatMap(setup(token), (s) => readyClaim(token, s)))
      const client = yield* clientAs(token)
      const batchOf = (id: ClaimId) => client.claims.generateEdi({ payload: { claim_ids: [id] }, withResponse: true })
      const [[b1, first], [b2, second]] = yield* Effect.all([batchOf(ids[0]!), batchOf(ids[1]!)], { concurrency: 2 })
      expect([first.status, second.status]).toEqual([201, 201])
      expect(b1.batch_id).not.toBe(b2.batch_id)
      const isa13 = (text: string) => parseInterchange(text)!.segments[0]![13]
      const [f1, f2] = [yield* fileOf(b1.batch_id), yield* fileOf(b2.batch_id)]
      expect(isa13(f1.text)).not.toBe(isa13(f2.text))
      expect([isa13(f1.text), isa13(f2.text)].every((n) => /^\d{9}$/.test(n!))).toBe(true)
      // The same claims in several requests at once: one batch takes them, the others are refused.
      const racing = yield* Effect.all(Array.from({ length: 5 }, () => generate(token, { claim_ids: [ids[2], ids[3]] })), { concurrency: "unbounded" })
      expect(racing.filter((r) => r.status === 201)).toHaveLength(1)
      expect(racing.filter((r) => r.status === 422)).toHaveLength(4)
      const sql = yield* SqlClient.SqlClient
      const batches = yield* sql<{ n: number }>`SELECT count(DISTINCT edi_batch_id)::int AS n FROM claims WHERE id IN (${ids[2]!}, ${ids[3]!})`.pipe(Effect.orDie)
      expect(batches[0]!.n).toBe(1)
    }))
})

/** A store whose writes fail: the batch must roll back. */
const FailingStore = Layer.effect(ObjectStore, Effect.map(MemoryObjectStore, () => ({
  put: () => Effect.dieMessage("storage unavailable"),
  get: () => Effect.dieMessage("storage unavailable"),
  signedUrl: () => Effect.dieMessage("storage unavailable"),
  delete: () => Effect.void,
  putFile: () => Effect.dieMessage("storage unavailable"),
  getToFile: () => Effect.dieMessage("storage unavailable"),
  multipart: {
    create: () => Effect.dieMessage("storage unavailable"),
    presignPart: () => Effect.dieMessage("storage unavailable"),
    listParts: () => Effect.dieMessage("storage unavailable"),
    complete: () => Effect.dieMessage("storage unavailable"),
    abort: () => Effect.dieMessage("storage unavailable")
  }
}))).pipe(Layer.provideMerge(MemoryObjectStore.layer))

const FailingStoreApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(MemoryTelephony.layer, FailingStore, MemoryMailer.layer, MemoryPush.layer)),
  Layer.provideMerge(testConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

layer(FailingStoreApp)("generate_edi when the file cannot be stored", (it) => {
  it.effect("a failed batch leaves no claim submitted and no batch", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const ids = yield* Effect.forEach([1, 2], () => Effect.flatMap(setup(token), (s) => readyClaim(token, s)))
      const response = yield* generate(token, { claim_ids: ids })
      expect(response.status).toBe(500)
      expect(yield* statuses(ids)).toEqual(["ready", "ready"])
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM edi_batches`.pipe(Effect.orDie))[0]!.n).toBe(0)
    }))
})
