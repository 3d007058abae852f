/** Answers in requests and in storage: checked against a version's questions, merged, shown. */
import { Either } from "effect"
import type { FieldMessages } from "../../Api/Errors.js"
import type { AnswerInput } from "../../Api/Questionnaires/Questionnaires.js"
import { ResponseItem } from "../../Domain/Questionnaires/Questionnaire.js"
import { type Answer, answerMessages, answerProblem, itemPoints } from "../../Domain/Questionnaires/Scoring.js"
import type { Definition } from "./Catalogue.js"

/** Answers as stored in `answers` jsonb: question id (as text) → answer. */
export type StoredAnswers = Readonly<Record<string, Answer>>

/** jsonb refuses a lone UTF-16 surrogate (`\ud800`) that text columns would take: free text gets U+FFFD instead. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")

/**
 * The answers of a request, each checked against its question: a map of question id → answer
 * (null: clear it), or every problem at once, named `responses[i].question_id` / `responses[i].answer`.
 */
export const checkAnswers = (
  def: Definition,
  inputs: ReadonlyArray<AnswerInput>,
  field = "responses"
): Either.Either<ReadonlyMap<number, Answer | null>, FieldMessages> => {
  const problems: Record<string, Array<string>> = {}
  const changes = new Map<number, Answer | null>()
  inputs.forEach((input, i) => {
    const question = def.byId.get(input.question_id)
    if (question === undefined) {
      problems[`${field}[${i}].question_id`] = [answerMessages.notIncluded]
      return
    }
    if (input.answer === null) {
      changes.set(question.id, null)
      return
    }
    const problem = answerProblem(question, input.answer)
    if (problem !== undefined) problems[`${field}[${i}].answer`] = [problem]
    else changes.set(question.id, typeof input.answer === "string" ? wellFormed(input.answer) : input.answer)
  })
  return Object.keys(problems).length > 0 ? Either.left(problems) : Either.right(changes)
}

/** Stored answers with a request's changes applied (null clears). */
export const mergeAnswers = (stored: StoredAnswers, changes: ReadonlyMap<number, Answer | null>): StoredAnswers => {
  const merged: Record<string, Answer> = { ...stored }
  for (const [id, answer] of changes) {
    if (answer === null) delete merged[String(id)]
    else merged[String(id)] = answer
  }
  return merged
}

export const answerMap = (stored: StoredAnswers): ReadonlyMap<number, Answer> =>
  new Map(Object.entries(stored).map(([id, answer]) => [Number(id), answer]))

/** Whether the changes alter the stored answers at all. */
export const changesAnything = (stored: StoredAnswers, changes: ReadonlyMap<number, Answer | null>): boolean =>
  [...changes].some(([id, answer]) => JSON.stringify(stored[String(id)] ?? null) !== JSON.stringify(answer))

/** The answered questions in the instrument's order, with their text and points. */
export const itemsOf = (def: Definition, stored: StoredAnswers): Array<ResponseItem> =>
  def.questions.flatMap((q) => {
    const answer = stored[String(q.id)]
    return answer === undefined
      ? []
      : [ResponseItem.make({ question_id: q.id, question_text: q.text, answer, score: itemPoints(q, answer) }, true)]
  })
