import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { auditActions, cast, createCollaborator, runMailJobs } from "./helpers.js"

const scales = {
  behavioral_observation: {
    ids: ["following_directions", "off_task", "disrupts_others", "aggression", "outbursts", "withdraws"],
    labels: ["Never", "Rarely", "Sometimes", "Often", "Almost always"], min: 0
  },
  academic_performance: {
    ids: ["reading", "writing", "math", "completes_work", "participates"],
    labels: ["Well below grade level", "Below grade level", "At grade level", "Above grade level", "Well above grade level"], min: 1
  },
  social_skills: {
    ids: ["starts_conversations", "takes_turns", "cooperates", "resolves_conflict", "empathy"],
    labels: ["Never", "Rarely", "Sometimes", "Often", "Almost always"], min: 0
  },
  progress_report: {
    ids: ["behaviour", "mood", "school_work", "peers", "treatment_goals"],
    labels: ["Much worse", "Worse", "No change", "Better", "Much better"], min: -2
  },
  treatment_feedback: {
    ids: ["understands_goals", "sees_improvement", "clinic_communication", "can_support_plan"],
    labels: ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"], min: 1
  }
} as const

/** Answers whose points add up to `total`: every item at its lowest, then raised one by one. */
const answersFor = (type: keyof typeof scales, total: number) => {
  const scale = scales[type]
  const steps = scale.ids.map(() => 0)
  let left = total - scale.min * scale.ids.length
  for (let i = 0; i < steps.length && left > 0; i++) {
    steps[i] = Math.min(4, left)
    left -= steps[i]!
  }
  if (left !== 0) throw new Error(`no answers add up to ${total}`)
  return scale.ids.map((question_id, i) => ({ question_id, answer: scale.labels[steps[i]!]! }))
}

const edges: ReadonlyArray<readonly [keyof typeof scales, number, string | null]> = [
  ["behavioral_observation", 0, "low concern"], ["behavioral_observation", 6, "low concern"],
  ["behavioral_observation", 7, "moderate concern"], ["behavioral_observation", 14, "moderate concern"],
  ["behavioral_observation", 15, "high concern"], ["behavioral_observation", 24, "high concern"],
  ["academic_performance", 5, "below grade level"], ["academic_performance", 12, "below grade level"],
  ["academic_performance", 13, "at grade level"], ["academic_performance", 18, "at grade level"],
  ["academic_performance", 19, "above grade level"], ["academic_performance", 25, "above grade level"],
  ["social_skills", 7, "needs support"], ["social_skills", 8, "developing"], ["social_skills", 14, "developing"], ["social_skills", 15, "strength"],
  ["progress_report", -10, "worse"], ["progress_report", -1, "worse"], ["progress_report", 0, "unchanged"],
  ["progress_report", 1, "improving"], ["progress_report", 10, "improving"],
  ["treatment_feedback", 4, null], ["treatment_feedback", 20, null]
]

const submitPath = "/v1/collaborator_assessments"

layer(TestApp())("collaborator assessment scores", (it) => {
  it.effect("totals and interpretation at every band edge", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, patientId } = yield* cast
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const client = yield* clientAs(admin)
      for (const [type, total, interpretation] of edges) {
        const [created, response] = yield* client.collaboratorAssessments.create({
          payload: { collaborator_assessment: { collaborator_id: collaborator.id, patient_id: patientId, assessment_type: type, responses: answersFor(type, total) } },
          withResponse: true
        })
        expect(response.status, `${type} ${total}`).toBe(201)
        expect(created.collaborator_assessment, `${type} ${total}`).toMatchObject({ total_score: total, interpretation })
      }
    }))

  it.effect("incident reports: unscored; a date not in the future; self-harm or injuries alert the primary provider by mail", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, patientId, primary } = yield* cast
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const report = (fields: Record<string, string>) =>
        request("POST", submitPath, {
          token: admin,
          body: { collaborator_assessment: {
            collaborator_id: collaborator.id, patient_id: patientId, assessment_type: "incident_report",
            responses: Object.entries({ date: "2026-01-05", location: "Playground", incident_type: "aggression", description: "Pushed a classmate", injuries: "no", action_taken: "Talked it through", ...fields })
              .map(([question_id, answer]) => ({ question_id, answer }))
          } }
        })
      expect((yield* report({ date: "2999-01-01" })).body).toEqual({ errors: { "responses[0].answer": ["can't be in the future"] } })
      expect((yield* report({ date: "2026-02-30" })).body).toEqual({ errors: { "responses[0].answer": ["is invalid"] } })
      expect((yield* report({ incident_type: "fire" })).body).toEqual({ errors: { "responses[2].answer": ["is not included in the list"] } })
      expect((yield* report({ location: " " })).body).toEqual({ errors: { "responses[1].answer": ["can't be blank"] } })

      const client = yield* clientAs(admin)
      const reported = (fields: Record<string, string>) =>
        client.collaboratorAssessments.create({
          payload: { collaborator_assessment: {
            collaborator_id: collaborator.id, patient_id: patientId, assessment_type: "incident_report",
            responses: Object.entries({ date: "2026-01-05", location: "Playground", incident_type: "aggression", description: "Pushed a classmate", injuries: "no", action_taken: "Talked it through", ...fields })
              .map(([question_id, answer]) => ({ question_id, answer }))
          } }
        }).pipe(Effect.map((r) => r.collaborator_assessment))
      const calm = yield* reported({})
      expect(calm).toMatchObject({ status: "completed", total_score: null, interpretation: null })
      const calmId = calm.id
      const selfHarm = yield* reported({ incident_type: "self_harm" })
      const injured = yield* reported({ injuries: "yes" })
      yield* runMailJobs
      const alerts = (yield* (yield* MemoryMailer).sent).filter((m) => m.to.includes(primary.email))
      const ids: Array<number> = [selfHarm.id, injured.id]
      expect(alerts.map((m) => m.text.match(/collaborator_assessments\/(\d+)/)?.[1]).map(Number).sort()).toEqual(ids.sort())
      for (const mail of alerts) {
        expect(mail.text).not.toMatch(/Playground|Pushed|Robin|self_harm/)
      }
      expect(yield* auditActions("collaborator_assessment", ids[0]!)).toContain("collaborator_assessment.incident_alert")
      expect(yield* auditActions("collaborator_assessment", calmId)).not.toContain("collaborator_assessment.incident_alert")
      // A job that runs again sends nothing more.
      yield* runMailJobs
      expect((yield* (yield* MemoryMailer).sent).filter((m) => m.to.includes(primary.email))).toHaveLength(2)
    }))

  it.effect("answers: unknown items, duplicates and labels that are not options", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, patientId } = yield* cast
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const send = (responses: unknown) => request("POST", submitPath, {
        token: admin, body: { collaborator_assessment: { collaborator_id: collaborator.id, patient_id: patientId, assessment_type: "social_skills", responses } }
      })
      const good = answersFor("social_skills", 10)
      expect((yield* send([...good, { question_id: "shoe_size", answer: "Often" }])).body).toEqual({ errors: { "responses[5].question_id": ["is not included in the list"] } })
      expect((yield* send([...good, good[0]])).body).toEqual({ errors: { "responses[5].question_id": ["has already been taken"] } })
      expect((yield* send([{ ...good[0]!, answer: "often" }, ...good.slice(1)])).body).toEqual({ errors: { "responses[0].answer": ["is not included in the list"] } })
      expect((yield* send([])).body).toEqual({ errors: { responses: ["is incomplete"] } })
    }))
})
