import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import type { UpdateClaimRequest } from "../../../src/Api/Billing/Claims.js"
import { ClaimId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { auditActions } from "../Providers/helpers.js"
import {
  adminToken, billingSettings, claimBody, claimOf, claimsPath, createClaim, createPlan, insertAppointment, insertPatient, newClaim, providerWithNpi, setup
} from "./helpers.js"

const claimKeys = [
  "amount", "appointment_id", "claim_number", "cpt_code", "created_at", "denial_reason", "diagnosis_codes", "edi_batch_id", "id",
  "insurance_plan_id", "modifiers", "patient", "patient_id", "payment_amount", "payment_date", "place_of_service", "provider",
  "provider_id", "service_date", "status", "submission_date", "updated_at"
]
type ClaimBody = { claim: Record<string, unknown> & { id: number; status: string } }
type UpdateClaim = UpdateClaimRequest["claim"]

const put = (token: string, id: number, claim: Record<string, unknown>) => request("PUT", `${claimsPath}/${id}`, { token, body: { claim } })
const claimCount = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM claims`).pipe(
  Effect.map((rows) => rows[0]!.n),
  Effect.orDie
)

layer(TestApp())("claims", (it) => {
  it.effect("create, show and list in the §2.6 representation; codes as sent, upper case; unknown is 404", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const created = yield* createClaim(token, claimBody(s, { diagnosis_codes: ["f32.9", "F41.1"], amount: 150.5, modifiers: ["95"], place_of_service: "10" }))
      expect(created.status).toBe(201)
      const claim = (created.body as ClaimBody).claim
      expect(Object.keys(claim).sort()).toEqual(claimKeys)
      expect(claim).toMatchObject({
        patient_id: s.patientId, provider_id: s.providerId, appointment_id: s.appointmentId, cpt_code: "90837",
        diagnosis_codes: ["F32.9", "F41.1"], service_date: s.day, amount: 150.5, status: "draft", modifiers: ["95"],
        place_of_service: "10", submission_date: null, payment_amount: null, payment_date: null, denial_reason: null,
        insurance_plan_id: s.planId, edi_batch_id: null, patient: { id: s.patientId, first_name: "Pat" }, provider: { id: s.providerId }
      })
      expect(claim.claim_number).toMatch(/^CLM\d{8}$/)
      const shown = yield* request("GET", `${claimsPath}/${claim.id}`, { token })
      expect(shown.body).toEqual({ claim })
      // The typed client a frontend derives decodes the same claim.
      const client = yield* clientAs(token)
      const typed = yield* client.claims.show({ path: { id: ClaimId.make(claim.id) } })
      expect(typed.claim).toMatchObject({ id: claim.id, claim_number: claim.claim_number, status: "draft", diagnosis_codes: ["F32.9", "F41.1"] })
      const refusedAnonymously = yield* Effect.flip((yield* clientAs()).claims.show({ path: { id: ClaimId.make(claim.id) } }))
      expect(refusedAnonymously).toMatchObject({ _tag: "Unauthorized" })
      const listed = yield* request("GET", `${claimsPath}?patient_id=${s.patientId}&provider_id=${s.providerId}&status=draft`, { token })
      expect(listed.body).toEqual({ claims: [claim], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 } })
      expect((yield* request("GET", `${claimsPath}?patient_id=${s.patientId}&status=ready`, { token })).body).toMatchObject({ claims: [] })
      const missing = yield* request("GET", `${claimsPath}/999999`, { token })
      expect(missing).toMatchObject({ status: 404, body: { errors: "Claim not found" } })
      expect(yield* auditActions("claim", claim.id)).toEqual(["claim.create"])
      // Claim numbers come from a sequence: the next one differs.
      const other = yield* setup(token)
      const second = yield* client.claims.create({ payload: { claim: claimOf(other) } })
      expect(second.claim.claim_number).toMatch(/^CLM\d{8}$/)
      expect(second.claim.claim_number).not.toBe(claim.claim_number)
    }))

  it.effect("diagnosis codes come back as sent, with or without the dot; rows stored without it get it back after the third character", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const client = yield* clientAs(token)
      const [created, response] = yield* client.claims.create({
        payload: { claim: claimOf(s, { diagnosis_codes: ["F32.9", "Z6372", "s72.001a", "R69"] }) }, withResponse: true
      })
      expect(response.status).toBe(201)
      const id = created.claim.id
      expect(created.claim.diagnosis_codes).toEqual(["F32.9", "Z6372", "S72.001A", "R69"])
      // A row as the service stored it before codes kept their dot, then the migration that restores it.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE claims SET diagnosis_codes = '{F329,Z6372,S72001A,R69,F41.1}' WHERE id = ${id}`.pipe(Effect.orDie)
      const migration = yield* Effect.promise(() => readFile(new URL("../../../sql/0029_diagnosis_codes_with_dot.sql", import.meta.url), "utf8"))
      yield* sql.unsafe(migration).pipe(Effect.orDie)
      const shown = yield* client.claims.show({ path: { id } })
      expect(shown.claim.diagnosis_codes).toEqual(["F32.9", "Z63.72", "S72.001A", "R69", "F41.1"])
    }))

  it.effect("the create rules answer 422 field → messages and create nothing", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const before = yield* claimCount
      const refused = (extra: Record<string, unknown>, errors: Record<string, Array<string>>) =>
        Effect.gen(function*() {
          const response = yield* createClaim(token, claimBody(s, extra))
          expect(response.status, JSON.stringify(response.body)).toBe(422)
          expect(response.body).toEqual({ errors })
        })
      yield* refused({ amount: 0 }, { amount: ["must be greater than 0"] })
      yield* refused({ amount: -5 }, { amount: ["must be greater than 0"] })
      yield* refused({ amount: 10.555 }, { amount: ["must have at most 2 decimal places"] })
      yield* refused({ diagnosis_codes: ["F32.9", "12345"] }, { "diagnosis_codes[1]": ["is invalid"] })
      yield* refused({ diagnosis_codes: [] }, { diagnosis_codes: ["can't be blank"] })
      yield* refused({ diagnosis_codes: Array.from({ length: 13 }, (_, i) => `F${10 + i}`) }, { diagnosis_codes: ["is too long (maximum is 12 items)"] })
      yield* refused({ diagnosis_codes: ["F32.9", "F329"] }, { diagnosis_codes: ["must not repeat a code"] })
      yield* refused({ cpt_code: "99213" }, { cpt_code: ["is invalid"] })
      yield* refused({ cpt_code: "9083" }, { cpt_code: ["is invalid"] })
      yield* refused({ appointment_id: 999999 }, { appointment_id: ["must exist"] })
      yield* refused({ patient_id: 999999 }, { patient_id: ["must exist"], appointment_id: ["is invalid"] })
      yield* refused({ service_date: "2001-01-01" }, { service_date: ["must be the appointment's date"] })
      yield* refused({ service_date: "2999-01-01" }, { service_date: ["must be the appointment's date", "can't be in the future"] })
      const otherPatient = yield* insertPatient()
      yield* refused({ patient_id: otherPatient }, { appointment_id: ["is invalid"] })
      const scheduled = yield* insertAppointment(s.patientId, s.providerId, { daysAgo: 2, status: "scheduled" })
      yield* refused({ appointment_id: scheduled.id, service_date: scheduled.day }, { appointment_id: ["is invalid"] })
      const missing = yield* request("POST", claimsPath, { token, body: { claim: { patient_id: s.patientId } } })
      expect(missing.status).toBe(422)
      expect(Object.keys((missing.body as { errors: object }).errors).sort()).toEqual(
        ["amount", "appointment_id", "cpt_code", "diagnosis_codes", "provider_id", "service_date"]
      )
      expect(yield* claimCount).toBe(before)
      // One active claim per appointment.
      expect((yield* createClaim(token, claimBody(s))).status).toBe(201)
      yield* refused({}, { appointment_id: ["has already been taken"] })
    }))

  it.effect("one active claim per appointment holds under concurrency", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const responses = yield* Effect.all(Array.from({ length: 8 }, () => createClaim(token, claimBody(s))), { concurrency: "unbounded" })
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1)
      expect(responses.filter((r) => r.status === 422).map((r) => r.body)).toEqual(
        Array.from({ length: 7 }, () => ({ errors: { appointment_id: ["has already been taken"] } }))
      )
    }))

  it.effect("the status machine: allowed moves, refused ones (422), edits only in draft, ready and rejected", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const { id } = yield* newClaim(token, s)
      const client = yield* clientAs(token)
      const update = (claim: UpdateClaim) => client.claims.update({ path: { id }, payload: { claim } }).pipe(Effect.map((r) => r.claim))
      expect(yield* put(token, id, { status: "paid" })).toMatchObject({ status: 422, body: { errors: { status: ["can't change from draft to paid"] } } })
      expect(yield* put(token, id, { status: "submitted" })).toMatchObject({
        status: 422, body: { errors: { status: ["can only become submitted through EDI generation"] } }
      })
      const edited = yield* put(token, id, { amount: 99.99, diagnosis_codes: ["F33.1"], status: "ready" })
      expect(edited).toMatchObject({ status: 200, body: { claim: { amount: 99.99, diagnosis_codes: ["F33.1"], status: "ready" } } })
      expect(yield* put(token, id, { amount: 0 })).toMatchObject({ status: 422, body: { errors: { amount: ["must be greater than 0"] } } })
      expect((yield* put(token, id, { status: "draft" })).status).toBe(200)
      expect((yield* put(token, id, { status: "ready" })).status).toBe(200)
      // Submitted only through EDI; then pending → rejected (needs a reason) → ready after a fix.
      const batch = yield* request("POST", `${claimsPath}/generate_edi`, { token, body: { claim_ids: [id] } })
      expect(batch.status, JSON.stringify(batch.body)).toBe(201)
      expect(yield* put(token, id, { amount: 120 })).toMatchObject({
        status: 422, body: { errors: { status: ["is submitted: only draft, ready and rejected claims can be edited"] } }
      })
      // The same code written without its dot is not an edit, and the claim keeps it as it was sent.
      const respelt = yield* update({ diagnosis_codes: ["f331"] })
      expect(respelt.diagnosis_codes).toEqual(["F33.1"])
      // Sending the unchanged fields with a move is not an edit.
      expect((yield* put(token, id, { ...claimBody(s, { amount: 99.99, diagnosis_codes: ["F33.1"] }), status: "pending" })).status).toBe(200)
      expect(yield* put(token, id, { status: "rejected" })).toMatchObject({ status: 422, body: { errors: { denial_reason: ["can't be blank"] } } })
      expect((yield* put(token, id, { status: "rejected", denial_reason: "Subscriber id invalid" })).status).toBe(200)
      const fixed = yield* update({ amount: 120, status: "ready" })
      expect(fixed).toMatchObject({ amount: 120, status: "ready", denial_reason: "Subscriber id invalid" })
      const again = yield* request("POST", `${claimsPath}/generate_edi`, { token, body: { claim_ids: [id] } })
      expect(again.status).toBe(201)
      expect((yield* put(token, id, { status: "approved" })).body).toEqual({ errors: { status: ["can't change from submitted to approved"] } })
      expect((yield* put(token, id, { status: "pending" })).status).toBe(200)
      expect((yield* put(token, id, { status: "approved" })).status).toBe(200)
      expect(yield* put(token, id, { status: "paid" })).toMatchObject({ status: 422, body: { errors: { payment_amount: ["can't be blank"] } } })
      const paid = yield* update({ status: "paid", payment_amount: 100.25 })
      expect(paid).toMatchObject({ status: "paid", payment_amount: 100.25 })
      expect(paid.payment_date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect((yield* put(token, id, { status: "denied", denial_reason: "x" })).body).toEqual({ errors: { status: ["can't change from paid to denied"] } })
      expect(yield* request("DELETE", `${claimsPath}/${id}`, { token })).toMatchObject({
        status: 422, body: { errors: { status: ["is paid: only draft claims can be deleted"] } }
      })
      expect(yield* auditActions("claim", id)).toEqual(expect.arrayContaining(["claim.ready", "claim.submitted", "claim.rejected", "claim.paid"]))
    }))

  it.effect("delete removes only drafts (204), then 404", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const { id } = yield* newClaim(token, s)
      expect((yield* request("DELETE", `${claimsPath}/${id}`, { token })).status).toBe(204)
      expect((yield* request("GET", `${claimsPath}/${id}`, { token })).status).toBe(404)
      expect((yield* request("DELETE", `${claimsPath}/${id}`, { token })).body).toEqual({ errors: "Claim not found" })
      // The appointment is free again.
      expect((yield* createClaim(token, claimBody(s))).status).toBe(201)
    }))

  it.effect("filter_claims: §4.6 filters and total_amount over every match, not the page; GET filters", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const planId = yield* createPlan(token, { name: "Filter Plan" })
      const provider = yield* providerWithNpi(token, { first_name: "Filter", last_name: "Zebrafinch" })
      const amounts = [100.1, 200.2, 300.3]
      const ids: Array<number> = []
      for (const amount of amounts) {
        const s = yield* setup(token, { planId })
        const appointment = yield* insertAppointment(s.patientId, provider.id, { daysAgo: 5 })
        const created = yield* newClaim(token, { ...s, providerId: provider.id, appointmentId: appointment.id, day: appointment.day }, { amount })
        ids.push(created.id)
      }
      const filtered = yield* request("POST", `${claimsPath}/filter_claims`, {
        token, body: { page_size: 1, sort_by: "amount", sort_dir: "asc", filters: { insurance_plan_id: planId, provider_name: "zebrafinch", status: "draft" } }
      })
      expect(filtered.status).toBe(200)
      const body = filtered.body as { claims: Array<{ id: number; amount: number }>; pagination: object; total_amount: number }
      expect(body.claims.map((c) => c.amount)).toEqual([100.1])
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 3, total_count: 3, per_page: 1 })
      expect(body.total_amount).toBe(600.6)
      const none = yield* request("POST", `${claimsPath}/filter_claims`, { token, body: { filters: { insurance_plan_id: planId, status: "paid" } } })
      expect(none.body).toMatchObject({ claims: [], total_amount: 0 })
      const client = yield* clientAs(token)
      const byDate = yield* client.claims.filter({
        payload: { filters: { insurance_plan_id: planId, appointment_type: "therapy", date: { start_date: "2000-01-01", end_date: "2000-12-31" } } }
      })
      expect(byDate.claims).toEqual([])
      const search = yield* client.claims.filter({ payload: { search: "zebrafinch", filters: { appointment_id: null } } })
      expect(search.claims.map((c) => c.id).sort()).toEqual([...ids].sort())
      const filters = yield* request("GET", `${claimsPath}/filters`, { token })
      expect(filters.body).toMatchObject({
        statuses: ["draft", "ready", "submitted", "pending", "approved", "paid", "denied", "rejected"],
        cpt_codes: ["90834", "90837", "90791", "90792", "90847", "90853"],
        places_of_service: ["11", "02", "10"]
      })
      expect(filters.body).toMatchObject({
        insurance_plans: expect.arrayContaining([{ id: planId, name: "Filter Plan" }]),
        providers: expect.arrayContaining([{ id: provider.id, first_name: "Filter", last_name: "Zebrafinch" }])
      })
      const typedFilters = yield* client.claims.filters()
      expect(typedFilters.insurance_plans).toContainEqual({ id: planId, name: "Filter Plan" })
      const bad = yield* request("POST", `${claimsPath}/filter_claims`, { token, body: { filters: { status: "lost", insurance_plan_id: "x" } } })
      expect(bad).toMatchObject({ status: 422, body: { errors: { status: ["is not included in the list"], insurance_plan_id: ["is not a number"] } } })
    }))
})

layer(TestApp({ billing: billingSettings({ extraCptCodes: ["H0004"] }) }))("configured CPT codes", (it) => {
  it.effect("BILLING_CPT_CODES adds codes to the spec's list", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const s = yield* setup(token)
      const [created, response] = yield* (yield* clientAs(token)).claims.create({ payload: { claim: claimOf(s, { cpt_code: "h0004" }) }, withResponse: true })
      expect(response.status).toBe(201)
      expect(created.claim.cpt_code).toBe("H0004")
      expect((yield* request("GET", `${claimsPath}/filters`, { token })).body).toMatchObject({ cpt_codes: expect.arrayContaining(["90837", "H0004"]) })
    }))
})
