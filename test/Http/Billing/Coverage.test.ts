import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { InsurancePlanId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { adminToken, createPlan, insertPatient, insertUser, password, setCoverage } from "./helpers.js"

const plans = "/v1/admin/clinic/insurance_plans"
type PlanBody = { insurance_plan: Record<string, unknown> & { id: number } }

layer(TestApp())("insurance plans and coverage", (it) => {
  it.effect("plans: create, show, list with search, update; unknown is 404; bad input 422", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const created = yield* request("POST", plans, { token, body: { insurance_plan: { name: "Medi-Cal Plus", payer_id: "610442", claim_filing_indicator: "MC" } } })
      expect(created.status).toBe(201)
      const plan = (created.body as PlanBody).insurance_plan
      expect(Object.keys(plan).sort()).toEqual(["active", "claim_filing_indicator", "created_at", "id", "name", "payer_id", "updated_at"])
      expect(plan).toMatchObject({ name: "Medi-Cal Plus", payer_id: "610442", claim_filing_indicator: "MC", active: true })
      expect((yield* request("GET", `${plans}/${plan.id}`, { token })).body).toEqual({ insurance_plan: plan })
      const listed = yield* request("GET", `${plans}?search=medi-cal`, { token })
      expect((listed.body as { insurance_plans: Array<unknown> }).insurance_plans).toEqual([plan])
      const client = yield* clientAs(token)
      const id = InsurancePlanId.make(plan.id)
      expect((yield* client.insurancePlans.list({ urlParams: { search: "medi-cal" } })).insurance_plans.map((p) => p.id)).toEqual([id])
      expect((yield* client.insurancePlans.show({ path: { id } })).insurance_plan).toMatchObject({ id, name: "Medi-Cal Plus", payer_id: "610442" })
      const updated = yield* client.insurancePlans.update({ path: { id }, payload: { insurance_plan: { active: false, claim_filing_indicator: "HM" } } })
      expect(updated.insurance_plan).toMatchObject({ active: false, claim_filing_indicator: "HM", name: "Medi-Cal Plus" })
      expect((yield* request("GET", `${plans}/999999`, { token })).body).toEqual({ errors: "Insurance plan not found" })
      const bad = yield* request("POST", plans, { token, body: { insurance_plan: { name: " ", claim_filing_indicator: "XX" } } })
      expect(bad).toMatchObject({
        status: 422,
        body: { errors: { name: ["can't be blank"], payer_id: ["can't be blank"], claim_filing_indicator: ["is not included in the list"] } }
      })
    }))

  it.effect("coverage: the patient as subscriber, or a named guardian; the linked parent account fills in the guardian", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const planId = yield* createPlan(token, { name: "Blue Plan", claim_filing_indicator: "BL" })
      const patientId = yield* insertPatient({ first: "Ana", last: "Lopez" })
      expect((yield* request("GET", `/v1/clinic/patients/${patientId}/coverage`, { token })).body).toEqual({ errors: "Coverage not found" })
      const self = yield* setCoverage(token, patientId, { insurance_plan_id: planId, member_id: " XYZ1 ", group_number: "G1" })
      expect(self.status).toBe(200)
      expect(self.body).toMatchObject({ coverage: {
        patient_id: patientId, member_id: "XYZ1", group_number: "G1", relationship: "self",
        insurance_plan: { id: planId, name: "Blue Plan", claim_filing_indicator: "BL" },
        subscriber: { first_name: "Ana", last_name: "Lopez", date_of_birth: "1990-02-03", gender: "F", address: "12 Oak Ave", city: "Davis", state: "CA", zip: "95616" }
      } })
      expect((yield* (yield* clientAs(token)).coverage.show({ path: { patient_id: patientId } })).coverage).toMatchObject({ member_id: "XYZ1", relationship: "self" })
      expect((yield* request("GET", `/v1/clinic/patients/${patientId}/coverage`, { token })).body).toEqual(self.body)

      // A child linked to a parent's account: the guardian comes from the account when not named.
      const parentId = yield* insertUser({ first_name: "Morgan", last_name: "Vale" })
      const child = yield* insertPatient({ userId: parentId, first: "Robin", last: "Vale", dateOfBirth: "2015-06-01" })
      const noBirthDate = yield* setCoverage(token, child, { insurance_plan_id: planId, member_id: "C1", relationship: "child" })
      expect(noBirthDate).toMatchObject({ status: 422, body: { errors: { "subscriber.date_of_birth": ["can't be blank"] } } })
      const guardian = yield* (yield* clientAs(token)).coverage.update({
        path: { patient_id: child },
        payload: { coverage: { insurance_plan_id: planId, member_id: "C1", relationship: "child", subscriber: { date_of_birth: "1985-09-09", gender: "F" } } }
      })
      expect(guardian.coverage).toMatchObject({
        relationship: "child", subscriber: { first_name: "Morgan", last_name: "Vale", date_of_birth: "1985-09-09", gender: "F", address: null }
      })
      const unlinked = yield* insertPatient()
      const unnamed = yield* setCoverage(token, unlinked, { insurance_plan_id: planId, member_id: "C2", relationship: "spouse" })
      expect(unnamed).toMatchObject({
        status: 422,
        body: { errors: { "subscriber.first_name": ["can't be blank"], "subscriber.last_name": ["can't be blank"], "subscriber.date_of_birth": ["can't be blank"] } }
      })
      const noPlan = yield* setCoverage(token, unlinked, { insurance_plan_id: 999999, member_id: "C2" })
      expect(noPlan).toMatchObject({ status: 422, body: { errors: { insurance_plan_id: ["must exist"] } } })
      expect((yield* setCoverage(token, 999999, { insurance_plan_id: planId, member_id: "C2" })).body).toEqual({ errors: "Patient not found" })
    }))

  it.effect("a parent reads and sets coverage of their own patients only; others are 404", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const planId = yield* createPlan(token)
      const parentId = yield* insertUser({ email: `coverage.parent.${Date.now()}@example.test` })
      const parentToken = yield* signIn(yield* userEmail(parentId), password)
      const own = yield* insertPatient({ userId: parentId })
      const other = yield* insertPatient()
      const parent = yield* clientAs(parentToken)
      expect((yield* parent.coverage.update({ path: { patient_id: own }, payload: { coverage: { insurance_plan_id: planId, member_id: "OWN1" } } })).coverage.member_id)
        .toBe("OWN1")
      expect((yield* parent.coverage.show({ path: { patient_id: own } })).coverage.patient_id).toBe(own)
      expect((yield* request("GET", `/v1/clinic/patients/${other}/coverage`, { token: parentToken })).body).toEqual({ errors: "Patient not found" })
      expect((yield* setCoverage(parentToken, other, { insurance_plan_id: planId, member_id: "X" })).body).toEqual({ errors: "Patient not found" })
      expect((yield* request("GET", `/v1/clinic/patients/${other}/coverage`, { token })).body).toEqual({ errors: "Coverage not found" })
    }))
})

const userEmail = (id: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${id}`.pipe(Effect.orDie)
    return row!.email
  })
