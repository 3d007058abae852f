/** Collaborators and their assessments, with the mail jobs that send assessment links and incident alerts. */
import { Layer } from "effect"
import { AssessmentJobs } from "../../../Services/Collaborators/AssessmentJobs.js"
import { Assessments } from "../../../Services/Collaborators/Assessments.js"
import { expireAssessmentsTask, incidentAlertTask, sendAssessmentLinkTask } from "../../../Services/Collaborators/AssessmentTasks.js"
import { Collaborators } from "../../../Services/Collaborators/Collaborators.js"
import { LinkSealKey } from "../../../Services/Collaborators/LinkSeal.js"
import { defineArea } from "../../Area.js"
import { SigningSecret, SigningSecretLive } from "../../SigningSecret.js"
import { HttpCollaboratorsAreaLive } from "./Collaborators.js"

/** The key that seals assessment links in their mail job's payload. */
export const LinkSealKeyLive = LinkSealKey.fromSecret(SigningSecret).pipe(Layer.provide(SigningSecretLive))

export const CollaboratorsArea = defineArea({
  handlers: HttpCollaboratorsAreaLive,
  services: Layer.mergeAll(
    Assessments.Default.pipe(Layer.provideMerge(Collaborators.Default)),
    AssessmentJobs.Default
  ).pipe(Layer.provide(LinkSealKeyLive)),
  tasks: [sendAssessmentLinkTask, incidentAlertTask, expireAssessmentsTask],
  // Assessments whose link ran out, hourly.
  schedules: [{ task: expireAssessmentsTask, pattern: "11 * * * *" }]
})
