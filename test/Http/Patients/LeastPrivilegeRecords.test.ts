/**
 * Least privilege beyond the patient's own records (docs/spec-decisions.md "Who sees which
 * patient"): collaborators, their assessments and videos follow the care relationships (and
 * break-glass) instead of the primary provider alone; session-note lists and prescription writes
 * check the patient like every clinical record.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertAppointment } from "../../support/fixtures.js"
import { makeProvider, password } from "../Providers/helpers.js"
import { newPatient, patientNotFound, signedIn } from "./helpers.js"

let n = 0

/** A provider profile with a license, and its signed-in user. */
const clinician = (admin: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const email = `clinician${++n}.${Date.now()}@records.least.test`
    const profile = yield* makeProvider(admin, "provider", { email })
    yield* sql`UPDATE providers SET license_number = ${`LIC-R${n}`} WHERE id = ${profile.id}`
    return { ...profile, token: yield* signIn(email, password) }
  })

/**
 * Patient P with primary provider `primary`; `colleague` has an appointment with P (a care
 * relationship, not the primary provider); `outsider` none. Collaborator X, added by an admin, is
 * linked to P, with a pending assessment of P.
 */
const world = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const admin = yield* signIn()
  const primary = yield* clinician(admin)
  const colleague = yield* clinician(admin)
  const outsider = yield* clinician(admin)
  const patient = yield* newPatient(admin, { provider_id: primary.id })
  yield* insertAppointment({
    patientId: patient, providerId: colleague.id, scheduledAt: new Date(Date.now() - 10 * 86_400_000), minutes: 50, status: "scheduled"
  })
  const created = yield* (yield* clientAs(admin)).collaborators.create({
    payload: { collaborator: { first_name: "Jo", last_name: "Teach", email: `teach${++n}@school.test`, organization: "School", type: "school", patient_ids: [PatientId.make(patient)] } }
  })
  const collaborator = created.collaborator.id
  const issued = yield* request("GET", `/v1/collaborator_assessments/token?collaborator_id=${collaborator}&patient_id=${patient}&assessment_type=social_skills`, { token: admin })
  expect(issued.status).toBe(200)
  const [assessment] = yield* sql<{ id: number }>`SELECT id FROM collaborator_assessments WHERE collaborator_id = ${collaborator}`
  return { admin, primary, colleague, outsider, patient, collaborator, assessment: assessment!.id }
})

const get = (token: string, path: string, headers: Record<string, string> = {}) => request("GET", path, { token, headers })
const reason = { "X-Access-Reason": "Covering the clinic today" }
const idsOf = (body: unknown, key: string) => (body as Record<string, Array<{ id: number }>>)[key]!.map((x) => x.id)

layer(TestApp())("least privilege: collaborators, videos, notes, prescriptions", (it) => {
  it.effect("collaborators and their assessments follow care relationships, not the primary provider alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const w = yield* world
      const x = `/v1/collaborators/${w.collaborator}`
      // The colleague (an appointment with the patient) reads the collaborator, lists it, assesses.
      expect((yield* get(w.colleague.token, x)).status).toBe(200)
      expect((yield* get(w.colleague.token, x)).body).toMatchObject({ collaborator: { patient_ids: [w.patient] } })
      expect(idsOf((yield* get(w.colleague.token, "/v1/collaborators")).body, "collaborators")).toEqual([w.collaborator])
      const token = yield* get(w.colleague.token, `/v1/collaborator_assessments/token?collaborator_id=${w.collaborator}&patient_id=${w.patient}&assessment_type=social_skills`)
      expect(token.status).toBe(200)
      expect(idsOf((yield* get(w.colleague.token, `/v1/collaborator_assessments?patient_id=${w.patient}`)).body, "collaborator_assessments")).toEqual([w.assessment])
      expect((yield* get(w.colleague.token, `/v1/collaborator_assessments/${w.assessment}`)).status).toBe(200)
      // The outsider: 403 on the collaborator, nothing listed, 404 on the patient and the assessment.
      expect((yield* get(w.outsider.token, x)).status).toBe(403)
      expect(idsOf((yield* get(w.outsider.token, "/v1/collaborators")).body, "collaborators")).toEqual([])
      expect((yield* get(w.outsider.token, `/v1/collaborator_assessments?patient_id=${w.patient}`)).body).toEqual(patientNotFound)
      expect(idsOf((yield* get(w.outsider.token, "/v1/collaborator_assessments")).body, "collaborator_assessments")).toEqual([])
      expect((yield* get(w.outsider.token, `/v1/collaborator_assessments/${w.assessment}`)).status).toBe(404)
      // Break-glass opens the patient's collaborators and assessments, and is recorded.
      const glassList = yield* get(w.outsider.token, `/v1/collaborators?patient_id=${w.patient}`, reason)
      expect(idsOf(glassList.body, "collaborators")).toEqual([w.collaborator])
      expect(idsOf((yield* get(w.outsider.token, `/v1/collaborator_assessments?patient_id=${w.patient}`, reason)).body, "collaborator_assessments"))
        .toEqual([w.assessment])
      expect((yield* get(w.outsider.token, `/v1/collaborator_assessments/${w.assessment}`, reason)).status).toBe(200)
      const [opened] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM break_glass_accesses
        WHERE user_id = ${w.outsider.userId} AND patient_id = ${w.patient}`
      expect(opened!.n).toBe(3)
    }))

  it.effect("staff link collaborators only to patients they may see: any other is `must exist`, as an unknown one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const w = yield* world
      const body = (patient_ids: Array<number>) => ({
        collaborator: { first_name: "Al", last_name: "Coach", email: `coach${++n}@club.test`, organization: "Club", type: "other", patient_ids }
      })
      const refused = yield* request("POST", "/v1/collaborators", { token: w.outsider.token, body: body([w.patient]) })
      expect(refused).toMatchObject({ status: 422, body: { errors: { patient_ids: ["must exist"] } } })
      const unknown = yield* request("POST", "/v1/collaborators", { token: w.outsider.token, body: body([2_000_000_000]) })
      expect(unknown.body).toEqual(refused.body)
      const [{ collaborator: { id: ownId } }, own] = yield* (yield* clientAs(w.outsider.token)).collaborators.create({
        payload: { collaborator: { first_name: "Al", last_name: "Coach", email: `coach${++n}@club.test`, organization: "Club", type: "other", patient_ids: [] } },
        withResponse: true
      })
      expect(own.status).toBe(201)
      const put = yield* request("PUT", `/v1/collaborators/${ownId}`, { token: w.outsider.token, body: { collaborator: { patient_ids: [w.patient] } } })
      expect(put).toMatchObject({ status: 422, body: { errors: { patient_ids: ["must exist"] } } })
      const [links] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM collaborator_patients WHERE patient_id = ${w.patient}`
      expect(links!.n).toBe(1)
      // The primary provider links their patient.
      expect((yield* request("POST", "/v1/collaborators", { token: w.primary.token, body: body([w.patient]) })).status).toBe(201)
    }))

  it.effect("videos: the patients of the care relationships are readable; others open with break-glass; naming them is `must exist`", () =>
    Effect.gen(function*() {
      const w = yield* world
      const made = yield* request("POST", "/v1/clinic/videos", {
        token: w.admin,
        body: { video: { title: "Session", category: "therapy_session", patient_id: w.patient } }
      })
      expect(made.status).toBe(201)
      const video = (made.body as { video: { id: number } }).video.id
      expect((yield* get(w.colleague.token, `/v1/clinic/videos/${video}`)).status).toBe(200)
      expect(idsOf((yield* get(w.colleague.token, "/v1/clinic/videos?page_size=100")).body, "videos")).toContain(video)
      expect((yield* get(w.outsider.token, `/v1/clinic/videos/${video}`)).status).toBe(403)
      expect(idsOf((yield* get(w.outsider.token, "/v1/clinic/videos?page_size=100")).body, "videos")).not.toContain(video)
      expect((yield* get(w.outsider.token, `/v1/clinic/videos/${video}`, reason)).status).toBe(200)
      const named = yield* request("POST", "/v1/clinic/videos", {
        token: w.outsider.token,
        body: { video: { title: "Session", category: "therapy_session", patient_id: w.patient } }
      })
      expect(named).toMatchObject({ status: 422, body: { errors: { patient_id: ["must exist"] } } })
      const mine = yield* request("POST", "/v1/clinic/videos", {
        token: w.colleague.token,
        body: { video: { title: "Session", category: "therapy_session", patient_id: w.patient } }
      })
      expect(mine.status).toBe(201)
    }))

  it.effect("session-note lists of a patient the caller may not see are 404, not an empty list", () =>
    Effect.gen(function*() {
      const w = yield* world
      for (const role of ["support", "billing"] as const) {
        const { token } = yield* signedIn(role)
        expect(yield* get(token, `/v1/clinic/patients/session_notes?patient_id=${w.patient}`)).toMatchObject({ status: 404, body: patientNotFound })
        expect(yield* get(token, `/v1/clinic/patients/session_notes/last?patient_id=${w.patient}`)).toMatchObject({ status: 404, body: patientNotFound })
      }
      expect(yield* get(w.outsider.token, `/v1/clinic/patients/session_notes?patient_id=${w.patient}`)).toMatchObject({ status: 404, body: patientNotFound })
      const own = yield* get(w.primary.token, `/v1/clinic/patients/session_notes?patient_id=${w.patient}`)
      expect(own).toMatchObject({ status: 200, body: { session_notes: [] } })
    }))

  it.effect("prescriptions are written only for patients the prescriber may see", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const w = yield* world
      const [medication] = yield* sql<{ id: number }>`SELECT id FROM medications WHERE active ORDER BY id LIMIT 1`
      const prescription = { patient_id: w.patient, medication_id: medication!.id, dosage: "5 mg", frequency: "once daily", quantity: 30, prescription_date: "2026-01-05" }
      const refused = yield* request("POST", "/v1/prescriptions", { token: w.outsider.token, body: { prescription } })
      expect(refused).toMatchObject({ status: 422, body: { errors: { patient_id: ["must exist"] } } })
      const [none] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM prescriptions WHERE patient_id = ${w.patient}`
      expect(none!.n).toBe(0)
      expect((yield* request("POST", "/v1/prescriptions", { token: w.outsider.token, headers: reason, body: { prescription } })).status).toBe(201)
      expect((yield* request("POST", "/v1/prescriptions", { token: w.colleague.token, body: { prescription } })).status).toBe(201)
    }))
})
