/** Questionnaires, their questions, responses, invites and public screeners (general §2.11). */
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../Time.js"
import { QuestionType, ResponseStatus } from "./Scoring.js"

export const questionnaireCategories = ["screening", "diagnostic", "outcome", "progress", "satisfaction", "intake"] as const
export const QuestionnaireCategory = Schema.Literal(...questionnaireCategories)
export const targetAudiences = ["parents", "teens", "adults"] as const
export const TargetAudience = Schema.Literal(...targetAudiences)
export type TargetAudience = typeof TargetAudience.Type

export class Question extends Schema.Class<Question>("QuestionnaireQuestion")({
  id: Schema.Int,
  key: Schema.String.annotations({ description: "Stable across versions, e.g. phq9_9" }),
  position: Schema.Int,
  text: Schema.String,
  type: QuestionType,
  options: Schema.Array(Schema.String).annotations({ description: "The answers to choose from (labels); empty for text and date" }),
  required: Schema.Boolean
}) {}

export class Questionnaire extends Schema.Class<Questionnaire>("Questionnaire")({
  id: Schema.Int,
  slug: Schema.String,
  version: Schema.Int,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  category: QuestionnaireCategory,
  age_group: Schema.NullOr(Schema.String),
  estimated_duration: Schema.NullOr(Schema.Int).annotations({ description: "Minutes" }),
  active: Schema.Boolean,
  attribution: Schema.NullOr(Schema.String).annotations({ description: "Copyright notice to show with the instrument" }),
  target_audience: Schema.NullOr(TargetAudience),
  questions: Schema.Array(Question),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export const AnswerValue = Schema.Union(Schema.String, Schema.Array(Schema.String))

export class ResponseItem extends Schema.Class<ResponseItem>("QuestionnaireResponseItem")({
  question_id: Schema.Int,
  question_text: Schema.String,
  answer: AnswerValue,
  score: Schema.NullOr(Schema.Int).annotations({ description: "The item's points; null when unscored" })
}) {}

export class CrisisResource extends Schema.Class<CrisisResource>("CrisisResource")({
  name: Schema.String,
  contact: Schema.String,
  url: Schema.NullOr(Schema.String)
}) {}

export const Subscales = Schema.Record({ key: Schema.String, value: Schema.Int })

export class QuestionnaireResponse extends Schema.Class<QuestionnaireResponse>("QuestionnaireResponse")({
  id: Schema.Int,
  questionnaire_id: Schema.Int,
  questionnaire_version: Schema.Int,
  patient_id: Schema.Int,
  status: ResponseStatus,
  score: Schema.NullOr(Schema.Int).annotations({ description: "Null until every required question is answered" }),
  severity: Schema.NullOr(Schema.String),
  subscales: Subscales,
  flags: Schema.Array(Schema.String),
  responses: Schema.Array(ResponseItem),
  review_notes: Schema.NullOr(Schema.String),
  reviewed_by_id: Schema.NullOr(Schema.Int),
  reviewed_at: Schema.NullOr(IsoTimestamp),
  completed_at: Schema.NullOr(IsoTimestamp),
  submitted_at: Schema.NullOr(IsoTimestamp),
  crisis_resources: Schema.NullOr(Schema.Array(CrisisResource)).annotations({ description: "Set when the answers flag self_harm" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export const inviteStatuses = ["sent", "opened", "completed", "expired", "revoked"] as const
export const InviteStatus = Schema.Literal(...inviteStatuses)
export type InviteStatus = typeof InviteStatus.Type

export class QuestionnaireInvite extends Schema.Class<QuestionnaireInvite>("QuestionnaireInvite")({
  id: Schema.Int,
  questionnaire_id: Schema.Int,
  patient_id: Schema.Int,
  email: Schema.String,
  due_date: Schema.NullOr(IsoDate),
  message: Schema.NullOr(Schema.String),
  status: InviteStatus,
  expires_at: IsoTimestamp,
  created_at: IsoTimestamp
}) {}

/** The public form an invite opens: no patient data. */
export class InviteForm extends Schema.Class<InviteForm>("QuestionnaireInviteForm")({
  invite: Schema.Struct({ due_date: Schema.NullOr(IsoDate), expires_at: IsoTimestamp, message: Schema.NullOr(Schema.String) }),
  questionnaire: Questionnaire
}) {}

export class InviteResponseReceipt extends Schema.Class<InviteResponseReceipt>("QuestionnaireInviteReceipt")({
  id: Schema.Int,
  status: Schema.Literal("submitted"),
  crisis_resources: Schema.NullOr(Schema.Array(CrisisResource))
}) {}

export class ScreenerResult extends Schema.Class<ScreenerResult>("MarketingQuestionnaireResult")({
  id: Schema.Int,
  score: Schema.NullOr(Schema.Int),
  severity: Schema.NullOr(Schema.String),
  subscales: Subscales,
  crisis_resources: Schema.NullOr(Schema.Array(CrisisResource))
}) {}
