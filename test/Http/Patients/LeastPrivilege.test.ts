/**
 * Least privilege for health data (docs/spec-decisions.md "Who sees which patient"): providers see
 * the patients of their care relationships, supervisors also their supervisees', front desk and
 * billing no clinical content, admins everything; break-glass with a reason is allowed, audited and
 * listed to admins.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import {
  insertAppointment, insertCaseLoad, insertFirstPieceAssignment, insertPatientDocument, insertQuestionnaireResponse, insertTreatmentPlan
} from "../../support/fixtures.js"
import { insertUser, makeProvider, password } from "../Providers/helpers.js"
import { newPatient, patientNotFound, signedIn } from "./helpers.js"

let n = 0
const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000)

/** A provider (or supervisor) profile with a signed-in user. */
const clinician = (admin: string, role: "provider" | "supervisor" = "provider") =>
  Effect.gen(function*() {
    const email = `clinician${++n}.${Date.now()}@least.test`
    const profile = yield* makeProvider(admin, role, { email })
    return { ...profile, token: yield* signIn(email, password) }
  })

const world = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const admin = yield* signIn()
  const a = yield* clinician(admin)
  const b = yield* clinician(admin)
  const supervisor = yield* clinician(admin, "supervisor")
  yield* sql`UPDATE providers SET supervisor_id = ${supervisor.id} WHERE id = ${a.id}`
  const parent = yield* insertUser({ role: "parent", email: `parent${++n}.${Date.now()}@least.test` })
  const patientA = yield* newPatient(admin, { provider_id: a.id })
  const patientB = yield* newPatient(admin, { provider_id: b.id, user_id: parent })
  const document = yield* insertPatientDocument({ patientId: patientB, name: "assessment.txt", clinical: true })
  const card = yield* insertPatientDocument({ patientId: patientB, name: "insurance-card.txt", clinical: false })
  const appointment = yield* insertAppointment({ patientId: patientB, providerId: b.id, scheduledAt: daysFromNow(3), minutes: 50, status: "scheduled" })
  const response = yield* insertQuestionnaireResponse({ patientId: patientB, slug: "gad7", status: "in_progress" })
  const plan = yield* insertTreatmentPlan({ patientId: patientB, title: "Plan", status: "active" })
  const piece = yield* insertFirstPieceAssignment({ userId: parent, patientId: patientB })
  return {
    admin, a, b, supervisor, parent, patientA, patientB, document, card, appointment: appointment.id, response, plan, piece
  }
})

/** A scheduled 50-minute visit `days` from now (negative: past). */
const visit = (patientId: number, providerId: number, days: number) =>
  insertAppointment({ patientId, providerId, scheduledAt: daysFromNow(days), minutes: 50, status: "scheduled" })

const get = (token: string, path: string, headers: Record<string, string> = {}) => request("GET", path, { token, headers })

layer(TestApp())("least privilege for health data", (it) => {
  it.effect("provider A can neither read nor change provider B's patient", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const w = yield* world
      const token = w.a.token
      const client = yield* clientAs(token)
      const p = w.patientB
      // A's own patient, and B on theirs: the control.
      expect((yield* get(token, `/v1/clinic/patients/${w.patientA}`)).status).toBe(200)
      expect((yield* get(w.b.token, `/v1/clinic/patients/${p}`)).status).toBe(200)
      const refusals = [
        yield* get(token, `/v1/clinic/patients/${p}`),
        yield* request("PUT", `/v1/clinic/patients/${p}`, { token, body: { patient: { first_name: "Changed" } } }),
        yield* get(token, `/v1/clinic/patients/appointments?patient_id=${p}`),
        yield* get(token, `/v1/clinic/patients/questionnaires?patient_id=${p}`),
        yield* get(token, `/v1/content/user_pieces?patient_id=${p}`),
        yield* get(token, `/v1/clinic/patients/${p}/medication_history`),
        yield* get(token, `/v1/clinic/patients/${p}/documents`),
        yield* request("DELETE", `/v1/clinic/patients/${p}/documents/${w.document}`, { token }),
        yield* get(token, `/v1/clinic/patients/${p}/coverage`),
        yield* get(token, `/v1/clinic/patients/treatment_plans?patient_id=${p}`)
      ]
      expect(refusals.map((r) => [r.status, r.body])).toEqual(refusals.map(() => [404, patientNotFound]))
      expect((yield* get(token, `/v1/clinic/patients/appointments/${w.appointment}`)).status).toBe(404)
      expect((yield* get(token, `/v1/clinic/patients/questionnaires/${w.response}`)).status).toBe(404)
      expect((yield* get(token, `/v1/clinic/patients/treatment_plans/${w.plan}`)).status).toBe(404)
      if (w.piece !== undefined) {
        expect((yield* request("PUT", `/v1/content/user_pieces/${w.piece}`, { token, body: { user_piece: { notes: "x" } } })).status).toBe(404)
        const listed = yield* client.userPieces.list({ urlParams: {} })
        expect(listed.user_pieces.map((u) => u.id)).not.toContain(w.piece)
      }
      const listed = yield* client.clinicPatients.list({ urlParams: { page_size: 100 } })
      expect(listed.patients.map((x) => x.id)).toEqual([w.patientA])
      const [kept] = yield* sql<{ first_name: string; documents: number }>`SELECT first_name,
        (SELECT count(*)::int FROM patient_documents WHERE patient_id = ${p}) AS documents FROM patients WHERE id = ${p}`
      expect(kept).toEqual({ first_name: "Pat", documents: 2 })
    }))

  it.effect("an appointment (past or within 90 days) or a case-load role grants access; a later appointment does not", () =>
    Effect.gen(function*() {
      const w = yield* world
      const other = yield* newPatient(w.admin)
      const path = `/v1/clinic/patients/${other}`
      yield* visit(other, w.a.id, 120)
      expect((yield* get(w.a.token, path)).status).toBe(404)
      yield* visit(other, w.a.id, -200)
      expect((yield* get(w.a.token, path)).status).toBe(200)
      // A case-load role: B as the iLCM, then as the ECM provider of another patient.
      expect((yield* get(w.b.token, path)).status).toBe(404)
      yield* insertCaseLoad({ patientId: other, ilcmUserId: w.b.userId })
      expect((yield* get(w.b.token, path)).status).toBe(200)
      const third = yield* newPatient(w.admin)
      yield* insertCaseLoad({ patientId: third, providerId: w.b.id })
      expect((yield* get(w.b.token, `/v1/clinic/patients/${third}/medication_history`)).status).toBe(200)
    }))

  it.effect("a supervisor sees their supervisees' patients, not others'", () =>
    Effect.gen(function*() {
      const w = yield* world
      expect((yield* get(w.supervisor.token, `/v1/clinic/patients/${w.patientA}`)).status).toBe(200)
      expect((yield* get(w.supervisor.token, `/v1/clinic/patients/${w.patientA}/documents`)).status).toBe(200)
      expect((yield* get(w.supervisor.token, `/v1/clinic/patients/${w.patientB}`)).status).toBe(404)
    }))

  it.effect("front desk and billing see demographics, scheduling and billing, no clinical content", () =>
    Effect.gen(function*() {
      const w = yield* world
      for (const role of ["support", "billing"] as const) {
        const { token } = yield* signedIn(role)
        const p = w.patientB
        expect((yield* get(token, `/v1/clinic/patients/${p}`)).status).toBe(200)
        expect((yield* get(token, `/v1/clinic/patients/appointments?patient_id=${p}`)).status).toBe(200)
        expect((yield* get(token, `/v1/clinic/patients/appointments/${w.appointment}`)).status).toBe(200)
        expect((yield* get(token, `/v1/clinic/patients/${p}/coverage`)).body).toEqual({ errors: "Coverage not found" })
        const documents = yield* (yield* clientAs(token)).patientDocuments.list({ path: { patient_id: PatientId.make(p) }, urlParams: {} })
        expect(documents.documents.map((d) => d.id)).toEqual([w.card])
        expect((yield* request("DELETE", `/v1/clinic/patients/${p}/documents/${w.document}`, { token })).status).toBe(404)
        // Clinical content, with a reason or not.
        for (const headers of [{}, { "X-Access-Reason": "front desk asked" }]) {
          expect((yield* get(token, `/v1/clinic/patients/${p}/medication_history`, headers)).body).toEqual(patientNotFound)
          expect((yield* get(token, `/v1/clinic/patients/questionnaires?patient_id=${p}`, headers)).body).toEqual(patientNotFound)
          expect((yield* get(token, `/v1/clinic/patients/questionnaires/${w.response}`, headers)).status).toBe(404)
          expect((yield* get(token, `/v1/clinic/patients/treatment_plans/${w.plan}`, headers)).status).toBe(404)
        }
        const upload = yield* request("POST", `/v1/clinic/patients/${p}/documents`, {
          token,
          body: { document: { name: "x.txt", file: `data:text/plain;base64,${Buffer.from("x").toString("base64")}`, clinical: true } }
        })
        expect(upload).toMatchObject({ status: 422, body: { errors: { clinical: ["can only be set by clinical staff"] } } })
      }
      // Admins see everything.
      expect((yield* get(w.admin, `/v1/clinic/patients/${w.patientB}/medication_history`)).status).toBe(200)
      const all = yield* (yield* clientAs(w.admin)).patientDocuments.list({ path: { patient_id: PatientId.make(w.patientB) }, urlParams: {} })
      expect(all.documents).toHaveLength(2)
    }))

  it.effect("break-glass: a reason opens the patient, is audited and listed to admins; a blank one does not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const w = yield* world
      const path = `/v1/clinic/patients/${w.patientB}/documents`
      expect((yield* get(w.a.token, path, { "X-Access-Reason": "   " })).status).toBe(404)
      expect((yield* get(w.a.token, path, { "X-Access-Reason": "x".repeat(501) })).status).toBe(404)
      const opened = yield* get(w.a.token, `${path}?page=1`, { "X-Access-Reason": "  Covering for Dr B during leave " })
      expect(opened.status).toBe(200)
      const audit = yield* sql<{ action: string }>`SELECT action FROM audit_events
        WHERE actor_id = ${w.a.userId} AND target_type = 'patient' AND target_id = ${w.patientB}`
      expect(audit.map((e) => e.action)).toEqual(["patient.break_glass"])
      const reviews = yield* get(w.admin, `/v1/admin/clinic/access_reviews?patient_id=${w.patientB}`)
      expect(reviews.status).toBe(200)
      expect(reviews.body).toEqual({
        access_reviews: [{
          id: expect.any(Number), audit_event_id: expect.any(Number),
          user: { id: w.a.userId, first_name: expect.any(String), last_name: expect.any(String), role: "provider" },
          patient_id: w.patientB, reason: "Covering for Dr B during leave", request_method: "GET", request_path: path,
          created_at: expect.stringMatching(/Z$/)
        }],
        pagination: { current_page: 1, per_page: 25, total_pages: 1, total_count: 1 }
      })
      expect((yield* get(w.a.token, "/v1/admin/clinic/access_reviews")).status).toBe(403)
      // Within their care relationships nothing is recorded, reason or not.
      yield* get(w.b.token, path, { "X-Access-Reason": "my patient" })
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM break_glass_accesses WHERE patient_id = ${w.patientB}`
      expect(count!.n).toBe(1)
    }))
})
