/**
 * What the collaborator assessment jobs do. Each claims its own row first (a job may
 * run twice): the link email sets `mailed_at`, the alert `alerted_at`, in the transaction that
 * sends, so a failed send is retried and a sent one is not repeated. Mails carry no health data:
 * the clinic's name, the patient's first name and the expiry (links), or a link only (alerts).
 */
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { inviteLink } from "../Providers/ProviderInvites.js"
import { makeTransaction } from "../Repository.js"
import { AssessmentTokensRepo } from "./AssessmentTokensRepo.js"
import { CollaboratorAssessmentsRepo } from "./CollaboratorAssessmentsRepo.js"
import { LinkSealKey, unseal } from "./LinkSeal.js"

export class AssessmentJobs extends Effect.Service<AssessmentJobs>()("app/CollaboratorAssessmentJobs", {
  effect: Effect.gen(function*() {
    const tokens = yield* AssessmentTokensRepo
    const assessments = yield* CollaboratorAssessmentsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const key = yield* LinkSealKey
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const linkBase = Option.getOrElse(config.collaborators.formUrl, () => `${config.publicBaseUrl}/v1/collaborator_assessments/form`)

    const sendLink = Effect.fn("CollaboratorAssessmentJobs.sendLink")(function*(tokenId: number, sealed: string) {
      yield* Effect.annotateCurrentSpan({ "token.id": tokenId })
      return yield* transaction(Effect.gen(function*() {
        const at = yield* now
        // Still usable and not yet mailed: a link revoked or used meanwhile is not sent.
        const found = yield* tokens.markMailed(tokenId, at)
        if (Option.isNone(found)) return
        const row = found.value
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
      }))
    })

    const alert = Effect.fn("CollaboratorAssessmentJobs.alert")(function*(assessmentId: number) {
      yield* Effect.annotateCurrentSpan({ "collaborator_assessment.id": assessmentId })
      return yield* transaction(Effect.gen(function*() {
        const at = yield* now
        const email = Option.getOrNull(yield* assessments.markAlerted(assessmentId, at))
        if (email === null) return
        yield* mailer.send({
          to: [email],
          subject: "An incident report needs your attention",
          text: [
            "A collaborator filed an incident report about one of your patients that needs your attention.",
            `Open it: ${config.publicBaseUrl}/v1/collaborator_assessments/${assessmentId}`
          ].join("\n\n")
        })
      }))
    })

    const expire = Effect.gen(function*() {
      const at = yield* now
      const expired = yield* assessments.expire(at)
      yield* audit.recordMany(expired.map((id) => ({
        actorId: null, action: "collaborator_assessment.expired", targetType: "collaborator_assessment", targetId: id
      })))
      yield* Effect.annotateCurrentSpan("collaborator_assessment.count", expired.length)
    }).pipe(Effect.withSpan("CollaboratorAssessmentJobs.expire"))

    return { sendLink, alert, expire } as const
  }),
  dependencies: [AssessmentTokensRepo.Default, CollaboratorAssessmentsRepo.Default, AuditLog.Default]
}) {}
