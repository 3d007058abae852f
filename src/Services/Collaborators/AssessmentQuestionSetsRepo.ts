/** The only SQL on `assessment_question_sets`, the seeded versioned sets (ARCHITECTURE "Persistence"). */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AssessmentType } from "../../Domain/Collaborators/Collaborator.js"
import { orDefect, SqlSchema } from "../Repository.js"

/** A set as stored: questions and bands are jsonb, decoded by the question-set rules. */
export const QuestionSetRow = Schema.Struct({ version: Schema.Int, questions: Schema.Unknown, bands: Schema.Unknown })
export type QuestionSetRow = typeof QuestionSetRow.Type

export class AssessmentQuestionSetsRepo extends Effect.Service<AssessmentQuestionSetsRepo>()("app/AssessmentQuestionSetsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const latest = SqlSchema.findOne({
      Request: AssessmentType,
      Result: QuestionSetRow,
      execute: (type) => sql`SELECT version, questions, bands FROM assessment_question_sets
              WHERE assessment_type = ${type} ORDER BY version DESC LIMIT 1`
    })

    const byVersion = SqlSchema.findOne({
      Request: Schema.Struct({ type: AssessmentType, version: Schema.Int }),
      Result: QuestionSetRow,
      execute: ({ type, version }) => sql`SELECT version, questions, bands FROM assessment_question_sets
              WHERE assessment_type = ${type} AND version = ${version}`
    })

    return {
      /** The newest set of the type. */
      latest: (type: AssessmentType) => orDefect(latest(type)),
      /** The set an assessment recorded. */
      byVersion: (type: AssessmentType, version: number) => orDefect(byVersion({ type, version }))
    } as const
  })
}) {}
