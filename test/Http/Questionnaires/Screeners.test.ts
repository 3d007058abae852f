/** Public screeners: anonymous, scored, the band mailed, limits, honeypot, alert, purge. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { QuestionnaireMail } from "../../../src/Services/Questionnaires/QuestionnaireMail.js"
import { purgeScreenersTask, questionnaireAlertTask, screenerResultTask } from "../../../src/Services/Questionnaires/Tasks.js"
import { QuestionId, QuestionnaireId } from "../../../src/Domain/Ids.js"
import type { TargetAudience } from "../../../src/Domain/Questionnaires/Questionnaire.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertScreener } from "../../support/fixtures.js"
import { allAnswered } from "./helpers.js"

const screener = (body: Record<string, unknown>) =>
  request("POST", "/v1/marketing_questionnaires", { body: { marketing_questionnaire: body } })

const publicList = (urlParams: { readonly target_audience?: TargetAudience; readonly page_size?: number } = {}) =>
  Effect.flatMap(clientAs(), (client) => client.marketingQuestionnaires.list({ urlParams }))

/** A screener taken through the typed client: the answers as the public form sends them. */
const takeScreener = (body: { questionnaire_id: number; email: string; responses: ReadonlyArray<{ question_id: number; answer: string }> }) =>
  Effect.flatMap(clientAs(), (client) =>
    client.marketingQuestionnaires.create({
      payload: {
        marketing_questionnaire: {
          questionnaire_id: QuestionnaireId.make(body.questionnaire_id),
          email: body.email,
          responses: body.responses.map((r) => ({ question_id: QuestionId.make(r.question_id), answer: r.answer }))
        }
      }
    }))

const bySlug = (slug: string) =>
  Effect.map(publicList({ page_size: 100 }), (list) => {
    const q = list.marketing_questionnaires.find((m) => m.slug === slug)!
    return { ...q, key: (k: string) => q.questions.find((x) => x.key === k)! }
  })

const runMail = (tasks: ReadonlyArray<typeof screenerResultTask | typeof questionnaireAlertTask>) =>
  runDueJobs<QuestionnaireMail>(tasks).pipe(Effect.provide(QuestionnaireMail.Default))

layer(TestApp({ clinicalAlertEmail: "alerts@clinic.test" }))("public screeners", (it) => {
  it.effect("listed without a token; scored at once; the result mail carries the band only", () =>
    Effect.gen(function*() {
      const all = yield* publicList()
      expect(all.marketing_questionnaires.map((q) => q.slug).sort()).toEqual(["gad7", "phq9", "phqa", "psc17"])
      const parents = yield* publicList({ target_audience: "parents" })
      expect(parents.marketing_questionnaires.map((q) => q.slug)).toEqual(["psc17"])
      const gad7 = yield* bySlug("gad7")
      const created = yield* screener({ questionnaire_id: gad7.id, email: "curious@example.test", responses: allAnswered(gad7, () => 2), website: "" })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({ marketing_questionnaire: { id: expect.any(Number), score: 14, severity: "moderate", subscales: {}, crisis_resources: null } })
      const mailer = yield* MemoryMailer
      yield* runMail([screenerResultTask])
      yield* runMail([screenerResultTask])
      const mails = (yield* mailer.sent).filter((m) => m.to.includes("curious@example.test"))
      expect(mails).toHaveLength(1)
      expect(mails[0]!.text).toContain("Your result: moderate.")
      expect(mails[0]!.text).not.toContain("14")
      expect(mails[0]!.text).not.toContain("More than half the days")

      const psc17 = yield* bySlug("psc17")
      const fourBlank = psc17.questions.slice(4).map((q) => ({ question_id: q.id, answer: "Sometimes" }))
      const invalid = yield* screener({ questionnaire_id: psc17.id, email: "parent@example.test", responses: fourBlank })
      expect(invalid.body).toMatchObject({ marketing_questionnaire: { score: null, severity: "invalid", subscales: {} } })
      const threeBlank = psc17.questions.slice(3).map((q) => ({ question_id: q.id, answer: "Sometimes" }))
      const valid = yield* takeScreener({ questionnaire_id: psc17.id, email: "parent2@example.test", responses: threeBlank })
      expect(valid.marketing_questionnaire).toMatchObject({ score: 14, severity: "positive", subscales: { internalizing: 4, attention: 3, externalizing: 7 } })
    }))

  it.effect("honeypot, unknown questionnaire and bad answers are 422", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(Duration.hours(2))
      const gad7 = yield* bySlug("gad7")
      expect(yield* screener({ questionnaire_id: gad7.id, email: "bot@example.test", responses: [], website: "http://spam.test" }))
        .toMatchObject({ status: 422, body: { errors: { website: ["must be blank"] } } })
      expect(yield* screener({ questionnaire_id: 999999, email: "a@example.test", responses: [] }))
        .toMatchObject({ status: 422, body: { errors: { questionnaire_id: ["must exist"] } } })
      expect(yield* screener({ questionnaire_id: gad7.id, email: "nope", responses: [] }))
        .toMatchObject({ status: 422, body: { errors: { email: ["invalid format"] } } })
      expect(yield* screener({ questionnaire_id: gad7.id, email: "a@example.test", responses: [{ question_id: gad7.questions[0]!.id, answer: "Often" }] }))
        .toMatchObject({ status: 422, body: { errors: { "responses[0].answer": ["is not included in the list"] } } })
    }))

  it.effect("3 a day per email, 5 an hour per address", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(Duration.days(1))
      const gad7 = yield* bySlug("gad7")
      const take = (email: string) => Effect.map(screener({ questionnaire_id: gad7.id, email, responses: [] }), (r) => r.status)
      expect([yield* take("same@example.test"), yield* take("SAME@example.test"), yield* take("same@example.test")]).toEqual([201, 201, 201])
      const fourth = yield* screener({ questionnaire_id: gad7.id, email: "same@example.test", responses: [] })
      expect(fourth).toMatchObject({ status: 429, body: { errors: "Too many requests; try again later" } })
      expect([yield* take("other1@example.test"), yield* take("other2@example.test")]).toEqual([201, 201])
      expect(yield* take("other3@example.test")).toBe(429)
    }))

  it.effect("a self-harm answer: crisis resources, one alert mailed to CLINICAL_ALERT_EMAIL by id", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(Duration.days(1))
      const phq9 = yield* bySlug("phq9")
      const created = yield* takeScreener({
        questionnaire_id: phq9.id, email: "someone@example.test", responses: [{ question_id: phq9.key("phq9_9").id, answer: "More than half the days" }]
      })
      const result = created.marketing_questionnaire
      expect(result.score).toBeNull()
      expect(result.crisis_resources).toHaveLength(2)
      yield* runMail([questionnaireAlertTask])
      const alerts = (yield* (yield* MemoryMailer).sent).filter((m) => m.subject === "Questionnaire safety alert")
      expect(alerts).toHaveLength(1)
      expect(alerts[0]!.to).toEqual(["alerts@clinic.test"])
      expect(alerts[0]!.text).toContain(`#${result.id}`)
      expect(alerts[0]!.text).not.toContain("someone@example.test")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT id FROM questionnaire_alerts WHERE marketing_questionnaire_id = ${result.id}`
      expect(rows).toHaveLength(1)
    }))

  it.effect("the daily purge deletes screeners older than 180 days", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [q] = yield* sql<{ id: number }>`SELECT id FROM questionnaires WHERE slug = 'gad7'`
      const now = yield* TestClock.currentTimeMillis
      const old = yield* insertScreener({ questionnaireId: q!.id, email: "old@example.test", at: new Date(now - 181 * 86_400_000) })
      const recent = yield* insertScreener({ questionnaireId: q!.id, email: "recent@example.test", at: new Date(now - 179 * 86_400_000) })
      const purged = yield* Effect.flatMap(QuestionnaireMail, (mail) => mail.purgeScreeners).pipe(Effect.provide(QuestionnaireMail.Default))
      expect(purged).toBe(1)
      const left = yield* sql<{ id: number }>`SELECT id FROM marketing_questionnaires WHERE id IN (${old}, ${recent})`
      expect(left.map((r) => r.id)).toEqual([recent])
      // The scheduled task runs the same purge.
      expect(purgeScreenersTask.name).toBe("questionnaires.purge_screeners")
    }))
})
