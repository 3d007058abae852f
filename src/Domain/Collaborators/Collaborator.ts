/**
 * Collaborators and their assessments (general §2.4): representations, enumerations and the two
 * status machines.
 */
import { Schema } from "effect"
import { CollaboratorAssessmentId, CollaboratorId, PatientId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

export { CollaboratorAssessmentId, CollaboratorId } from "../Ids.js"

const listMessage = { message: () => "is not included in the list" }

export const CollaboratorType = Schema.Literal(
  "school", "therapist", "physician", "social_worker", "case_manager", "family_member", "other"
).annotations(listMessage)
export type CollaboratorType = typeof CollaboratorType.Type

export const CollaboratorStatus = Schema.Literal("active", "inactive", "pending", "declined", "suspended").annotations(listMessage)
export type CollaboratorStatus = typeof CollaboratorStatus.Type

export const Specialization = Schema.Literal(
  "behavioral_support", "academic_support", "speech_therapy", "occupational_therapy", "physical_therapy",
  "special_education", "general_education"
).annotations(listMessage)
export type Specialization = typeof Specialization.Type

export const AssessmentType = Schema.Literal(
  "behavioral_observation", "academic_performance", "social_skills", "progress_report", "incident_report", "treatment_feedback"
).annotations(listMessage)
export type AssessmentType = typeof AssessmentType.Type

export const AssessmentStatus = Schema.Literal("pending", "completed", "expired", "cancelled").annotations(listMessage)
export type AssessmentStatus = typeof AssessmentStatus.Type

/**
 * Who may move a collaborator between statuses: pending → active (owner or admin; also
 * the first completed assessment), active ⇄ inactive, pending → declined (owner, admin or the
 * collaborator from the form), any → suspended and suspended → back (admins only).
 */
export type StatusActor = "owner" | "admin"

export const canChangeStatus = (from: CollaboratorStatus, to: CollaboratorStatus, actor: StatusActor): boolean => {
  if (from === to) return true
  if (to === "suspended") return actor === "admin"
  if (from === "suspended") return actor === "admin" && (to === "active" || to === "inactive")
  switch (from) {
    case "pending":
      return to === "active" || to === "declined"
    case "active":
      return to === "inactive"
    case "inactive":
      return to === "active"
    case "declined":
      return false
  }
}

/** A status in which a collaborator may be sent links and answer them. */
export const canAssess = (status: CollaboratorStatus): boolean => status === "pending" || status === "active"

export class Collaborator extends Schema.Class<Collaborator>("Collaborator")({
  id: CollaboratorId,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  phone: Schema.NullOr(Schema.String).annotations({ description: "E.164" }),
  organization: Schema.String,
  title: Schema.NullOr(Schema.String),
  type: CollaboratorType,
  specialization: Schema.NullOr(Specialization),
  status: CollaboratorStatus,
  patient_ids: Schema.Array(PatientId).annotations({ description: "Linked patients the caller may see" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class AssessmentResponse extends Schema.Class<AssessmentResponse>("AssessmentResponse")({
  question_id: Schema.String,
  question_text: Schema.String,
  answer: Schema.String,
  score: Schema.NullOr(Schema.Int).annotations({ description: "The option's points; null for an unscored item" })
}) {}

export class CollaboratorAssessment extends Schema.Class<CollaboratorAssessment>("CollaboratorAssessment")({
  id: CollaboratorAssessmentId,
  collaborator_id: CollaboratorId,
  patient_id: PatientId,
  assessment_type: AssessmentType,
  status: AssessmentStatus,
  responses: Schema.Array(AssessmentResponse),
  total_score: Schema.NullOr(Schema.Int).annotations({ description: "Beyond spec: the sum of the scored items; null when unscored or unanswered" }),
  interpretation: Schema.NullOr(Schema.String).annotations({ description: "Beyond spec: the band of the total (docs/assessments.md)" }),
  completed_at: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp
}) {}

export class AssessmentToken extends Schema.Class<AssessmentToken>("AssessmentToken")({
  token: Schema.String.annotations({ description: "Single use; only its hash is stored" }),
  expires_at: IsoTimestamp,
  assessment_url: Schema.String
}) {}
