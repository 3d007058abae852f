import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { PrescriptionStatus } from "../../../src/Domain/Prescriptions/Prescription.js"
import { PrescriptionId, ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertAppointment } from "../../support/fixtures.js"
import {
  adminToken, auditActions, body, create, historyRows, insertPatient, medicationId, prescriber, prescriptionFor, type PrescriptionBody,
  prescriptionsPath, put, written
} from "./helpers.js"

const prescriptionKeys = [
  "created_at", "dosage", "end_date", "frequency", "id", "instructions", "medication", "medication_id", "patient", "patient_id",
  "prescription_date", "provider", "provider_id", "quantity", "refills", "refills_remaining", "start_date", "status", "updated_at"
]

const prescriptionCount = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM prescriptions`).pipe(
  Effect.map((rows) => rows[0]!.n),
  Effect.orDie
)

layer(TestApp())("prescriptions", (it) => {
  it.effect("a provider writes one in the §2.8 representation; show, list and filters; unknown is 404", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ first: "Avery", last: "Rx", providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const created = yield* create(doctor.token, body(patientId, sertraline, {
        refills: 2, instructions: "Take in the morning", start_date: "2026-01-06", end_date: "2026-04-06", frequency: "Once  Daily",
        provider_id: 999999
      }))
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const prescription = (created.body as PrescriptionBody).prescription
      expect(Object.keys(prescription).sort()).toEqual(prescriptionKeys)
      expect(prescription).toMatchObject({
        patient_id: patientId, provider_id: doctor.id, medication_id: sertraline, dosage: "50 mg", frequency: "once daily", quantity: 30,
        refills: 2, refills_remaining: 2, instructions: "Take in the morning", prescription_date: "2026-01-05", status: "active",
        start_date: "2026-01-06", end_date: "2026-04-06",
        medication: { id: sertraline, name: "Sertraline 50 mg tablet", generic_name: "sertraline", brand_names: ["Zoloft"], strength: "50 mg", dosage_form: "tablet" },
        patient: { id: patientId, first_name: "Avery", last_name: "Rx" },
        provider: { id: doctor.id, first_name: "Riley" }
      })
      expect(Object.keys(prescription.medication as object).sort()).toEqual(["brand_names", "dosage_form", "generic_name", "id", "name", "strength"])
      const shown = yield* request("GET", `${prescriptionsPath}/${prescription.id}`, { token: doctor.token })
      expect(shown).toMatchObject({ status: 200, body: { prescription } })
      const id = PrescriptionId.make(prescription.id)
      const typed = yield* (yield* clientAs(doctor.token)).prescriptions.show({ path: { id } })
      expect(typed.prescription).toMatchObject({ id, patient_id: patientId, provider_id: doctor.id, status: "active", refills_remaining: 2 })
      const listed = yield* request("GET", `${prescriptionsPath}?patient_id=${patientId}&provider_id=${doctor.id}&status=active&medication_name=zolo`, { token: admin })
      expect(listed.body).toEqual({ prescriptions: [prescription], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 } })
      const adminClient = yield* clientAs(admin)
      const filtered = yield* adminClient.prescriptions.list({ urlParams: { patient_id: patientId, provider_id: doctor.id, status: "active", medication_name: "zolo" } })
      expect(filtered.prescriptions.map((p) => p.id)).toEqual([id])
      for (const query of [{ status: "on_hold" }, { medication_name: "fluox" }, { provider_id: ProviderId.make(doctor.id + 1000) }] as const) {
        expect((yield* adminClient.prescriptions.list({ urlParams: { patient_id: patientId, ...query } })).prescriptions).toEqual([])
      }
      const missing = yield* request("GET", `${prescriptionsPath}/999999`, { token: admin })
      expect(missing).toEqual(expect.objectContaining({ status: 404, body: { errors: "Prescription not found" } }))
      expect(yield* auditActions("prescription", prescription.id)).toEqual(["prescription.create"])
      expect(yield* historyRows(prescription.id)).toEqual([{ event: "created", status: "active", dosage: "50 mg" }])
    }))

  it.effect("the rules answer 422 field → messages and write nothing", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const before = yield* prescriptionCount
      const refused = (extra: Record<string, unknown>, errors: Record<string, Array<string>>, token = doctor.token) =>
        Effect.gen(function*() {
          const response = yield* create(token, body(patientId, sertraline, extra))
          expect(response.status, JSON.stringify(response.body)).toBe(422)
          expect(response.body).toEqual({ errors })
        })
      yield* refused({ quantity: 0 }, { quantity: ["must be greater than 0"] })
      yield* refused({ quantity: -3 }, { quantity: ["must be greater than 0"] })
      yield* refused({ quantity: 1.5 }, { quantity: ["must be an integer"] })
      yield* refused({ refills: 12 }, { refills: ["must be between 0 and 11"] })
      yield* refused({ refills: -1 }, { refills: ["must be between 0 and 11"] })
      yield* refused({ prescription_date: "2999-01-01" }, { prescription_date: ["can't be in the future"] })
      yield* refused({ prescription_date: "2026-02-30" }, { prescription_date: ["is invalid"] })
      yield* refused({ start_date: "2026-02-01", end_date: "2026-02-01" }, { end_date: ["must be after start date"] })
      yield* refused({ start_date: "2026-02-01", end_date: "2026-01-01" }, { end_date: ["must be after start date"] })
      yield* refused({ medication_id: 999999 }, { medication_id: ["must exist"] })
      yield* refused({ patient_id: 999999 }, { patient_id: ["must exist"] })
      yield* refused({ dosage: " " }, { dosage: ["can't be blank"] })
      yield* refused({ frequency: "x".repeat(101) }, { frequency: ["is too long (maximum is 100 characters)"] })
      yield* refused({ instructions: "x".repeat(1001) }, { instructions: ["is too long (maximum is 1000 characters)"] })
      yield* refused({ quantity: 0, refills: 20, prescription_date: "2999-01-01" }, {
        quantity: ["must be greater than 0"], refills: ["must be between 0 and 11"]
      })
      // A retired medication, an admin without provider_id, prescribers without a license or inactive.
      const sql = yield* SqlClient.SqlClient
      const retired = yield* medicationId("Melatonin 3 mg tablet")
      yield* sql`UPDATE medications SET active = false WHERE id = ${retired}`
      yield* refused({ medication_id: retired }, { medication_id: ["must be active"] })
      yield* refused({}, { provider_id: ["can't be blank"] }, admin)
      const unlicensed = yield* prescriber(admin, { license: null })
      // A care relationship (an appointment), so only the licence is in question.
      yield* insertAppointment({ patientId, providerId: unlicensed.id, scheduledAt: new Date(Date.now() - 86_400_000), minutes: 50, status: "scheduled" })
      yield* refused({}, { provider_id: ["must be an active provider with a license number"] }, unlicensed.token)
      yield* refused({ provider_id: unlicensed.id }, { provider_id: ["must be an active provider with a license number"] }, admin)
      yield* sql`UPDATE providers SET active = false WHERE id = ${doctor.id}`
      yield* refused({ provider_id: doctor.id }, { provider_id: ["must be an active provider with a license number"] }, admin)
      yield* sql`UPDATE providers SET active = true WHERE id = ${doctor.id}`
      expect(yield* prescriptionCount).toBe(before)
      // Free-text frequency and instructions are kept as written (trimmed); blank instructions are null.
      const free = yield* (yield* clientAs(doctor.token)).prescriptions.create({
        payload: { prescription: prescriptionFor(patientId, sertraline, { frequency: " every 6 hours ", instructions: " " }) }
      })
      expect(free.prescription).toMatchObject({ frequency: "every 6 hours", instructions: null, refills: 0, refills_remaining: 0 })
      // An admin writes one for a provider.
      const [byAdmin, byAdminResponse] = yield* (yield* clientAs(admin)).prescriptions.create({
        payload: { prescription: prescriptionFor(patientId, sertraline, { provider_id: doctor.id }) }, withResponse: true
      })
      expect(byAdminResponse.status).toBe(201)
      expect(byAdmin.prescription.provider_id).toBe(doctor.id)
    }))

  it.effect("the status machine: moves, final states, expired only by the job; edits only while active or on hold", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const id = yield* written(doctor.token, prescriptionFor(patientId, sertraline))
      const move = (status: string) => put(doctor.token, id, { status })
      const client = yield* clientAs(doctor.token)
      const moved = (status: PrescriptionStatus) => client.prescriptions.update({ path: { id }, payload: { prescription: { status } } })
      expect((yield* moved("on_hold")).prescription.status).toBe("on_hold")
      expect(yield* move("completed")).toMatchObject({ status: 422, body: { errors: { status: ["can't change from on_hold to completed"] } } })
      expect((yield* client.prescriptions.update({ path: { id }, payload: { prescription: { dosage: "75 mg" } } })).prescription)
        .toMatchObject({ dosage: "75 mg", status: "on_hold" })
      expect((yield* moved("active")).prescription.status).toBe("active")
      expect(yield* move("expired")).toMatchObject({ status: 422, body: { errors: { status: ["can only become expired when the end date has passed"] } } })
      expect((yield* moved("discontinued")).prescription.status).toBe("discontinued")
      for (const to of ["active", "on_hold", "completed", "cancelled"]) {
        expect(yield* move(to)).toMatchObject({ status: 422, body: { errors: { status: [`can't change from discontinued to ${to}`] } } })
      }
      expect(yield* put(doctor.token, id, { dosage: "100 mg" })).toMatchObject({
        status: 422, body: { errors: { status: ["is discontinued: only active and on_hold prescriptions can be changed"] } }
      })
      expect((yield* move("discontinued")).status).toBe(200)
      expect((yield* historyRows(id)).map((r) => `${r.event}:${r.status}:${r.dosage}`)).toEqual([
        "created:active:50 mg", "status_changed:on_hold:50 mg", "changed:on_hold:75 mg", "status_changed:active:75 mg",
        "status_changed:discontinued:75 mg"
      ])
      expect(yield* auditActions("prescription", id)).toEqual([
        "prescription.create", "prescription.update", "prescription.on_hold", "prescription.update", "prescription.update",
        "prescription.active", "prescription.update", "prescription.discontinued"
      ])
      // completed is final too.
      const other = yield* written(doctor.token, prescriptionFor(patientId, sertraline))
      expect((yield* client.prescriptions.update({ path: { id: other }, payload: { prescription: { status: "completed" } } })).prescription.status)
        .toBe("completed")
      expect(yield* put(doctor.token, other, { status: "active" })).toMatchObject({ status: 422 })
    }))

  it.effect("DELETE cancels an active prescription, which stays readable; anything else is 422", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const id = yield* written(doctor.token, prescriptionFor(patientId, sertraline))
      const deleted = yield* request("DELETE", `${prescriptionsPath}/${id}`, { token: doctor.token })
      expect(deleted.status).toBe(204)
      expect(deleted.body).toBeUndefined()
      expect((yield* (yield* clientAs(doctor.token)).prescriptions.show({ path: { id } })).prescription).toMatchObject({ id, status: "cancelled" })
      expect(yield* request("DELETE", `${prescriptionsPath}/${id}`, { token: doctor.token })).toMatchObject({
        status: 422, body: { errors: { status: ["is cancelled: only an active prescription can be cancelled"] } }
      })
      expect((yield* request("DELETE", `${prescriptionsPath}/999999`, { token: admin })).body).toEqual({ errors: "Prescription not found" })
      expect(yield* auditActions("prescription", id)).toEqual(["prescription.create", "prescription.cancelled"])
      expect((yield* historyRows(id)).map((r) => `${r.event}:${r.status}`)).toEqual(["created:active", "status_changed:cancelled"])
    }))

  it.effect("refills: remaining starts at refills, a refill takes one, never below 0, also under concurrency", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const id = yield* written(doctor.token, prescriptionFor(patientId, sertraline, { refills: 3 }))
      const refill = request("POST", `${prescriptionsPath}/${id}/refill`, { token: doctor.token })
      const client = yield* clientAs(doctor.token)
      expect((yield* client.prescriptions.refill({ path: { id } })).prescription).toMatchObject({ refills: 3, refills_remaining: 2 })
      // Raising refills raises what remains by as much; lowering it never takes it below 0.
      expect((yield* put(doctor.token, id, { refills: 5 })).body).toMatchObject({ prescription: { refills: 5, refills_remaining: 4 } })
      expect((yield* put(doctor.token, id, { refills: 0 })).body).toMatchObject({ prescription: { refills: 0, refills_remaining: 0 } })
      expect(yield* refill).toMatchObject({ status: 422, body: { errors: { refills_remaining: ["has no refills remaining"] } } })
      expect((yield* put(doctor.token, id, { refills: 4, refills_remaining: 3 })).body).toMatchObject({ prescription: { refills: 4, refills_remaining: 3 } })
      expect(yield* put(doctor.token, id, { refills_remaining: 5 })).toMatchObject({ status: 422, body: { errors: { refills_remaining: ["must be between 0 and refills"] } } })
      expect(yield* put(doctor.token, id, { refills_remaining: -1 })).toMatchObject({ status: 422, body: { errors: { refills_remaining: ["must be between 0 and refills"] } } })
      const results = yield* Effect.all(Array.from({ length: 6 }, () => refill), { concurrency: "unbounded" })
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 422, 422, 422])
      expect((yield* request("GET", `${prescriptionsPath}/${id}`, { token: doctor.token })).body).toMatchObject({ prescription: { refills_remaining: 0 } })
      expect((yield* historyRows(id)).filter((r) => r.event === "refilled")).toHaveLength(4)
      yield* put(doctor.token, id, { status: "on_hold" })
      expect(yield* refill).toMatchObject({ status: 422, body: { errors: { status: ["is on_hold: only an active prescription can be refilled"] } } })
    }))

  it.effect("history rows are append-only", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const id = yield* written(doctor.token, prescriptionFor(patientId, yield* medicationId("Sertraline 50 mg tablet")))
      const sql = yield* SqlClient.SqlClient
      const update = yield* Effect.flip(sql`UPDATE prescription_history SET dosage = 'x' WHERE prescription_id = ${id}`)
      expect(String(update.cause)).toContain("append-only")
      const remove = yield* Effect.flip(sql`DELETE FROM prescription_history WHERE prescription_id = ${id}`)
      expect(String(remove.cause)).toContain("append-only")
      // They go with their patient (a permanent removal), through the cascade.
      yield* sql`DELETE FROM patients WHERE id = ${patientId}`
      expect(yield* historyRows(id)).toEqual([])
    }))
})
