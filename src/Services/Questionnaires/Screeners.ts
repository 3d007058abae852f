/**
 * Public screeners (general §4.12 marketing questionnaires): anonymous, scored at once,
 * the band emailed, kept 180 days (daily purge job). Rate-limited per client address and per email.
 */
import { Clock, Effect } from "effect"
import { invalidField } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import type { CreateScreenerRequest } from "../../Api/Questionnaires/Screeners.js"
import { ScreenerResult, type TargetAudience } from "../../Domain/Questionnaires/Questionnaire.js"
import { Jobs } from "../Jobs.js"
import { addressLimits } from "../AddressLimits.js"
import { AppConfig } from "../AppConfig.js"
import { RateLimiter } from "../RateLimiter.js"
import { makeTransaction } from "../Repository.js"
import { QuestionnaireAlerts } from "./QuestionnaireAlerts.js"
import { mergeAnswers } from "./Answers.js"
import { Catalogue } from "./Catalogue.js"
import { MarketingQuestionnairesRepo } from "./MarketingQuestionnairesRepo.js"
import { crisisResourcesOf, evaluate, mustExist, QuestionnaireResponses } from "./QuestionnaireResponses.js"
import { screenerResultTask } from "./Tasks.js"

export const screenerLimits = {
  perEmail: { limit: 3, window: "1 day" }
} as const

export class Screeners extends Effect.Service<Screeners>()("app/Screeners", {
  effect: Effect.gen(function*() {
    const repo = yield* MarketingQuestionnairesRepo
    const transaction = yield* makeTransaction
    const catalogue = yield* Catalogue
    const responses = yield* QuestionnaireResponses
    const alerts = yield* QuestionnaireAlerts
    const limiter = yield* RateLimiter
    const jobs = yield* Jobs
    const perAddress = addressLimits((yield* AppConfig).addressLimits).screener

    const list = (targetAudience: TargetAudience | undefined, request: PageRequest) =>
      Effect.map(catalogue.list({ targetAudience, screenersOnly: true }, request), (page) => ({
        marketing_questionnaires: page.questionnaires,
        pagination: page.pagination
      }))

    const create = Effect.fn("Screeners.create")(function*(address: string, input: CreateScreenerRequest["marketing_questionnaire"]) {
      if (input.website !== undefined && input.website.trim() !== "") return yield* Effect.fail(invalidField("website", "must be blank"))
      const def = (yield* catalogue.isActive(input.questionnaire_id)) ? yield* catalogue.definition(input.questionnaire_id) : undefined
      if (def === undefined || def.targetAudience === null) return yield* Effect.fail(mustExist())
      const answers = mergeAnswers({}, yield* responses.checked(def, input.responses))
      const { result } = evaluate(def, answers)
      const email = input.email.trim()
      return yield* transaction(Effect.gen(function*() {
        yield* limiter.enforce(`screener_address:${address}`, perAddress)
        yield* limiter.enforce(`screener_email:${email.toLowerCase()}`, screenerLimits.perEmail)
        const now = new Date(yield* Clock.currentTimeMillis)
        const id = yield* repo.insert({
          questionnaireId: def.id, email, answers, score: result.score, severity: result.severity,
          subscales: result.subscales, flags: result.flags, at: now
        })
        if (result.flags.includes("self_harm")) yield* alerts.raise({ _tag: "Screener", id: id }, null)
        yield* jobs.enqueue(screenerResultTask, { marketing_questionnaire_id: id })
        return ScreenerResult.make({
          id: id, score: result.score, severity: result.severity, subscales: result.subscales,
          crisis_resources: crisisResourcesOf(result.flags)
        }, true)
      }))
    })

    return { list, create } as const
  }),
  dependencies: [MarketingQuestionnairesRepo.Default, Catalogue.Default, QuestionnaireResponses.Default, QuestionnaireAlerts.Default, RateLimiter.Default]
}) {}
