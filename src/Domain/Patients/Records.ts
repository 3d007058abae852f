/** Records under a clinic patient: help requests, treatment plans, spots, documents. */
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../Time.js"

export const helpRequestStatuses = ["open", "in_progress", "resolved"] as const
export const HelpRequestStatus = Schema.Literal(...helpRequestStatuses)

export class HelpRequest extends Schema.Class<HelpRequest>("HelpRequest")({
  id: Schema.Int,
  patient_id: Schema.Int,
  user_id: Schema.NullOr(Schema.Int).annotations({ description: "Who asked" }),
  subject: Schema.String,
  message: Schema.String,
  status: HelpRequestStatus,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export const treatmentPlanStatuses = ["draft", "active", "completed", "discontinued"] as const
export const TreatmentPlanStatus = Schema.Literal(...treatmentPlanStatuses)
export type TreatmentPlanStatus = typeof TreatmentPlanStatus.Type
export const goalStatuses = ["not_started", "in_progress", "achieved", "discontinued"] as const
export const GoalStatus = Schema.Literal(...goalStatuses)

export class TreatmentGoal extends Schema.Class<TreatmentGoal>("TreatmentGoal")({
  description: Schema.String,
  target_date: Schema.NullOr(IsoDate),
  status: GoalStatus
}) {}

export class TreatmentPlan extends Schema.Class<TreatmentPlan>("TreatmentPlan")({
  id: Schema.Int,
  patient_id: Schema.Int,
  provider_id: Schema.NullOr(Schema.Int),
  title: Schema.String,
  diagnosis_codes: Schema.Array(Schema.String),
  goals: Schema.Array(TreatmentGoal),
  interventions: Schema.Array(Schema.String),
  start_date: Schema.NullOr(IsoDate),
  end_date: Schema.NullOr(IsoDate),
  status: TreatmentPlanStatus,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

/** A completed plan is the record of finished care: it is never edited again. */
export const isReadOnlyPlan = (status: TreatmentPlanStatus): boolean => status === "completed"

export const spotStatuses = ["waiting", "offered", "accepted", "declined", "expired"] as const
export const SpotStatus = Schema.Literal(...spotStatuses)
export type SpotStatus = typeof SpotStatus.Type

/**
 * The waitlist's moves: waiting → offered → accepted | declined; an open spot (waiting or
 * offered) may also expire. Accepted, declined and expired are final.
 */
export const spotTransitions: Readonly<Record<SpotStatus, ReadonlyArray<SpotStatus>>> = {
  waiting: ["offered", "expired"],
  offered: ["accepted", "declined", "expired"],
  accepted: [],
  declined: [],
  expired: []
}
export const canMoveSpot = (from: SpotStatus, to: SpotStatus): boolean => from === to || spotTransitions[from].includes(to)

export class Spot extends Schema.Class<Spot>("Spot")({
  id: Schema.Int,
  patient_id: Schema.Int,
  status: SpotStatus,
  position: Schema.NullOr(Schema.Int).annotations({
    description: "The spot's place (from 1) among the waiting spots of its program, oldest request first; null unless waiting"
  }),
  program: Schema.String,
  notes: Schema.NullOr(Schema.String),
  requested_at: IsoTimestamp,
  offered_at: Schema.NullOr(IsoTimestamp),
  responded_at: Schema.NullOr(IsoTimestamp)
}) {}

/** What a patient's documents may be: PDF, common images, plain text. */
export const documentContentTypes = [
  "application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "text/csv"
] as const
/** Largest document accepted (decoded bytes). */
export const maxDocumentBytes = 20 * 1024 * 1024

export class PatientDocument extends Schema.Class<PatientDocument>("PatientDocument")({
  id: Schema.Int,
  name: Schema.String,
  content_type: Schema.String,
  size: Schema.Int,
  clinical: Schema.Boolean.annotations({
    description: "Clinical content (reports, assessments, letters about care): hidden from front desk and billing"
  }),
  uploaded_by_id: Schema.NullOr(Schema.Int),
  created_at: IsoTimestamp,
  url: Schema.String.annotations({ description: "A signed download link, valid 30 minutes" })
}) {}
