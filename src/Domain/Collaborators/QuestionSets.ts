/**
 * The question sets of collaborator assessments (docs/assessments.md): seeded and versioned in
 * `assessment_question_sets`, checked and scored here. Answers are option labels (choice items),
 * free text (text items) or a day not in the future (date items).
 */
import { Schema } from "effect"

export const QuestionOption = Schema.Struct({ label: Schema.String, points: Schema.NullOr(Schema.Int) })

export class AssessmentQuestion extends Schema.Class<AssessmentQuestion>("AssessmentQuestion")({
  id: Schema.String,
  text: Schema.String,
  type: Schema.Literal("choice", "text", "date"),
  options: Schema.Array(QuestionOption).annotations({ description: "The answers a choice item takes (send the label); empty otherwise" }),
  required: Schema.Boolean,
  scored: Schema.Boolean
}) {}

export const Band = Schema.Struct({ up_to: Schema.NullOr(Schema.Int), label: Schema.String })
export type Band = typeof Band.Type

export interface QuestionSet {
  readonly version: number
  readonly questions: ReadonlyArray<AssessmentQuestion>
  readonly bands: ReadonlyArray<Band>
}

export const decodeQuestions = Schema.decodeUnknownSync(Schema.Array(AssessmentQuestion))
export const decodeBands = Schema.decodeUnknownSync(Schema.Array(Band))

/** Longest text answer. */
export const maxAnswerLength = 2000

export interface SubmittedAnswer {
  readonly question_id: string
  readonly answer: string
}

export interface ScoredResponse {
  readonly question_id: string
  readonly question_text: string
  readonly answer: string
  readonly score: number | null
}

export interface Scored {
  readonly responses: ReadonlyArray<ScoredResponse>
  readonly total_score: number | null
  readonly interpretation: string | null
}

export const answerMessages = {
  notInList: "is not included in the list",
  duplicate: "has already been taken",
  blank: "can't be blank",
  incomplete: "is incomplete",
  invalidDate: "is invalid",
  futureDate: "can't be in the future"
} as const

/** The band a total falls in: the first whose `up_to` is at least the total (null: no bound). */
export const interpret = (bands: ReadonlyArray<Band>, total: number): string | null =>
  bands.find((band) => band.up_to === null || total <= band.up_to)?.label ?? null

const isoDay = /^\d{4}-\d{2}-\d{2}$/
const isRealDay = (s: string) => {
  if (!isoDay.test(s) || s.startsWith("0000")) return false
  const d = new Date(`${s}T00:00:00.000Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

/**
 * Checks the answers against the set: every error keyed `responses[i].answer` /
 * `responses[i].question_id` (i as sent), a missing required item as `responses: is incomplete`.
 * `today` is the latest day a date answer may name (YYYY-MM-DD).
 */
export const scoreAnswers = (
  set: QuestionSet,
  answers: ReadonlyArray<SubmittedAnswer>,
  today: string
): { readonly _tag: "Invalid"; readonly errors: Record<string, Array<string>> } | { readonly _tag: "Scored"; readonly scored: Scored } => {
  const errors: Record<string, Array<string>> = {}
  const add = (field: string, message: string) => (errors[field] ??= []).push(message)
  const byId = new Map(set.questions.map((q) => [q.id, q] as const))
  const given = new Map<string, ScoredResponse>()
  answers.forEach((submitted, index) => {
    const question = byId.get(submitted.question_id)
    if (question === undefined) return add(`responses[${index}].question_id`, answerMessages.notInList)
    if (given.has(question.id)) return add(`responses[${index}].question_id`, answerMessages.duplicate)
    const answer = submitted.answer.trim()
    let score: number | null = null
    if (question.type === "choice") {
      const option = question.options.find((o) => o.label === answer)
      if (option === undefined) return add(`responses[${index}].answer`, answerMessages.notInList)
      score = question.scored ? option.points : null
    } else if (question.type === "date") {
      if (!isRealDay(answer)) return add(`responses[${index}].answer`, answerMessages.invalidDate)
      if (answer > today) return add(`responses[${index}].answer`, answerMessages.futureDate)
    } else if (answer.length === 0) {
      // A blank optional text is no answer at all.
      if (question.required) return add(`responses[${index}].answer`, answerMessages.blank)
      return
    }
    given.set(question.id, { question_id: question.id, question_text: question.text, answer, score })
  })
  if (set.questions.some((q) => q.required && !given.has(q.id)) && Object.keys(errors).length === 0) {
    add("responses", answerMessages.incomplete)
  }
  if (Object.keys(errors).length > 0) return { _tag: "Invalid", errors }
  // In the set's order, whatever order they came in.
  const responses = set.questions.flatMap((q) => (given.has(q.id) ? [given.get(q.id)!] : []))
  const scoredItems = responses.filter((r) => r.score !== null)
  const total = scoredItems.length === 0 ? null : scoredItems.reduce((sum, r) => sum + r.score!, 0)
  return {
    _tag: "Scored",
    scored: { responses, total_score: total, interpretation: total === null ? null : interpret(set.bands, total) }
  }
}

/** An incident report that must alert the primary provider: self-harm, or anyone injured. */
export const isAlertingIncident = (responses: ReadonlyArray<ScoredResponse>): boolean =>
  responses.some((r) => (r.question_id === "incident_type" && r.answer === "self_harm") || (r.question_id === "injuries" && r.answer === "yes"))
