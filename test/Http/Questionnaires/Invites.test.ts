/** Questionnaire invites: the emailed single-use link, its form and its one submission. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { QuestionnaireMail } from "../../../src/Services/Questionnaires/QuestionnaireMail.js"
import { questionnaireInviteTask } from "../../../src/Services/Questionnaires/Tasks.js"
import { PatientId, QuestionnaireId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { iso } from "../Patients/helpers.js"
import { allAnswered, family, instrument } from "./helpers.js"

const invite = (token: string, body: Record<string, unknown>) =>
  request("POST", "/v1/questionnaire_invites", { token, body: { questionnaire_invite: body } })

/** An invite through the typed client; the invite as decoded. */
const inviteTyped = (token: string, body: { questionnaire_id: number; patient_id: number; email: string; due_date?: string }) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.questionnaireInvites.create({
      payload: { questionnaire_invite: { ...body, questionnaire_id: QuestionnaireId.make(body.questionnaire_id), patient_id: PatientId.make(body.patient_id) } }
    })).pipe(Effect.map((created) => created.questionnaire_invite))

/** Runs the mail jobs and reads the token of the last link mailed to `email`. */
const tokenMailedTo = (email: string) =>
  Effect.gen(function*() {
    yield* runDueJobs([questionnaireInviteTask]).pipe(Effect.provide(QuestionnaireMail.Default))
    const mails = (yield* (yield* MemoryMailer).sent).filter((m) => m.to.includes(email))
    const match = /\/v1\/questionnaire_invites\/form\?token=([A-Za-z0-9_-]+)/.exec(mails.at(-1)?.text ?? "")
    if (match === null) return yield* Effect.dieMessage(`no invite link mailed to ${email}`)
    return { token: match[1]!, mail: mails.at(-1)!, count: mails.length }
  })

const form = (token: string) => request("GET", `/v1/questionnaire_invites/form?token=${token}`)
const respond = (token: string, responses: ReadonlyArray<unknown>) =>
  request("POST", "/v1/questionnaire_invites/respond", { body: { token, responses } })
const notFound = { status: 404, body: { errors: "Invite not found" } }

layer(TestApp({ publicBaseUrl: "https://api.clinic.test", clinicTimeZone: "America/Los_Angeles" }))("questionnaire invites", (it) => {
  it.effect("staff invite; the mailed link opens the form (no patient data); one submission; reuse is 404", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family({ first_name: "Hidden", last_name: "Person" })
      const gad7 = yield* instrument(staff.token, "gad7")
      const created = yield* invite(staff.token, { questionnaire_id: gad7.id, patient_id: patient, email: "mom@example.test", message: "Before Tuesday" })
      expect(created.status).toBe(201)
      const body = (created.body as { questionnaire_invite: Record<string, any> }).questionnaire_invite
      expect(body).toEqual({
        id: expect.any(Number), questionnaire_id: gad7.id, patient_id: patient, email: "mom@example.test", due_date: null,
        message: "Before Tuesday", status: "sent", expires_at: expect.stringMatching(iso), created_at: expect.stringMatching(iso)
      })
      expect(new Date(body.expires_at).getTime() - new Date(body.created_at).getTime()).toBe(14 * 86_400_000)
      const { token, mail } = yield* tokenMailedTo("mom@example.test")
      expect(mail.text).toContain("https://api.clinic.test/v1/questionnaire_invites/form?token=")
      expect(mail.text).not.toContain("Hidden")
      const opened = yield* form(token)
      expect(opened.status).toBe(200)
      expect(opened.body).toMatchObject({ invite: { due_date: null, message: "Before Tuesday", expires_at: body.expires_at }, questionnaire: { id: gad7.id, slug: "gad7" } })
      expect(JSON.stringify(opened.body)).not.toContain("Hidden")
      expect(JSON.stringify(opened.body)).not.toContain("patient")
      const sql = yield* SqlClient.SqlClient
      const status = () => Effect.map(sql<{ status: string }>`SELECT status FROM questionnaire_invites WHERE id = ${body.id}`, (r) => r[0]!.status)
      expect(yield* status()).toBe("opened")

      // 422s keep the link: an answer that does not fit, an incomplete form.
      const bad = yield* respond(token, [{ question_id: gad7.questions[0]!.id, answer: "Sometimes" }])
      expect(bad).toMatchObject({ status: 422, body: { errors: { "responses[0].answer": ["is not included in the list"] } } })
      const partial = yield* respond(token, [{ question_id: gad7.questions[0]!.id, answer: "Several days" }])
      expect(partial).toMatchObject({ status: 422, body: { errors: { responses: ["must answer every required question"] } } })
      expect(yield* status()).toBe("opened")

      const done = yield* respond(token, allAnswered(gad7, () => 1))
      expect(done.status).toBe(201)
      const receipt = (done.body as { questionnaire_response: { id: number } }).questionnaire_response
      expect(receipt).toEqual({ id: expect.any(Number), status: "submitted", crisis_resources: null })
      expect(yield* status()).toBe("completed")
      expect(yield* respond(token, allAnswered(gad7, () => 1))).toMatchObject(notFound)
      expect(yield* form(token)).toMatchObject(notFound)
      const shown = yield* (yield* clientAs(staff.token)).questionnaireResponses.show({ path: { id: receipt.id } })
      expect(shown).toMatchObject({ questionnaire_response: { patient_id: patient, status: "submitted", score: 7, severity: "mild", submitted_at: expect.any(Date) } })
      expect(yield* form("not-a-token")).toMatchObject(notFound)
    }))

  it.effect("a parent invites for their own patient only; validation: due date, email, questionnaire", () =>
    Effect.gen(function*() {
      const a = yield* family()
      const b = yield* family()
      const phq9 = yield* instrument(a.parent.token, "phq9")
      const own = yield* inviteTyped(a.parent.token, { questionnaire_id: phq9.id, patient_id: a.patient, email: "teen@example.test" })
      expect(own).toMatchObject({ questionnaire_id: phq9.id, patient_id: a.patient, status: "sent" })
      const others = yield* invite(a.parent.token, { questionnaire_id: phq9.id, patient_id: b.patient, email: "teen@example.test" })
      expect(others).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      const past = yield* invite(a.staff.token, { questionnaire_id: phq9.id, patient_id: a.patient, email: "x@example.test", due_date: "2020-01-01" })
      expect(past).toMatchObject({ status: 422, body: { errors: { due_date: ["must be in the future"] } } })
      const far = yield* invite(a.staff.token, { questionnaire_id: phq9.id, patient_id: a.patient, email: "x@example.test", due_date: "2099-01-01" })
      expect(far).toMatchObject({ status: 422, body: { errors: { due_date: ["must be within 30 days"] } } })
      const email = yield* invite(a.staff.token, { questionnaire_id: 999999, patient_id: a.patient, email: "not an email" })
      expect(email).toMatchObject({ status: 422, body: { errors: { email: ["invalid format"] } } })
      const unknown = yield* invite(a.staff.token, { questionnaire_id: 999999, patient_id: a.patient, email: "x@example.test" })
      expect(unknown).toMatchObject({ status: 422, body: { errors: { questionnaire_id: ["must exist"] } } })
    }))

  it.effect("due date: the link works until the end of that day on the clinic's clock", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family()
      const phq9 = yield* instrument(staff.token, "phq9")
      const now = new Date(yield* TestClock.currentTimeMillis)
      const due = new Date(now.getTime() + 3 * 86_400_000).toLocaleDateString("en-CA", { timeZone: "America/Los_Angeles" })
      const body = yield* inviteTyped(staff.token, { questionnaire_id: phq9.id, patient_id: patient, email: "due@example.test", due_date: due })
      expect(body.due_date).toBe(due)
      const expires = new Date(body.expires_at)
      expect(expires.toLocaleString("en-US", { timeZone: "America/Los_Angeles", hourCycle: "h23" })).toMatch(/, 00:00:00$/)
      expect(expires.getTime() - new Date(`${due}T00:00:00Z`).getTime()).toBeGreaterThan(86_400_000)
    }))

  it.effect("re-inviting revokes the old link; concurrent submissions give one 201", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family()
      const phq9 = yield* instrument(staff.token, "phq9")
      yield* inviteTyped(staff.token, { questionnaire_id: phq9.id, patient_id: patient, email: "first@example.test" })
      const first = yield* tokenMailedTo("first@example.test")
      yield* inviteTyped(staff.token, { questionnaire_id: phq9.id, patient_id: patient, email: "second@example.test" })
      const second = yield* tokenMailedTo("second@example.test")
      expect(yield* form(first.token)).toMatchObject(notFound)
      const sql = yield* SqlClient.SqlClient
      const statuses = yield* sql<{ status: string }>`SELECT status FROM questionnaire_invites WHERE patient_id = ${patient} ORDER BY id`
      expect(statuses.map((s) => s.status)).toEqual(["revoked", "sent"])
      const answers = allAnswered(phq9, () => 0)
      const results = yield* Effect.all(Array.from({ length: 6 }, () => respond(second.token, answers)), { concurrency: "unbounded" })
      expect(results.map((r) => r.status).sort()).toEqual([201, 404, 404, 404, 404, 404])
      const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM questionnaire_responses WHERE patient_id = ${patient}`
      expect(count!.count).toBe(1)
    }))

  it.effect("an invite expires after 14 days (TestClock); then 30 requests a minute per address", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family()
      const gad7 = yield* instrument(staff.token, "gad7")
      yield* inviteTyped(staff.token, { questionnaire_id: gad7.id, patient_id: patient, email: "late@example.test" })
      const { token } = yield* tokenMailedTo("late@example.test")
      yield* TestClock.adjust(Duration.days(14))
      expect(yield* form(token)).toMatchObject(notFound)
      expect(yield* respond(token, allAnswered(gad7, () => 0))).toMatchObject(notFound)

      yield* TestClock.adjust(Duration.minutes(1))
      for (let i = 0; i < 30; i++) expect((yield* form(`unknown-${i}`)).status).toBe(404)
      const limited = yield* form("unknown-31")
      expect(limited.status).toBe(429)
      expect(limited.headers["retry-after"]).toMatch(/^\d+$/)
      expect((yield* respond("unknown", [])).status).toBe(429)
    }))
})
