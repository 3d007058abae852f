/** The only SQL on `questionnaire_questions` (ARCHITECTURE "Persistence"): a version's questions, written once when it is seeded. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { QuestionnaireId } from "../../Domain/Ids.js"
import { QuestionOption, QuestionType } from "../../Domain/Questionnaires/Scoring.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const QuestionRow = Schema.Struct({
  id: Schema.Int,
  questionnaire_id: QuestionnaireId,
  position: Schema.Int,
  key: Schema.String,
  text: Schema.String,
  type: QuestionType,
  options: Schema.Array(QuestionOption),
  required: Schema.Boolean
})
export type QuestionRow = typeof QuestionRow.Type

export const NewQuestion = Schema.Struct(QuestionRow.omit("id").fields)
export type NewQuestion = typeof NewQuestion.Type

export class QuestionnaireQuestionsRepo extends Effect.Service<QuestionnaireQuestionsRepo>()("app/QuestionnaireQuestionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertMany = SqlSchema.void({
      Request: Schema.Array(NewQuestion),
      execute: (questions) =>
        sql`INSERT INTO questionnaire_questions ${sql.insert(questions.map((q) => ({ ...q, options: JSON.stringify(q.options) })))}`
    })

    const ofVersions = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: QuestionRow,
      execute: (ids) =>
        sql`SELECT id, questionnaire_id, position, key, text, type, options, required
            FROM questionnaire_questions WHERE questionnaire_id IN ${sql.in(ids)} ORDER BY questionnaire_id, position`
    })

    return {
      insertMany: (questions: ReadonlyArray<NewQuestion>) => orDefect(insertMany(questions)),
      /** The questions of these versions, by version and position. */
      ofVersions: (ids: ReadonlyArray<number>) =>
        ids.length === 0 ? Effect.succeed([] as ReadonlyArray<QuestionRow>) : orDefect(ofVersions(ids))
    } as const
  })
}) {}
