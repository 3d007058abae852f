/** The medications catalogue: the seed, search for prescribing screens, admins adding and retiring. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MedicationId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { adminToken, auditActions, body, create, insertPatient, prescriber, prescriptionFor, signedIn, written } from "./helpers.js"

const medicationKeys = ["active", "brand_names", "created_at", "dosage_form", "generic_name", "id", "name", "rxnorm_cui", "strength", "updated_at"]
type MedicationListBody = { medications: Array<Record<string, unknown> & { id: number; name: string }>; pagination: Record<string, number> }

layer(TestApp())("medications", (it) => {
  it.effect("the seed: at least 60 medications across the classes, with RxNorm ingredient ids", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [counts] = yield* sql<{ total: number; coded: number }>`SELECT count(*)::int AS total, count(rxnorm_cui)::int AS coded FROM medications`
      expect(counts!.total).toBeGreaterThanOrEqual(60)
      expect(counts!.coded).toBeGreaterThanOrEqual(55)
      const cuis = yield* sql<{ generic_name: string; rxnorm_cui: string }>`SELECT DISTINCT generic_name, rxnorm_cui FROM medications
        WHERE generic_name IN ('sertraline', 'fluoxetine', 'escitalopram', 'methylphenidate', 'atomoxetine', 'aripiprazole', 'lamotrigine', 'duloxetine')
        ORDER BY generic_name`
      expect(cuis.map((c) => [c.generic_name, c.rxnorm_cui])).toEqual([
        ["aripiprazole", "89013"], ["atomoxetine", "38400"], ["duloxetine", "72625"], ["escitalopram", "321988"], ["fluoxetine", "4493"],
        ["lamotrigine", "28439"], ["methylphenidate", "6901"], ["sertraline", "36437"]
      ])
      // One CUI per ingredient.
      const [mixed] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT generic_name FROM medications
        WHERE rxnorm_cui IS NOT NULL GROUP BY generic_name HAVING count(DISTINCT rxnorm_cui) > 1) AS x`
      expect(mixed!.n).toBe(0)
    }))

  it.effect("search by name, generic or brand name, paged; show; staff only", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const byBrand = (yield* request("GET", "/v1/medications?search=zoloft", { token: doctor.token })).body as MedicationListBody
      expect(byBrand.medications.map((m) => m.name)).toEqual([
        "Sertraline 100 mg tablet", "Sertraline 20 mg/mL oral concentrate", "Sertraline 25 mg tablet", "Sertraline 50 mg tablet"
      ])
      expect(Object.keys(byBrand.medications[0]!).sort()).toEqual(medicationKeys)
      expect(byBrand.medications[0]).toMatchObject({ generic_name: "sertraline", brand_names: ["Zoloft"], rxnorm_cui: "36437", active: true })
      const client = yield* clientAs(doctor.token)
      const byGeneric = yield* client.medications.list({ urlParams: { search: "LISDEXAMFETAMINE" } })
      expect(byGeneric.medications).toHaveLength(3)
      expect(byGeneric.medications.every((m) => m.generic_name === "lisdexamfetamine")).toBe(true)
      const page = yield* client.medications.list({ urlParams: { page: 2, page_size: 10 } })
      expect(page.medications).toHaveLength(10)
      expect(page.pagination).toMatchObject({ current_page: 2, per_page: 10 })
      expect((yield* request("GET", "/v1/medications", { token: doctor.token })).body).toMatchObject({ pagination: { per_page: 25 } })
      expect((yield* request("GET", "/v1/medications?search=%25", { token: doctor.token })).body).toMatchObject({ medications: [] })
      const id = byBrand.medications[0]!.id
      expect(yield* request("GET", `/v1/medications/${id}`, { token: doctor.token })).toMatchObject({ status: 200, body: { medication: byBrand.medications[0] } })
      expect((yield* client.medications.show({ path: { id: MedicationId.make(id) } })).medication).toMatchObject({ id, name: "Sertraline 100 mg tablet" })
      expect(yield* request("GET", "/v1/medications/999999", { token: doctor.token })).toMatchObject({ status: 404, body: { errors: "Medication not found" } })
      const parent = yield* signedIn("parent")
      expect(yield* request("GET", "/v1/medications", { token: parent.token })).toMatchObject({ status: 403, body: { errors: "Staff access required" } })
    }))

  it.effect("admins add medications (unique per product) and retire them; retired ones are not prescribed", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const medication = { name: "Viloxazine ER 100 mg capsule", generic_name: "viloxazine", brand_names: ["Qelbree", " Qelbree "], strength: "100 mg", dosage_form: "extended-release capsule" }
      const adminClient = yield* clientAs(admin)
      const [created, response] = yield* adminClient.adminMedications.create({ payload: { medication }, withResponse: true })
      expect(response.status).toBe(201)
      const id = created.medication.id
      expect(created.medication).toMatchObject({ ...medication, brand_names: ["Qelbree"], rxnorm_cui: null, active: true })
      expect(yield* request("POST", "/v1/admin/clinic/medications", { token: admin, body: { medication: { ...medication, name: "Again", generic_name: "Viloxazine" } } }))
        .toMatchObject({ status: 422, body: { errors: { name: ["has already been taken"] } } })
      expect(yield* request("POST", "/v1/admin/clinic/medications", { token: admin, body: { medication: { ...medication, rxnorm_cui: "12a" } } }))
        .toMatchObject({ status: 422, body: { errors: { rxnorm_cui: ["is invalid"] } } })
      expect(yield* request("POST", "/v1/admin/clinic/medications", { token: doctor.token, body: { medication } }))
        .toMatchObject({ status: 403, body: { errors: "Admin access required" } })
      const patientId = yield* insertPatient({ providerId: doctor.id })
      expect(yield* written(doctor.token, prescriptionFor(patientId, id))).toBeGreaterThan(0)
      const retired = yield* adminClient.adminMedications.update({ path: { id }, payload: { medication: { active: false } } })
      expect(retired.medication).toMatchObject({ id, active: false, name: medication.name })
      expect(yield* create(doctor.token, body(patientId, id))).toMatchObject({ status: 422, body: { errors: { medication_id: ["must be active"] } } })
      expect((yield* request("GET", "/v1/medications?search=viloxazine", { token: doctor.token })).body).toMatchObject({ medications: [] })
      expect((yield* adminClient.medications.list({ urlParams: { search: "viloxazine", include_inactive: "true" } })).medications.map((m) => m.id))
        .toEqual([id])
      expect((yield* request("GET", `/v1/medications/${id}`, { token: doctor.token })).status).toBe(200)
      expect(yield* request("PUT", "/v1/admin/clinic/medications/999999", { token: admin, body: { medication: { active: false } } }))
        .toMatchObject({ status: 404, body: { errors: "Medication not found" } })
      expect(yield* auditActions("medication", id)).toEqual(["medication.create", "medication.retire"])
    }))
})
