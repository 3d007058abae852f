/**
 * Self-harm alerts (issue 21): raised in the transaction that saves the answer — the alert row (at
 * most one per response or screener: a unique index settles it), the audit entry and the job that
 * mails the clinician a link. Never retracted; a review acknowledges it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { questionnaireAlertTask } from "./Tasks.js"

export type AlertTarget =
  | { readonly _tag: "Response"; readonly id: number; readonly patientId: number }
  | { readonly _tag: "Screener"; readonly id: number }

export class QuestionnaireAlerts extends Effect.Service<QuestionnaireAlerts>()("app/QuestionnaireAlerts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const jobs = yield* Jobs

    /** Call inside the saving transaction. Returns whether this call raised it (false: it already was). */
    const raise = (target: AlertTarget, actorId: number | null) =>
      Effect.gen(function*() {
        const rows = target._tag === "Response"
          ? yield* sql<{ id: number }>`INSERT INTO questionnaire_alerts (questionnaire_response_id, patient_id)
              VALUES (${target.id}, ${target.patientId}) ON CONFLICT DO NOTHING RETURNING id`
          : yield* sql<{ id: number }>`INSERT INTO questionnaire_alerts (marketing_questionnaire_id)
              VALUES (${target.id}) ON CONFLICT DO NOTHING RETURNING id`
        const alert = rows[0]
        if (alert === undefined) return false
        yield* audit.record({
          actorId,
          action: "questionnaire.self_harm_alert",
          targetType: target._tag === "Response" ? "questionnaire_response" : "marketing_questionnaire",
          targetId: target.id
        })
        yield* jobs.enqueue(questionnaireAlertTask, { alert_id: alert.id })
        return true
      }).pipe(Effect.orDie, Effect.withSpan("QuestionnaireAlerts.raise", { attributes: { "questionnaire.target_id": target.id } }))

    /** A review acknowledges the response's alert. */
    const acknowledge = (responseId: number, userId: number, at: Date) =>
      sql`UPDATE questionnaire_alerts SET acknowledged_by_id = ${userId}, acknowledged_at = ${at}
        WHERE questionnaire_response_id = ${responseId} AND acknowledged_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)

    return { raise, acknowledge } as const
  }),
  dependencies: [AuditLog.Default]
}) {}
