import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertAppointment } from "../Billing/helpers.js"
import { password } from "../Providers/helpers.js"
import {
  answers, assessmentJobs, auditActions, cast, createCollaborator, forgetThrottles, insertPatient, invalidLinkBody,
  issueToken, mailedToken, person, runMailJobs, tokenPath
} from "./helpers.js"
import { signedIn } from "../Patients/helpers.js"

const submitPath = "/v1/collaborator_assessments"
const formPath = (token: string) => `/v1/collaborator_assessments/form?token=${encodeURIComponent(token)}`
type Assessment = { id: number; status: string; total_score: number | null; interpretation: string | null } & Record<string, unknown>
const assessmentOf = (body: unknown) => (body as { collaborator_assessment: Assessment }).collaborator_assessment
const submit = (token: string, responses: unknown, extra: Record<string, unknown> = {}) =>
  request("POST", submitPath, { body: { token, collaborator_assessment: { responses, ...extra } } })
const goodSocial = answers.social_skills(["Often", "Sometimes", "Often", "Rarely", "Almost always"])

layer(TestApp())("collaborator assessments", (it) => {
  it.effect("the link flow: mailed token, form, a 422 keeps it, submit, reuse 401, mismatch 403", () =>
    Effect.gen(function*() {
      const { ownerParent, patientId, primary } = yield* cast
      yield* forgetThrottles
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId], email: "teacher.flow@school.test" })
      const issuedResponse = yield* request("GET", tokenPath(collaborator.id, patientId, "social_skills", true), { token: ownerParent.token })
      expect(issuedResponse.status).toBe(200)
      const issued = issuedResponse.body as { token: string; expires_at: string; assessment_url: string }
      expect(Object.keys(issued).sort()).toEqual(["assessment_url", "expires_at", "token"])
      expect(issued.assessment_url).toBe(`http://localhost/v1/collaborator_assessments/form?token=${issued.token}`)
      expect(Date.parse(issued.expires_at) - Date.now()).toBeGreaterThan(167 * 3_600_000)
      // The queue row holds the token sealed only.
      const sql = yield* SqlClient.SqlClient
      const stored = yield* sql<{ text: string }>`SELECT coalesce(string_agg(payload::text, ''), '') AS text FROM graphile_worker._private_jobs`.pipe(Effect.orDie)
      expect(stored[0]!.text).toContain("sealed_token")
      expect(stored[0]!.text).not.toContain(issued.token)
      yield* runMailJobs
      const token = yield* mailedToken("teacher.flow@school.test")
      expect(token).toBe(issued.token)
      const mail = (yield* (yield* MemoryMailer).sent).find((m) => m.to.includes("teacher.flow@school.test"))!
      expect(mail.text).toContain("Robin")
      expect(mail.text).not.toContain("Child")

      // Opening the form is audited once: the raw request is the only one.
      const form = yield* request("GET", formPath(token))
      expect(form.status).toBe(200)
      const formBody = form.body as { assessment: Record<string, unknown>; questions: Array<{ id: string; options: Array<{ label: string }> }> }
      expect(formBody.assessment).toEqual({
        assessment_type: "social_skills", expires_at: issued.expires_at,
        collaborator: { first_name: "Jordan", last_name: "Rivera" }, patient: { first_name: "Robin" }
      })
      expect(formBody.questions.map((q) => q.id)).toEqual(["starts_conversations", "takes_turns", "cooperates", "resolves_conflict", "empathy", "comments"])

      const bad = yield* submit(token, [...goodSocial.slice(0, 1), { question_id: "takes_turns", answer: "Sometimes-ish" }])
      expect(bad).toMatchObject({ status: 422, body: { errors: { "responses[1].answer": ["is not included in the list"] } } })
      const incomplete = yield* submit(token, goodSocial.slice(0, 4))
      expect(incomplete.body).toEqual({ errors: { responses: ["is incomplete"] } })
      const mismatch = yield* submit(token, goodSocial, { patient_id: patientId + 1 })
      expect(mismatch).toMatchObject({ status: 403, body: { errors: "This link is for a different assessment" } })

      const done = yield* submit(token, [...goodSocial, { question_id: "comments", answer: "Kind to peers" }], { collaborator_id: collaborator.id, assessment_type: "social_skills" })
      expect(done.status).toBe(201)
      const assessment = assessmentOf(done.body)
      expect(Object.keys(assessment).sort()).toEqual([
        "assessment_type", "collaborator_id", "completed_at", "created_at", "id", "interpretation", "patient_id", "responses", "status", "total_score"
      ])
      expect(assessment).toMatchObject({ status: "completed", collaborator_id: collaborator.id, patient_id: patientId, total_score: 13, interpretation: "developing" })
      expect((assessment.responses as Array<unknown>)[0]).toEqual({ question_id: "starts_conversations", question_text: "Starts conversations", answer: "Often", score: 3 })
      expect((assessment.responses as Array<unknown>)[5]).toEqual({ question_id: "comments", question_text: "Other observations", answer: "Kind to peers", score: null })

      expect(yield* submit(token, goodSocial)).toMatchObject({ status: 401, body: invalidLinkBody })
      expect(yield* request("GET", formPath(token))).toMatchObject({ status: 401, body: invalidLinkBody })
      expect(yield* request("POST", "/v1/collaborator_assessments/decline", { body: { token } })).toMatchObject({ status: 401, body: invalidLinkBody })
      expect(yield* submit("not-a-real-token-0000000000", goodSocial)).toMatchObject({ status: 401, body: invalidLinkBody })
      // The first completed assessment makes the collaborator active.
      expect((yield* request("GET", `/v1/collaborators/${collaborator.id}`, { token: ownerParent.token })).body).toMatchObject({ collaborator: { status: "active" } })
      // Readers: owner, primary provider, parent; others 404.
      for (const reader of [ownerParent.token, primary.token]) {
        expect((yield* request("GET", `${submitPath}/${assessment.id}`, { token: reader })).body).toEqual({ collaborator_assessment: assessment })
      }
      expect(yield* auditActions("collaborator_assessment", assessment.id)).toEqual([
        "collaborator_assessment.token_issued", "collaborator_assessment.form_opened", "collaborator_assessment.submitted"
      ])
    }))

  it.effect("links: a new one revokes the open one; expiry with the TestClock and the hourly job; suspension; revocation", () =>
    Effect.gen(function*() {
      const { ownerParent, patientId } = yield* cast
      yield* forgetThrottles
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const first = yield* issueToken(ownerParent.token, collaborator.id, patientId, "social_skills")
      const second = yield* issueToken(ownerParent.token, collaborator.id, patientId, "social_skills")
      expect(yield* request("GET", formPath(first.token))).toMatchObject({ status: 401, body: invalidLinkBody })
      expect((yield* request("GET", formPath(second.token))).status).toBe(200)
      const pending = yield* request("GET", `${submitPath}?collaborator_id=${collaborator.id}`, { token: ownerParent.token })
      expect(pending.body).toMatchObject({ collaborator_assessments: [{ status: "pending", assessment_type: "social_skills", responses: [], total_score: null }], pagination: { total_count: 1 } })

      yield* TestClock.adjust(Duration.hours(169))
      expect(yield* submit(second.token, goodSocial)).toMatchObject({ status: 401, body: invalidLinkBody })
      yield* (yield* assessmentJobs).expire
      // Sessions end within a day: sign in again.
      const owner = { token: yield* signIn(ownerParent.email, password) }
      const ownerAdmin = yield* signIn()
      const expired = yield* request("GET", `${submitPath}?collaborator_id=${collaborator.id}&status=expired`, { token: owner.token })
      expect(expired.body).toMatchObject({ collaborator_assessments: [{ status: "expired" }] })
      const expiredList = yield* (yield* clientAs(owner.token)).collaboratorAssessments.list({ urlParams: { collaborator_id: collaborator.id, status: "expired" } })
      const id = expiredList.collaborator_assessments[0]!.id
      expect(yield* auditActions("collaborator_assessment", id)).toContain("collaborator_assessment.expired")

      // Suspension revokes the open link (401) and cancels the pending assessment; a new one is refused.
      const third = yield* issueToken(owner.token, collaborator.id, patientId, "progress_report")
      expect((yield* request("PUT", `/v1/collaborators/${collaborator.id}`, { token: ownerAdmin, body: { collaborator: { status: "suspended" } } })).status).toBe(200)
      expect(yield* submit(third.token, [])).toMatchObject({ status: 401, body: invalidLinkBody })
      expect(yield* request("GET", tokenPath(collaborator.id, patientId, "progress_report"), { token: owner.token }))
        .toMatchObject({ status: 422, body: { errors: { collaborator_id: ["is not active"] } } })
      expect((yield* request("GET", `${submitPath}?collaborator_id=${collaborator.id}&status=cancelled`, { token: owner.token })).body)
        .toMatchObject({ pagination: { total_count: 1 } })

      // Deleting revokes too; the assessments stay readable.
      const other = yield* createCollaborator(owner.token, { patient_ids: [patientId] })
      const fourth = yield* issueToken(owner.token, other.id, patientId, "treatment_feedback")
      expect((yield* request("DELETE", `/v1/collaborators/${other.id}`, { token: owner.token })).status).toBe(204)
      expect(yield* request("GET", formPath(fourth.token))).toMatchObject({ status: 401, body: invalidLinkBody })
      expect((yield* request("GET", `${submitPath}?collaborator_id=${other.id}`, { token: owner.token })).body)
        .toMatchObject({ collaborator_assessments: [{ status: "cancelled" }] })
    }))

  it.effect("token requests: 404s, not linked, not active, query 422", () =>
    Effect.gen(function*() {
      const { ownerParent, otherParent, patientId } = yield* cast
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const unlinkedPatient = yield* insertPatient({ userId: ownerParent.id })
      const get = (collaboratorId: number, patient: number, token = ownerParent.token) => request("GET", tokenPath(collaboratorId, patient, "social_skills"), { token })
      expect(yield* get(999_999, patientId)).toMatchObject({ status: 404, body: { errors: "Collaborator not found" } })
      expect(yield* get(collaborator.id, patientId, otherParent.token)).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* get(collaborator.id, unlinkedPatient)).toMatchObject({ status: 422, body: { errors: { patient_id: ["is not linked to this collaborator"] } } })
      const missing = yield* request("GET", "/v1/collaborator_assessments/token?assessment_type=poem", { token: ownerParent.token })
      expect(missing).toMatchObject({ status: 422, body: { errors: { collaborator_id: [expect.any(String)], patient_id: [expect.any(String)], assessment_type: ["is not included in the list"] } } })
    }))

  it.effect("decline: the pending collaborator declines, the token is used, open requests are cancelled", () =>
    Effect.gen(function*() {
      const { ownerParent, patientId } = yield* cast
      yield* forgetThrottles
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const one = yield* issueToken(ownerParent.token, collaborator.id, patientId, "social_skills")
      const two = yield* issueToken(ownerParent.token, collaborator.id, patientId, "academic_performance")
      const declined = yield* request("POST", "/v1/collaborator_assessments/decline", { body: { token: one.token } })
      expect(declined).toMatchObject({ status: 200, body: { declined: true, assessment: { assessment_type: "social_skills", status: "cancelled" } } })
      expect((yield* request("GET", `/v1/collaborators/${collaborator.id}`, { token: ownerParent.token })).body).toMatchObject({ collaborator: { status: "declined" } })
      expect(yield* request("GET", formPath(two.token))).toMatchObject({ status: 401, body: invalidLinkBody })
      expect(yield* request("POST", "/v1/collaborator_assessments/decline", { body: { token: one.token } })).toMatchObject({ status: 401 })
    }))

  it.effect("20 concurrent submits of one link: exactly one 201", () =>
    Effect.gen(function*() {
      const { ownerParent, patientId } = yield* cast
      yield* forgetThrottles
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const { token } = yield* issueToken(ownerParent.token, collaborator.id, patientId, "social_skills")
      const statuses = yield* Effect.all(Array.from({ length: 20 }, () => Effect.map(submit(token, goodSocial), (r) => r.status)), { concurrency: "unbounded" })
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      expect(statuses.filter((s) => s !== 201).every((s) => s === 401)).toBe(true)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM collaborator_assessments WHERE collaborator_id = ${collaborator.id} AND status = 'completed'`.pipe(Effect.orDie)
      expect(rows[0]!.n).toBe(1)
    }))

  it.effect("public endpoints: 20 a minute per address, then 429 with Retry-After", () =>
    Effect.gen(function*() {
      yield* forgetThrottles
      const statuses = yield* Effect.forEach(Array.from({ length: 21 }), () => Effect.map(request("GET", formPath("unknown-token-000000000000")), (r) => r))
      expect(statuses.slice(0, 20).every((r) => r.status === 401)).toBe(true)
      expect(statuses[20]!.status).toBe(429)
      expect(Number(statuses[20]!.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      yield* forgetThrottles
    }))

  it.effect("phoned answers with a session: completes the pending one and revokes its link; access and 422s", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, otherParent, primary, otherProvider, patientId } = yield* cast
      yield* forgetThrottles
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const body = (extra: Record<string, unknown> = {}) => ({
        collaborator_assessment: { collaborator_id: collaborator.id, patient_id: patientId, assessment_type: "social_skills", responses: goodSocial, ...extra }
      })
      const { token } = yield* issueToken(ownerParent.token, collaborator.id, patientId, "social_skills")
      const byProvider = yield* request("POST", submitPath, { token: primary.token, body: body() })
      expect(byProvider.status).toBe(201)
      expect(yield* submit(token, goodSocial)).toMatchObject({ status: 401 })
      const listed = yield* (yield* clientAs(ownerParent.token)).collaboratorAssessments.list({ urlParams: { patient_id: patientId } })
      expect(listed.collaborator_assessments.map((a) => a.id)).toEqual([assessmentOf(byProvider.body).id])
      // Without a pending one: a new completed assessment.
      expect((yield* request("POST", submitPath, { token: admin, body: body() })).status).toBe(201)
      expect((yield* request("POST", submitPath, { token: ownerParent.token, body: body() })).status).toBe(201)
      // Another provider: the patient is not theirs (404) until an appointment makes a care relationship; then they enter answers.
      expect(yield* request("POST", submitPath, { token: otherProvider.token, body: body() })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      yield* insertAppointment(patientId, otherProvider.providerId!)
      expect((yield* request("POST", submitPath, { token: otherProvider.token, body: body() })).status).toBe(201)
      // Assessments are clinical content: front desk gets the answer of an unknown patient.
      const frontDesk = yield* signedIn("support")
      expect(yield* request("POST", submitPath, { token: frontDesk.token, body: body() })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* request("POST", submitPath, { token: otherParent.token, body: body() })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* request("POST", submitPath, { body: body() })).toMatchObject({ status: 401 })
      const blank = yield* request("POST", submitPath, { token: admin, body: { collaborator_assessment: { responses: goodSocial } } })
      expect(blank.body).toEqual({ errors: { collaborator_id: ["can't be blank"], patient_id: ["can't be blank"], assessment_type: ["can't be blank"] } })
      // Other readers: another family's parent and a provider without a care relationship see nothing; one with it reads.
      const id = assessmentOf(byProvider.body).id
      const stranger = yield* person("provider")
      expect(yield* request("GET", `${submitPath}/${id}`, { token: otherParent.token })).toMatchObject({ status: 404, body: { errors: "Collaborator assessment not found" } })
      expect(yield* request("GET", `${submitPath}/${id}`, { token: stranger.token })).toMatchObject({ status: 404 })
      expect((yield* request("GET", submitPath, { token: stranger.token })).body).toMatchObject({ collaborator_assessments: [] })
      expect((yield* request("GET", `${submitPath}/${id}`, { token: otherProvider.token })).status).toBe(200)
      expect((yield* request("GET", `${submitPath}/${id}`, { token: admin })).status).toBe(200)
    }))
})
