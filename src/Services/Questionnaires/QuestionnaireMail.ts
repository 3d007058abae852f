/**
 * What the questionnaire jobs do: the invite link, the self-harm alert and the screener
 * result mails, and the screeners' purge. Each mail claims its row first (compare-and-swap on a
 * `*_mailed_at`/`notified_at` column) inside the transaction that sends it: a job run twice sends once.
 * Mails carry links and ids, never names or answers.
 */
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { Mailer } from "../Mailer.js"
import { makeTransaction } from "../Repository.js"
import { hashToken } from "../Tokens.js"
import { MarketingQuestionnairesRepo } from "./MarketingQuestionnairesRepo.js"
import { QuestionnaireAlertsRepo } from "./QuestionnaireAlertsRepo.js"
import { QuestionnaireInvitesRepo } from "./QuestionnaireInvitesRepo.js"
import { dayMs } from "../../Domain/Time.js"

/** Public screeners are kept this long. */
export const screenerRetentionDays = 180

export class QuestionnaireMail extends Effect.Service<QuestionnaireMail>()("app/QuestionnaireMail", {
  effect: Effect.gen(function*() {
    const alerts = yield* QuestionnaireAlertsRepo
    const invites = yield* QuestionnaireInvitesRepo
    const screeners = yield* MarketingQuestionnairesRepo
    const transaction = yield* makeTransaction
    const mailer = yield* Mailer
    const config = yield* AppConfig

    /** Sends in the claiming transaction: a failed send rolls the claim back and the job retries. */
    const sendOrFail = (mail: Parameters<typeof mailer.send>[0]) => Effect.asVoid(mailer.send(mail))

    const alert = Effect.fn("QuestionnaireMail.alert")(function*(alertId: number) {
      yield* Effect.annotateCurrentSpan({ "questionnaire_alert.id": alertId })
      return yield* transaction(Effect.gen(function*() {
        const claimed = yield* alerts.claimForMail(alertId)
        if (Option.isNone(claimed)) return
        const row = claimed.value
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
      }))
    })

    const invite = Effect.fn("QuestionnaireMail.invite")(function*(inviteId: number, token: string) {
      yield* Effect.annotateCurrentSpan({ "questionnaire_invite.id": inviteId })
      return yield* transaction(Effect.gen(function*() {
        const claimed = yield* invites.claimForMail(inviteId, hashToken(token))
        if (Option.isNone(claimed)) return
        const row = claimed.value
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
      }))
    })

    const screenerResult = Effect.fn("QuestionnaireMail.screenerResult")(function*(screenerId: number) {
      yield* Effect.annotateCurrentSpan({ "marketing_questionnaire.id": screenerId })
      return yield* transaction(Effect.gen(function*() {
        const claimed = yield* screeners.claimResultMail(screenerId)
        if (Option.isNone(claimed)) return
        const row = claimed.value
        yield* sendOrFail({
          to: [row.email],
          subject: `Your ${row.title} result`,
          text: [
            `Your result: ${row.severity === null ? "not scored" : row.severity.replace(/_/g, " ")}.`,
            "A screener is not a diagnosis. If you are worried, talk to a clinician. In a crisis call or text 988, or call 911."
          ].join("\n\n")
        })
      }))
    })

    /** Deletes public screeners older than the retention period; returns how many. */
    const purgeScreeners = Effect.gen(function*() {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - screenerRetentionDays * dayMs)
      const purged = yield* screeners.deleteCreatedBefore(cutoff)
      yield* Effect.annotateCurrentSpan("marketing_questionnaires.purged", purged)
      return purged
    }).pipe(Effect.withSpan("QuestionnaireMail.purgeScreeners"))

    return { alert, invite, screenerResult, purgeScreeners } as const
  }),
  dependencies: [QuestionnaireAlertsRepo.Default, QuestionnaireInvitesRepo.Default, MarketingQuestionnairesRepo.Default]
}) {}
