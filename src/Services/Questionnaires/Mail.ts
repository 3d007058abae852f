/**
 * What the questionnaire jobs do (issue 21): the invite link, the self-harm alert and the screener
 * result mails, and the screeners' purge. Each mail claims its row first (compare-and-swap on a
 * `*_mailed_at`/`notified_at` column) inside the transaction that sends it: a job run twice sends once.
 * Mails carry links and ids, never names or answers.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { AppConfig } from "../AppConfig.js"
import { Mailer } from "../Mailer.js"
import { hashToken } from "../Tokens.js"

/** Public screeners are kept this long. */
export const screenerRetentionDays = 180

export class QuestionnaireMail extends Effect.Service<QuestionnaireMail>()("app/QuestionnaireMail", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const config = yield* AppConfig

    /** Sends in the claiming transaction: a failed send rolls the claim back and the job retries. */
    const sendOrFail = (mail: Parameters<typeof mailer.send>[0]) => Effect.asVoid(mailer.send(mail))

    const alert = (alertId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<{ id: number; response_id: number | null; marketing_id: number | null; provider_email: string | null }>`
          UPDATE questionnaire_alerts a SET notified_at = now()
          WHERE a.id = ${alertId} AND a.notified_at IS NULL
          RETURNING a.id, a.questionnaire_response_id AS response_id, a.marketing_questionnaire_id AS marketing_id,
            (SELECT u.email FROM patients p JOIN providers pr ON pr.id = p.provider_id JOIN users u ON u.id = pr.user_id
              WHERE p.id = a.patient_id AND u.deleted_at IS NULL) AS provider_email`
        if (row === undefined) return
        const link = row.response_id !== null
          ? `${config.publicBaseUrl}/v1/clinic/patients/questionnaires/${row.response_id}`
          : null
        yield* sendOrFail({
          to: [row.provider_email ?? config.clinicalAlertEmail],
          subject: "Questionnaire safety alert",
          text: [
            link !== null
              ? `A questionnaire response needs clinical review today: an answer about self-harm was given.\n\n${link}`
              : `A public screener (#${row.marketing_id}) was submitted with an answer about self-harm. It holds no patient record.`,
            "Open it in the clinic application; review acknowledges the alert."
          ].join("\n\n")
        })
      })).pipe(Effect.withSpan("QuestionnaireMail.alert", { attributes: { "questionnaire_alert.id": alertId } }))

    const invite = (inviteId: number, token: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<{ email: string; title: string; due_date: string | null; message: string | null }>`
          UPDATE questionnaire_invites i SET mailed_at = now()
          FROM questionnaires q
          WHERE i.id = ${inviteId} AND q.id = i.questionnaire_id AND i.mailed_at IS NULL
            AND i.status IN ('sent', 'opened') AND i.token_hash = ${hashToken(token)}
          RETURNING i.email, q.title, to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.message`
        if (row === undefined) return
        const link = `${config.publicBaseUrl}/v1/questionnaire_invites/form?token=${encodeURIComponent(token)}`
        yield* sendOrFail({
          to: [row.email],
          subject: `Please fill in: ${row.title}`,
          text: [
            `Your care team asks you to fill in the ${row.title} questionnaire${row.due_date === null ? "" : ` by ${row.due_date}`}.`,
            ...(row.message === null ? [] : [row.message]),
            `Open this link to answer (it works once):\n${link}`
          ].join("\n\n")
        })
      })).pipe(Effect.withSpan("QuestionnaireMail.invite", { attributes: { "questionnaire_invite.id": inviteId } }))

    const screenerResult = (screenerId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<{ email: string; severity: string | null; title: string }>`
          UPDATE marketing_questionnaires m SET result_mailed_at = now()
          FROM questionnaires q
          WHERE m.id = ${screenerId} AND q.id = m.questionnaire_id AND m.result_mailed_at IS NULL
          RETURNING m.email, m.severity, q.title`
        if (row === undefined) return
        yield* sendOrFail({
          to: [row.email],
          subject: `Your ${row.title} result`,
          text: [
            `Your result: ${row.severity === null ? "not scored" : row.severity.replace(/_/g, " ")}.`,
            "A screener is not a diagnosis. If you are worried, talk to a clinician. In a crisis call or text 988, or call 911."
          ].join("\n\n")
        })
      })).pipe(Effect.withSpan("QuestionnaireMail.screenerResult", { attributes: { "marketing_questionnaire.id": screenerId } }))

    /** Deletes public screeners older than the retention period; returns how many. */
    const purgeScreeners = Effect.gen(function*() {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - screenerRetentionDays * 86_400_000)
      const rows = yield* sql<{ id: number }>`DELETE FROM marketing_questionnaires WHERE created_at < ${cutoff} RETURNING id`
      yield* Effect.annotateCurrentSpan("marketing_questionnaires.purged", rows.length)
      return rows.length
    }).pipe(Effect.withSpan("QuestionnaireMail.purgeScreeners"))

    return { alert, invite, screenerResult, purgeScreeners } as const
  })
}) {}
