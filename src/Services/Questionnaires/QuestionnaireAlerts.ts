/**
 * Self-harm alerts: raised in the transaction that saves the answer — the alert row (at
 * most one per response or screener: a unique index settles it), the audit entry and the job that
 * mails the clinician a link. Never retracted; a review acknowledges it.
 */
import { Effect, Option } from "effect"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { QuestionnaireAlertsRepo } from "./QuestionnaireAlertsRepo.js"
import { questionnaireAlertTask } from "./Tasks.js"

export type AlertTarget =
  | { readonly _tag: "Response"; readonly id: number; readonly patientId: number }
  | { readonly _tag: "Screener"; readonly id: number }

export class QuestionnaireAlerts extends Effect.Service<QuestionnaireAlerts>()("app/QuestionnaireAlerts", {
  effect: Effect.gen(function*() {
    const repo = yield* QuestionnaireAlertsRepo
    const audit = yield* AuditLog
    const jobs = yield* Jobs

    /** Call inside the saving transaction. Returns whether this call raised it (false: it already was). */
    const raise = Effect.fn("QuestionnaireAlerts.raise")(function*(target: AlertTarget, actorId: number | null) {
      yield* Effect.annotateCurrentSpan({ "questionnaire.target_id": target.id })
      const alert = target._tag === "Response"
        ? yield* repo.raiseForResponse(target.id, target.patientId)
        : yield* repo.raiseForScreener(target.id)
      if (Option.isNone(alert)) return false
      yield* audit.record({
        actorId,
        action: "questionnaire.self_harm_alert",
        targetType: target._tag === "Response" ? "questionnaire_response" : "marketing_questionnaire",
        targetId: target.id
      })
      yield* jobs.enqueue(questionnaireAlertTask, { alert_id: alert.value })
      return true
    }, Effect.orDie)

    /** A review acknowledges the response's alert. */
    const acknowledge = (responseId: number, userId: number, at: Date) => repo.acknowledge(responseId, userId, at)

    return { raise, acknowledge } as const
  }),
  dependencies: [QuestionnaireAlertsRepo.Default, AuditLog.Default]
}) {}
