/** Questionnaire catalogue, responses, the status machine, the parent rule and the self-harm alert. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { QuestionnaireMail } from "../../../src/Services/Questionnaires/QuestionnaireMail.js"
import { questionnaireAlertTask } from "../../../src/Services/Questionnaires/Tasks.js"
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Catalogue, seedsDir } from "../../../src/Services/Questionnaires/Catalogue.js"
import { PatientId, QuestionId, QuestionnaireId } from "../../../src/Domain/Ids.js"
import { clientAs, request, tempDir, TestApp } from "../../support/app.js"
import { adminToken, iso, signedIn } from "../Patients/helpers.js"
import { makeProvider, auditActions } from "../Providers/helpers.js"
import { allAnswered, auditCount, family, instrument, responseOf } from "./helpers.js"

const post = (token: string, body: Record<string, unknown>) =>
  request("POST", "/v1/questionnaire_responses", { token, body: { questionnaire_response: body } })
const put = (token: string, id: number, body: Record<string, unknown>) =>
  request("PUT", `/v1/questionnaire_responses/${id}`, { token, body: { questionnaire_response: body } })

type Answer = { readonly question_id: number; readonly answer: string | null }
const answers = (responses: ReadonlyArray<Answer>) => responses.map((r) => ({ question_id: QuestionId.make(r.question_id), answer: r.answer }))

/** A response started through the typed client; the response as decoded. */
const start = (token: string, body: { questionnaire_id: number; patient_id: number; responses: ReadonlyArray<Answer> }) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.questionnaireResponses.create({
      payload: {
        questionnaire_response: {
          questionnaire_id: QuestionnaireId.make(body.questionnaire_id), patient_id: PatientId.make(body.patient_id), responses: answers(body.responses)
        }
      }
    })).pipe(Effect.map((created) => created.questionnaire_response))

/** A response updated through the typed client; the response as decoded. */
const update = (
  token: string,
  id: number,
  body: { responses?: ReadonlyArray<Answer>; status?: "submitted" | "reviewed"; review_notes?: string }
) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.questionnaireResponses.update({
      path: { id },
      payload: { questionnaire_response: { ...body, responses: body.responses === undefined ? undefined : answers(body.responses) } }
    })).pipe(Effect.map((updated) => updated.questionnaire_response))

layer(TestApp({ clinicalAlertEmail: "alerts@clinic.test", publicBaseUrl: "https://api.clinic.test" }))("questionnaires", (it) => {
  it.effect("the catalogue: seeded instruments with attribution, filters, pagination, 404", () =>
    Effect.gen(function*() {
      const { parent } = yield* family()
      const listed = yield* request("GET", "/v1/questionnaires", { token: parent.token })
      expect(listed.status).toBe(200)
      const body = listed.body as { questionnaires: Array<Record<string, any>>; pagination: unknown }
      expect(body.questionnaires.map((q) => q.slug).sort()).toEqual(["gad7", "phq9", "phqa", "psc17"])
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 4, per_page: 25 })
      const phq9 = body.questionnaires.find((q) => q.slug === "phq9")!
      expect(phq9).toMatchObject({
        version: 1, category: "screening", age_group: "adult", target_audience: "adults", active: true,
        attribution: expect.stringContaining("Pfizer"), created_at: expect.stringMatching(iso)
      })
      expect(phq9.questions).toHaveLength(10)
      expect(phq9.questions[8]).toMatchObject({
        key: "phq9_9", position: 9, type: "scale", required: true,
        text: "Thoughts that you would be better off dead or of hurting yourself in some way",
        options: ["Not at all", "Several days", "More than half the days", "Nearly every day"]
      })
      expect(phq9.questions[9]).toMatchObject({ key: "phq9_10", required: false })
      const client = yield* clientAs(parent.token)
      const teens = yield* client.questionnaires.list({ urlParams: { age_group: "teen", category: "screening" } })
      expect(teens.questionnaires.map((q) => q.slug)).toEqual(["phqa"])
      const inactive = yield* client.questionnaires.list({ urlParams: { active: false } })
      expect(inactive.questionnaires).toEqual([])
      const paged = yield* request("GET", "/v1/questionnaires?page_size=3&page=2", { token: parent.token })
      expect(paged.body).toMatchObject({ pagination: { current_page: 2, total_pages: 2, total_count: 4, per_page: 3 } })
      const shown = yield* request("GET", `/v1/questionnaires/${phq9.id}`, { token: parent.token })
      expect(shown.status).toBe(200)
      expect(shown.body).toEqual({ questionnaire: phq9 })
      const typed = yield* client.questionnaires.show({ path: { id: QuestionnaireId.make(phq9.id) } })
      expect(typed.questionnaire).toMatchObject({ id: phq9.id, slug: "phq9", version: 1, questions: phq9.questions })
      const missing = yield* request("GET", "/v1/questionnaires/999999", { token: parent.token })
      expect(missing).toMatchObject({ status: 404, body: { errors: "Questionnaire not found" } })
      const bad = yield* request("GET", "/v1/questionnaires?category=astrology", { token: parent.token })
      expect(bad).toMatchObject({ status: 422, body: { errors: { category: ["is not included in the list"] } } })
    }))

  it.effect("responses are scored on every save; completed is automatic and reverts; submitted freezes answers", () =>
    Effect.gen(function*() {
      const { staff, parent, patient } = yield* family()
      const phq9 = yield* instrument(parent.token, "phq9")
      const created = yield* post(parent.token, { questionnaire_id: phq9.id, patient_id: patient, responses: [] })
      expect(created.status).toBe(201)
      const empty = responseOf(created.body)
      expect(empty).toEqual({
        id: expect.any(Number), questionnaire_id: phq9.id, questionnaire_version: 1, patient_id: patient, status: "started",
        score: null, severity: null, subscales: {}, flags: [], responses: [], review_notes: null, reviewed_by_id: null,
        reviewed_at: null, completed_at: null, submitted_at: null, crisis_resources: null,
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      const some = yield* update(parent.token, empty.id, { responses: [{ question_id: phq9.key("phq9_1").id, answer: "Nearly every day" }] })
      expect(some).toMatchObject({
        status: "in_progress", score: null,
        responses: [{ question_id: phq9.key("phq9_1").id, question_text: "Little interest or pleasure in doing things", answer: "Nearly every day", score: 3 }]
      })
      // All nine: 3 + 8 × 1 = 11, moderate.
      const rest = allAnswered(phq9, () => 1).filter((r) => r.question_id !== phq9.key("phq9_1").id && r.question_id !== phq9.key("phq9_9").id)
      const nearly = yield* update(parent.token, empty.id, { responses: rest })
      expect(nearly).toMatchObject({ status: "in_progress", score: null })
      const done = yield* put(parent.token, empty.id, { responses: [{ question_id: phq9.key("phq9_9").id, answer: "Not at all" }, { question_id: phq9.key("phq9_10").id, answer: "Very difficult" }] })
      expect(responseOf(done.body)).toMatchObject({ status: "completed", score: 10, severity: "moderate", flags: [], completed_at: expect.stringMatching(iso) })
      expect(responseOf(done.body).responses.at(-1)).toMatchObject({ answer: "Very difficult", score: null })
      // Clearing one reverts to in_progress, answering again completes again.
      const cleared = yield* update(parent.token, empty.id, { responses: [{ question_id: phq9.key("phq9_2").id, answer: null }] })
      expect(cleared).toMatchObject({ status: "in_progress", score: null, severity: null, completed_at: null })
      const early = yield* put(parent.token, empty.id, { status: "submitted" })
      expect(early).toMatchObject({ status: 422, body: { errors: { status: ["cannot change from in_progress to submitted"] } } })
      const submitted = yield* update(parent.token, empty.id, { responses: [{ question_id: phq9.key("phq9_2").id, answer: "Not at all" }], status: "submitted" })
      expect(submitted).toMatchObject({ status: "submitted", score: 9, severity: "mild", submitted_at: expect.any(Date) })
      const frozen = yield* put(parent.token, empty.id, { responses: [{ question_id: phq9.key("phq9_2").id, answer: null }] })
      expect(frozen).toMatchObject({ status: 422, body: { errors: { status: ["cannot change from submitted to in_progress"] } } })
      // A parent may not review; staff may, once; reviewed is final.
      const parentReview = yield* put(parent.token, empty.id, { status: "reviewed" })
      expect(parentReview).toMatchObject({ status: 403, body: { errors: "You are not authorized to perform this action." } })
      const parentNotes = yield* put(parent.token, empty.id, { review_notes: "fine" })
      expect(parentNotes.status).toBe(403)
      const reviewed = yield* update(staff.token, empty.id, { status: "reviewed", review_notes: "Discussed at visit" })
      expect(reviewed).toMatchObject({ status: "reviewed", reviewed_by_id: staff.id, reviewed_at: expect.any(Date), review_notes: "Discussed at visit" })
      const back = yield* put(staff.token, empty.id, { status: "submitted" })
      expect(back).toMatchObject({ status: 422, body: { errors: { status: ["cannot change from reviewed to submitted"] } } })
      expect(yield* auditActions("questionnaire_response", empty.id)).toEqual([
        "questionnaire_response.create", "questionnaire_response.in_progress", "questionnaire_response.update",
        "questionnaire_response.completed", "questionnaire_response.in_progress", "questionnaire_response.submitted",
        "questionnaire_response.reviewed"
      ])
    }))

  it.effect("bad answers are 422 with nothing saved; unknown or inactive questionnaires must exist", () =>
    Effect.gen(function*() {
      const { parent, patient } = yield* family()
      const phq9 = yield* instrument(parent.token, "phq9")
      const gad7 = yield* instrument(parent.token, "gad7")
      const sql = yield* SqlClient.SqlClient
      const before = (yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM questionnaire_responses`)[0]!.count
      const bad = yield* post(parent.token, {
        questionnaire_id: phq9.id, patient_id: patient, responses: [
          { question_id: phq9.key("phq9_1").id, answer: "Several days" },
          { question_id: phq9.key("phq9_2").id, answer: ["Several days"] },
          { question_id: phq9.key("phq9_3").id, answer: "Sometimes" },
          { question_id: gad7.key("gad7_1").id, answer: "Several days" }
        ]
      })
      expect(bad).toMatchObject({
        status: 422,
        body: { errors: { "responses[1].answer": ["is not included in the list"], "responses[2].answer": ["is not included in the list"], "responses[3].question_id": ["is not included in the list"] } }
      })
      const unknown = yield* post(parent.token, { questionnaire_id: 999999, patient_id: patient, responses: [] })
      expect(unknown).toMatchObject({ status: 422, body: { errors: { questionnaire_id: ["must exist"] } } })
      yield* sql`UPDATE questionnaires SET active = false WHERE id = ${gad7.id}`
      const inactive = yield* post(parent.token, { questionnaire_id: gad7.id, patient_id: patient, responses: [] })
      yield* sql`UPDATE questionnaires SET active = true WHERE id = ${gad7.id}`
      expect(inactive).toMatchObject({ status: 422, body: { errors: { questionnaire_id: ["must exist"] } } })
      const after = (yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM questionnaire_responses`)[0]!.count
      expect(after).toBe(before)
      const missing = yield* put(parent.token, 999999, { status: "submitted" })
      expect(missing).toMatchObject({ status: 404, body: { errors: "Questionnaire response not found" } })
    }))

  it.effect("the parent rule: own patients only; another family's responses and patients are 404", () =>
    Effect.gen(function*() {
      const a = yield* family()
      const b = yield* family()
      const gad7 = yield* instrument(a.parent.token, "gad7")
      const mine = yield* start(a.parent.token, { questionnaire_id: gad7.id, patient_id: a.patient, responses: [] })
      const theirs = yield* start(b.parent.token, { questionnaire_id: gad7.id, patient_id: b.patient, responses: allAnswered(gad7, () => 2) })
      expect(theirs).toMatchObject({ status: "completed", score: 14, severity: "moderate" })
      const refusals = [
        yield* post(a.parent.token, { questionnaire_id: gad7.id, patient_id: b.patient, responses: [] }),
        yield* request("GET", `/v1/clinic/patients/questionnaires?patient_id=${b.patient}`, { token: a.parent.token })
      ]
      for (const refused of refusals) expect(refused).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      for (const refused of [
        yield* request("GET", `/v1/clinic/patients/questionnaires/${theirs.id}`, { token: a.parent.token }),
        yield* put(a.parent.token, theirs.id, { status: "submitted" })
      ]) expect(refused).toMatchObject({ status: 404, body: { errors: "Questionnaire response not found" } })
      const asParent = yield* clientAs(a.parent.token)
      const own = yield* asParent.questionnaireResponses.list({ urlParams: {} })
      expect(own).toMatchObject({ questionnaire_responses: [{ id: mine.id }], pagination: { total_count: 1 } })
      const shown = yield* asParent.questionnaireResponses.show({ path: { id: mine.id } })
      expect(shown.questionnaire_response.id).toBe(mine.id)
      // Staff see both; filters; newest first.
      const byStaff = yield* request("GET", `/v1/clinic/patients/questionnaires?questionnaire_id=${gad7.id}&status=completed&patient_id=${b.patient}`, { token: a.staff.token })
      expect(byStaff.body).toMatchObject({ questionnaire_responses: [{ id: theirs.id }], pagination: { total_count: 1 } })
      const second = yield* start(a.staff.token, { questionnaire_id: gad7.id, patient_id: a.patient, responses: [] })
      const newest = yield* (yield* clientAs(a.staff.token)).questionnaireResponses.list({ urlParams: { patient_id: PatientId.make(a.patient) } })
      expect(newest.questionnaire_responses.map((r) => r.id)).toEqual([second.id, mine.id])
    }))

  it.effect("a self-harm answer alerts once, mid-form: row, audit, one mail (link only) to the primary provider; review acknowledges", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const clinician = yield* makeProvider(admin, "provider", { email: "dr.alert@clinic.test" })
      const { staff, parent, patient } = yield* family({ provider_id: clinician.id, first_name: "Secret", last_name: "Name" })
      const phq9 = yield* instrument(parent.token, "phq9")
      const mailer = yield* MemoryMailer
      yield* mailer.clear
      const created = yield* start(parent.token, {
        questionnaire_id: phq9.id, patient_id: patient, responses: [{ question_id: phq9.key("phq9_9").id, answer: "Several days" }]
      })
      expect(created).toMatchObject({ status: "in_progress", score: null, flags: ["self_harm"] })
      expect(created.crisis_resources).toEqual([
        { name: "988 Suicide & Crisis Lifeline", contact: "Call or text 988", url: "https://988lifeline.org" },
        { name: "Emergency services", contact: "Call 911", url: null }
      ])
      // Saved again with the same and then another answer: still one alert.
      yield* update(parent.token, created.id, { responses: [{ question_id: phq9.key("phq9_9").id, answer: "Nearly every day" }] })
      const cleared = yield* update(parent.token, created.id, { responses: [{ question_id: phq9.key("phq9_9").id, answer: "Not at all" }] })
      expect(cleared.flags).toEqual(["self_harm"])
      const sql = yield* SqlClient.SqlClient
      const alerts = yield* sql<{ id: number; patient_id: number; acknowledged_at: Date | null }>`SELECT id, patient_id, acknowledged_at FROM questionnaire_alerts WHERE questionnaire_response_id = ${created.id}`
      expect(alerts).toHaveLength(1)
      expect(yield* auditCount("questionnaire.self_harm_alert", created.id)).toBe(1)

      yield* runDueJobs([questionnaireAlertTask]).pipe(Effect.provide(QuestionnaireMail.Default))
      yield* runDueJobs([questionnaireAlertTask]).pipe(Effect.provide(QuestionnaireMail.Default))
      const sent = (yield* mailer.sent).filter((m) => m.subject === "Questionnaire safety alert")
      expect(sent).toHaveLength(1)
      expect(sent[0]!.to).toEqual(["dr.alert@clinic.test"])
      expect(sent[0]!.text).toContain(`https://api.clinic.test/v1/clinic/patients/questionnaires/${created.id}`)
      for (const secret of ["Secret", "Name", "Several days", "Nearly every day", "better off dead"]) expect(sent[0]!.text).not.toContain(secret)
      // Running the mail again (a retried job) sends nothing more.
      yield* Effect.flatMap(QuestionnaireMail, (mail) => mail.alert(alerts[0]!.id)).pipe(Effect.provide(QuestionnaireMail.Default))
      expect((yield* mailer.sent).filter((m) => m.subject === "Questionnaire safety alert")).toHaveLength(1)

      // Completed and reviewed: the alert is acknowledged.
      yield* update(parent.token, created.id, { responses: allAnswered(phq9, () => 0) })
      yield* update(staff.token, created.id, { status: "reviewed" })
      const [acknowledged] = yield* sql<{ acknowledged_by_id: number | null }>`SELECT acknowledged_by_id FROM questionnaire_alerts WHERE id = ${alerts[0]!.id}`
      expect(acknowledged!.acknowledged_by_id).toBe(staff.id)
    }))

  it.effect("without a primary provider the alert goes to CLINICAL_ALERT_EMAIL; PHQ-A suicide items flag on Yes", () =>
    Effect.gen(function*() {
      const { parent, patient } = yield* family()
      const phqa = yield* instrument(parent.token, "phqa")
      const mailer = yield* MemoryMailer
      yield* mailer.clear
      const created = yield* start(parent.token, {
        questionnaire_id: phqa.id, patient_id: patient, responses: [{ question_id: phqa.key("phqa_suicide_attempt_ever").id, answer: "Yes" }]
      })
      expect(created.flags).toEqual(["self_harm"])
      yield* runDueJobs([questionnaireAlertTask]).pipe(Effect.provide(QuestionnaireMail.Default))
      const sent = (yield* mailer.sent).filter((m) => m.subject === "Questionnaire safety alert")
      expect(sent.map((m) => m.to)).toEqual([["alerts@clinic.test"]])
      const calm = yield* start(parent.token, {
        questionnaire_id: phqa.id, patient_id: patient, responses: [{ question_id: phqa.key("phqa_sad_past_year").id, answer: "Yes" }]
      })
      expect(calm).toMatchObject({ flags: [], crisis_resources: null })
    }))

  it.scoped("admins may start a response for any patient; a new seed version leaves old responses on theirs", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family()
      const other = yield* signedIn("admin")
      const psc17 = yield* instrument(staff.token, "psc17")
      const often = psc17.questions.slice(3).map((q) => ({ question_id: q.id, answer: "Often" }))
      const created = yield* start(other.token, { questionnaire_id: psc17.id, patient_id: patient, responses: often })
      expect(created).toMatchObject({ status: "completed", score: 28, severity: "positive", subscales: { internalizing: expect.any(Number), attention: expect.any(Number), externalizing: expect.any(Number) } })
      expect(created.flags).toContain("positive")
      const invalid = yield* update(other.token, created.id, { responses: [{ question_id: psc17.questions[4]!.id, answer: null }] })
      expect(invalid).toMatchObject({ status: "in_progress", score: null, severity: "invalid" })

      // An edited seed file becomes version 2; version 1 stays for the responses that answered it.
      const dir = yield* tempDir
      for (const file of yield* Effect.promise(() => readdir(seedsDir))) {
        const text = yield* Effect.promise(() => readFile(join(seedsDir, file), "utf8"))
        const edited = file === "psc17.json" ? text.replace("Worries a lot", "Worries a great deal") : text
        yield* Effect.promise(() => writeFile(join(dir, file), edited))
      }
      const catalogue = yield* Catalogue
      expect(yield* catalogue.seed(dir)).toBe(1)
      expect(yield* catalogue.seed(dir)).toBe(0)
      const v2 = yield* instrument(staff.token, "psc17")
      expect(v2).toMatchObject({ version: 2, active: true })
      expect(v2.id).not.toBe(psc17.id)
      expect(v2.key("psc17_15").position).toBe(15)
      const old = yield* request("GET", `/v1/questionnaires/${psc17.id}`, { token: staff.token })
      expect(old.body).toMatchObject({ questionnaire: { version: 1, active: false } })
      const stale = yield* post(staff.token, { questionnaire_id: psc17.id, patient_id: patient, responses: [] })
      expect(stale).toMatchObject({ status: 422, body: { errors: { questionnaire_id: ["must exist"] } } })
      const kept = yield* update(staff.token, created.id, { responses: [{ question_id: psc17.questions[4]!.id, answer: "Never" }] })
      expect(kept).toMatchObject({ questionnaire_id: psc17.id, questionnaire_version: 1, status: "completed" })
    }))
})
