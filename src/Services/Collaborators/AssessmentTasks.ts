/** The jobs of collaborator assessments: the link email, the incident alert and the hourly expiry. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { AssessmentJobs } from "./AssessmentJobs.js"

/** Emails an assessment link (`send=true`): the token travels sealed (LinkSeal.ts). */
export const sendAssessmentLinkTask = defineTask({
  name: "collaborators.sendAssessmentLink",
  payload: Schema.Struct({ token_id: Schema.Int, sealed_token: Schema.String }),
  run: (payload) => Effect.flatMap(AssessmentJobs, (jobs) => jobs.sendLink(payload.token_id, payload.sealed_token))
})

/** Tells the patient's primary provider that an incident report needs them (a link only). */
export const incidentAlertTask = defineTask({
  name: "collaborators.incidentAlert",
  payload: Schema.Struct({ assessment_id: Schema.Int }),
  run: (payload) => Effect.flatMap(AssessmentJobs, (jobs) => jobs.alert(payload.assessment_id))
})

/** Hourly: pending assessments whose link ran out become expired. */
export const expireAssessmentsTask = defineTask({
  name: "collaborators.expireAssessments",
  payload: Schema.Struct({}),
  run: () => Effect.flatMap(AssessmentJobs, (jobs) => jobs.expire)
})
