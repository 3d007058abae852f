/** The only SQL on `marketing_questionnaires`, the public screeners (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Subscales } from "../../Domain/Questionnaires/Questionnaire.js"
import { orDefect, SqlSchema, textArray } from "../Repository.js"
import { now } from "../Time.js"
import { StoredAnswers } from "./QuestionnaireResponsesRepo.js"

export const NewScreener = Schema.Struct({
  questionnaireId: Schema.Number,
  email: Schema.String,
  answers: StoredAnswers,
  score: Schema.NullOr(Schema.Int),
  severity: Schema.NullOr(Schema.String),
  subscales: Subscales,
  flags: Schema.Array(Schema.String),
  at: Schema.DateFromSelf
})

/** What the result mail says. */
export const ScreenerMail = Schema.Struct({ email: Schema.String, severity: Schema.NullOr(Schema.String), title: Schema.String })

export class MarketingQuestionnairesRepo extends Effect.Service<MarketingQuestionnairesRepo>()("app/MarketingQuestionnairesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertOne = SqlSchema.single({
      Request: NewScreener,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (s) =>
        sql`INSERT INTO marketing_questionnaires (questionnaire_id, email, answers, score, severity,
              subscales, flags, created_at)
            VALUES (${s.questionnaireId}, ${s.email}, ${JSON.stringify(s.answers)}::jsonb, ${s.score}, ${s.severity},
              ${JSON.stringify(s.subscales)}::jsonb, ${textArray(s.flags)}::text[], ${s.at})
            RETURNING id`
    })

    const claimResultMail = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      Result: ScreenerMail,
      execute: ({ at, id }) =>
        sql`
          UPDATE marketing_questionnaires m SET result_mailed_at = ${at}
          FROM questionnaires q
          WHERE m.id = ${id} AND q.id = m.questionnaire_id AND m.result_mailed_at IS NULL
          RETURNING m.email, m.severity, q.title`
    })

    const deleteOlder = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (cutoff) => sql`DELETE FROM marketing_questionnaires WHERE created_at < ${cutoff} RETURNING id`
    })

    return {
      /** The new screener's id. */
      insert: (screener: typeof NewScreener.Type) => Effect.map(orDefect(insertOne(screener)), (row) => row.id),
      /** Marks the result mailed; none when it already was (a job run twice mails once). */
      claimResultMail: (id: number) => Effect.flatMap(now, (at) => orDefect(claimResultMail({ id, at }))),
      /** Deletes the screeners created before `cutoff`; returns how many. */
      deleteCreatedBefore: (cutoff: Date) => Effect.map(orDefect(deleteOlder(cutoff)), (rows) => rows.length)
    } as const
  })
}) {}
