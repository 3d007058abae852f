/**
 * What the collaborator assessment jobs do (issue 22). Each claims its own row first (a job may
 * run twice): the link email sets `mailed_at`, the alert `alerted_at`, in the transaction that
 * sends, so a failed send is retried and a sent one is not repeated. Mails carry no health data:
 * the clinic's name, the patient's first name and the expiry (links), or a link only (alerts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { inviteLink } from "../Providers/Invites.js"
import { LinkSealKey, unseal } from "./LinkSeal.js"

export class AssessmentJobs extends Effect.Service<AssessmentJobs>()("app/CollaboratorAssessmentJobs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const key = yield* LinkSealKey
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const linkBase = Option.getOrElse(config.collaborators.formUrl, () => `${config.publicBaseUrl}/v1/collaborator_assessments/form`)

    const sendLink = (tokenId: number, sealed: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* now
        // Still usable and not yet mailed: a link revoked or used meanwhile is not sent.
        const [row] = yield* sql<{ email: string; patient_first_name: string; expires_at: Date }>`
          UPDATE collaborator_assessment_tokens t SET mailed_at = ${at}
          FROM collaborator_assessments a, collaborators c, patients p
          WHERE t.id = ${tokenId} AND t.mailed_at IS NULL AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ${at}
            AND a.id = t.assessment_id AND a.status = 'pending' AND c.id = a.collaborator_id AND c.deleted_at IS NULL
            AND p.id = a.patient_id
          RETURNING c.email, p.first_name AS patient_first_name, t.expires_at`
        if (row === undefined) return
        const token = unseal(key, sealed)
        if (token === undefined) return yield* Effect.logWarning("assessment link payload does not unseal").pipe(Effect.annotateLogs("token.id", tokenId))
        yield* mailer.send({
          to: [row.email],
          subject: `${config.billing.name}: a short assessment`,
          text: [
            "Hello,",
            `${config.billing.name} asks you to fill in a short assessment about ${row.patient_first_name}.`,
            `Open the form: ${inviteLink(linkBase, token)}`,
            `The link works once, until ${row.expires_at.toISOString()}. If you do not want to take part, you can decline on the form.`
          ].join("\n\n")
        })
      })).pipe(Effect.withSpan("CollaboratorAssessmentJobs.sendLink", { attributes: { "token.id": tokenId } }))

    const alert = (assessmentId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* now
        const [row] = yield* sql<{ email: string | null }>`UPDATE collaborator_assessments a SET alerted_at = ${at}
          WHERE a.id = ${assessmentId} AND a.alerted_at IS NULL
          RETURNING (SELECT u.email FROM patients p JOIN providers pr ON pr.id = p.provider_id JOIN users u ON u.id = pr.user_id
            WHERE p.id = a.patient_id AND u.deleted_at IS NULL) AS email`
        if (row === undefined || row.email === null) return
        yield* mailer.send({
          to: [row.email],
          subject: "An incident report needs your attention",
          text: [
            "A collaborator filed an incident report about one of your patients that needs your attention.",
            `Open it: ${config.publicBaseUrl}/v1/collaborator_assessments/${assessmentId}`
          ].join("\n\n")
        })
      })).pipe(Effect.withSpan("CollaboratorAssessmentJobs.alert", { attributes: { "collaborator_assessment.id": assessmentId } }))

    const expire = Effect.gen(function*() {
      const at = yield* now
      const expired = yield* sql<{ id: number }>`UPDATE collaborator_assessments SET status = 'expired', updated_at = ${at}
        WHERE status = 'pending' AND expires_at <= ${at} RETURNING id`
      yield* audit.recordMany(expired.map((row) => ({
        actorId: null, action: "collaborator_assessment.expired", targetType: "collaborator_assessment", targetId: row.id
      })))
      yield* Effect.annotateCurrentSpan("collaborator_assessment.count", expired.length)
    }).pipe(Effect.withSpan("CollaboratorAssessmentJobs.expire"))

    return { sendLink, alert, expire } as const
  }),
  dependencies: [AuditLog.Default]
}) {}
