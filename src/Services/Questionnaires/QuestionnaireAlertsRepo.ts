/**
 * The only SQL on `questionnaire_alerts` (ARCHITECTURE "Persistence"). The alert mail's claim also
 * reads the patient's primary provider's email from `patients`, `providers` and `users`; that read
 * stays in this statement until those areas' repositories can answer it in the same round trip.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const AlertId = Schema.Struct({ id: Schema.Int })

/** A claimed alert: what it is about and whom to mail (null: the patient has no provider with an account). */
export const ClaimedAlert = Schema.Struct({
  id: Schema.Int,
  response_id: Schema.NullOr(Schema.Int),
  marketing_id: Schema.NullOr(Schema.Int),
  provider_email: Schema.NullOr(Schema.String)
})
export type ClaimedAlert = typeof ClaimedAlert.Type

const ResponseAlert = Schema.Struct({ responseId: Schema.Number, patientId: Schema.Number })
const Acknowledgement = Schema.Struct({ responseId: Schema.Number, userId: Schema.Number, at: Schema.DateFromSelf })

export class QuestionnaireAlertsRepo extends Effect.Service<QuestionnaireAlertsRepo>()("app/QuestionnaireAlertsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertForResponse = SqlSchema.findOne({
      Request: ResponseAlert,
      Result: AlertId,
      execute: ({ patientId, responseId }) =>
        sql`INSERT INTO questionnaire_alerts (questionnaire_response_id, patient_id)
              VALUES (${responseId}, ${patientId}) ON CONFLICT DO NOTHING RETURNING id`
    })

    const insertForScreener = SqlSchema.findOne({
      Request: Schema.Number,
      Result: AlertId,
      execute: (screenerId) =>
        sql`INSERT INTO questionnaire_alerts (marketing_questionnaire_id)
              VALUES (${screenerId}) ON CONFLICT DO NOTHING RETURNING id`
    })

    const acknowledge = SqlSchema.void({
      Request: Acknowledgement,
      execute: ({ at, responseId, userId }) =>
        sql`UPDATE questionnaire_alerts SET acknowledged_by_id = ${userId}, acknowledged_at = ${at}
        WHERE questionnaire_response_id = ${responseId} AND acknowledged_at IS NULL`
    })

    const claimForMail = SqlSchema.findOne({
      Request: Schema.Struct({ alertId: Schema.Number, at: Schema.DateFromSelf }),
      Result: ClaimedAlert,
      execute: ({ alertId, at }) =>
        sql`
          UPDATE questionnaire_alerts a SET notified_at = ${at}
          WHERE a.id = ${alertId} AND a.notified_at IS NULL
          RETURNING a.id, a.questionnaire_response_id AS response_id, a.marketing_questionnaire_id AS marketing_id,
            (SELECT u.email FROM patients p JOIN providers pr ON pr.id = p.provider_id JOIN users u ON u.id = pr.user_id
              WHERE p.id = a.patient_id AND u.deleted_at IS NULL) AS provider_email`
    })

    const idOf = Option.map((row: typeof AlertId.Type) => row.id)

    return {
      /** The new alert's id, or none when the response already has one (the unique index settles it). */
      raiseForResponse: (responseId: number, patientId: number) => Effect.map(orDefect(insertForResponse({ responseId, patientId })), idOf),
      /** The new alert's id, or none when the screener already has one. */
      raiseForScreener: (screenerId: number) => Effect.map(orDefect(insertForScreener(screenerId)), idOf),
      /** The response's open alert, if any, is acknowledged. */
      acknowledge: (responseId: number, userId: number, at: Date) => orDefect(acknowledge({ responseId, userId, at })),
      /** Marks the alert notified; none when it already was (a job run twice mails once). */
      claimForMail: (alertId: number) => Effect.flatMap(now, (at) => orDefect(claimForMail({ alertId, at })))
    } as const
  })
}) {}
