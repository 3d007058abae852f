/**
 * Questionnaire scoring and the response status machine: pure functions over an
 * instrument's questions, its scoring spec and the answers given. No I/O; property-tested.
 */
import { Schema } from "effect"

export const QuestionType = Schema.Literal("multiple_choice", "scale", "text", "yes_no", "checkbox", "date")
export type QuestionType = typeof QuestionType.Type

export const QuestionOption = Schema.Struct({ label: Schema.String, points: Schema.NullOr(Schema.Int) })
export type QuestionOption = typeof QuestionOption.Type

/** A question as scoring reads it. */
export interface QuestionDef {
  readonly id: number
  readonly key: string
  readonly type: QuestionType
  readonly options: ReadonlyArray<QuestionOption>
  readonly required: boolean
}

/** The scoring spec of one instrument version (stored as `questionnaires.scoring`). */
export const ScoringSpec = Schema.Struct({
  /** Total → severity; the first band holding the total wins. */
  bands: Schema.optional(Schema.Array(Schema.Struct({ min: Schema.Int, max: Schema.Int, severity: Schema.String }))),
  /** Sums over question keys; `cutoff`: positive at or above it. */
  subscales: Schema.optional(Schema.Array(Schema.Struct({
    key: Schema.String,
    items: Schema.Array(Schema.String),
    cutoff: Schema.optional(Schema.Int)
  }))),
  /** Positive (severity `positive`, else `negative`) when the total reaches it or a subscale its cutoff. */
  positive_total: Schema.optional(Schema.Int),
  /** Scored items that may be left blank (counted 0); one more and the form is invalid. */
  max_blanks: Schema.optional(Schema.Int),
  /** Answers that flag `self_harm` the moment they are saved. */
  self_harm: Schema.optional(Schema.Array(Schema.Struct({
    key: Schema.String,
    min_points: Schema.optional(Schema.Int),
    answers: Schema.optional(Schema.Array(Schema.String))
  })))
})
export type ScoringSpec = typeof ScoringSpec.Type

/** An answer as stored: an option label, a list of labels (checkbox), text, or a YYYY-MM-DD date. */
export type Answer = string | ReadonlyArray<string>

export const maxTextAnswer = 2000

export const answerMessages = {
  notIncluded: "is not included in the list",
  tooLong: `is too long (maximum is ${maxTextAnswer} characters)`,
  invalidDate: "invalid format",
  blank: "can't be blank"
} as const

const isValidDate = (s: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (match === null) return false
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(y, m - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
}

const codePoints = (s: string) => Array.from(s).length

/** Why an answer does not fit its question, or undefined when it does. */
export const answerProblem = (question: QuestionDef, answer: unknown): string | undefined => {
  const labels = question.options.map((o) => o.label)
  switch (question.type) {
    case "multiple_choice":
    case "scale":
    case "yes_no":
      return typeof answer === "string" && labels.includes(answer) ? undefined : answerMessages.notIncluded
    case "checkbox":
      return Array.isArray(answer) && answer.length > 0 && answer.every((a) => typeof a === "string" && labels.includes(a)) &&
          new Set(answer).size === answer.length
        ? undefined
        : answerMessages.notIncluded
    case "text":
      if (typeof answer !== "string") return answerMessages.notIncluded
      if (answer.trim().length === 0) return answerMessages.blank
      return codePoints(answer) <= maxTextAnswer ? undefined : answerMessages.tooLong
    case "date":
      return typeof answer === "string" && isValidDate(answer) ? undefined : answerMessages.invalidDate
  }
}

/** Points of one answered question; null when the question (or the chosen option) is unscored. */
export const itemPoints = (question: QuestionDef, answer: Answer | undefined): number | null => {
  if (answer === undefined) return null
  const pointsOf = (label: string) => question.options.find((o) => o.label === label)?.points ?? null
  if (typeof answer === "string") {
    return question.type === "text" || question.type === "date" ? null : pointsOf(answer)
  }
  const points = answer.map(pointsOf).filter((p): p is number => p !== null)
  return points.length === 0 ? null : points.reduce((a, b) => a + b, 0)
}

/** Whether a question carries points at all (some option has them). */
export const isScored = (question: QuestionDef): boolean => question.options.some((o) => o.points !== null)

export interface ScoreResult {
  /** Every required question answered and no more blanks than allowed. */
  readonly complete: boolean
  /** Too many scored items left blank (PSC-17: 4 or more). */
  readonly invalid: boolean
  readonly score: number | null
  readonly severity: string | null
  readonly subscales: Readonly<Record<string, number>>
  readonly flags: ReadonlyArray<string>
}

/**
 * Scores a response. `score` (and severity, subscales) only once the response is complete; the
 * `self_harm` flag as soon as an answer that raises it is present, complete or not.
 */
export const scoreResponse = (
  questions: ReadonlyArray<QuestionDef>,
  spec: ScoringSpec,
  answers: ReadonlyMap<number, Answer>
): ScoreResult => {
  const byKey = new Map(questions.map((q) => [q.key, q]))
  const answerOf = (q: QuestionDef) => answers.get(q.id)
  const flags: Array<string> = []
  const selfHarm = (spec.self_harm ?? []).some((rule) => {
    const q = byKey.get(rule.key)
    if (q === undefined) return false
    const answer = answerOf(q)
    if (answer === undefined) return false
    if (rule.min_points !== undefined) {
      const points = itemPoints(q, answer)
      if (points !== null && points >= rule.min_points) return true
    }
    if (rule.answers !== undefined) {
      const given = typeof answer === "string" ? [answer] : answer
      if (given.some((a) => rule.answers!.includes(a))) return true
    }
    return false
  })
  if (selfHarm) flags.push("self_harm")

  const requiredMissing = questions.some((q) => q.required && answerOf(q) === undefined)
  const blanks = questions.filter((q) => isScored(q) && answerOf(q) === undefined).length
  const invalid = spec.max_blanks !== undefined && blanks > spec.max_blanks
  const complete = !requiredMissing && !invalid
  if (!complete) {
    return { complete, invalid, score: null, severity: invalid ? "invalid" : null, subscales: {}, flags }
  }

  const points = (q: QuestionDef | undefined) => (q === undefined ? 0 : itemPoints(q, answerOf(q)) ?? 0)
  const score = questions.reduce((sum, q) => sum + points(q), 0)
  const subscales: Record<string, number> = {}
  let anySubscalePositive = false
  for (const sub of spec.subscales ?? []) {
    const value = sub.items.reduce((sum, key) => sum + points(byKey.get(key)), 0)
    subscales[sub.key] = value
    if (sub.cutoff !== undefined && value >= sub.cutoff) {
      anySubscalePositive = true
      flags.push(`${sub.key}_positive`)
    }
  }
  let severity: string | null = null
  if (spec.positive_total !== undefined) {
    const positive = score >= spec.positive_total || anySubscalePositive
    severity = positive ? "positive" : "negative"
    if (positive) flags.push("positive")
  } else {
    severity = spec.bands?.find((b) => score >= b.min && score <= b.max)?.severity ?? null
  }
  return { complete, invalid, score, severity, subscales, flags }
}

/** The lowest and highest total an instrument can score. */
export const scoreRange = (questions: ReadonlyArray<QuestionDef>): { readonly min: number; readonly max: number } =>
  questions.reduce((range, q) => {
    const points = q.options.map((o) => o.points).filter((p): p is number => p !== null)
    if (points.length === 0) return range
    const max = q.type === "checkbox" ? points.filter((p) => p > 0).reduce((a, b) => a + b, 0) : Math.max(...points)
    return { min: range.min + Math.min(0, ...points), max: range.max + max }
  }, { min: 0, max: 0 })

// ---------------------------------------------------------------------------------------------
// Status machine

export const ResponseStatus = Schema.Literal("started", "in_progress", "completed", "submitted", "reviewed")
export type ResponseStatus = typeof ResponseStatus.Type

/** Statuses the answers decide by themselves (before the respondent submits). */
export const isOpen = (status: ResponseStatus): boolean => status === "started" || status === "in_progress" || status === "completed"

/** The status the answers alone give an open response. */
export const derivedStatus = (answered: number, complete: boolean): ResponseStatus =>
  complete ? "completed" : answered === 0 ? "started" : "in_progress"

export type Transition =
  | { readonly _tag: "Ok"; readonly status: ResponseStatus }
  | { readonly _tag: "Refused"; readonly message: string }

const refused = (from: ResponseStatus, to: ResponseStatus): Transition => ({ _tag: "Refused", message: `cannot change from ${from} to ${to}` })

/**
 * The status after an update. `current`: the stored status; `derived`: what the answers (after
 * this update's changes) give; `answersChanged`: the update changes answers; `requested`: the
 * status asked for, if any.
 * - Open responses follow their answers (started → in_progress → completed, and back when an
 *   answer is cleared); asking for one of those explicitly must agree with the answers.
 * - submitted: only from completed. reviewed: from completed or submitted (staff; final).
 * - After submission answers are frozen, and only submitted → reviewed moves on.
 */
export const nextStatus = (
  current: ResponseStatus,
  derived: ResponseStatus,
  answersChanged: boolean,
  requested: ResponseStatus | undefined
): Transition => {
  if (!isOpen(current)) {
    if (answersChanged) return refused(current, derived)
    if (requested === undefined || requested === current) return { _tag: "Ok", status: current }
    if (current === "submitted" && requested === "reviewed") return { _tag: "Ok", status: "reviewed" }
    return refused(current, requested)
  }
  if (requested === undefined) return { _tag: "Ok", status: derived }
  if (isOpen(requested)) return requested === derived ? { _tag: "Ok", status: derived } : refused(derived, requested)
  // submitted or reviewed: the answers must make it complete.
  return derived === "completed" ? { _tag: "Ok", status: requested } : refused(derived, requested)
}

/** What a respondent who flagged self-harm is shown at once. */
export const crisisResources = [
  { name: "988 Suicide & Crisis Lifeline", contact: "Call or text 988", url: "https://988lifeline.org" },
  { name: "Emergency services", contact: "Call 911", url: null }
] as const
