/**
 * Questionnaire invites (general §4.12). The emailed token is the respondent's only
 * credential: stored hashed, single use (claimed under a row lock in the transaction that saves the
 * answers, so a 422 keeps it and concurrent sends give one 201), per-address rate limits.
 */
import { Clock, Effect, Option } from "effect"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import type { AnswerInput } from "../../Api/Questionnaires/Questionnaires.js"
import type { CreateQuestionnaireInviteRequest } from "../../Api/Questionnaires/Invites.js"
import { InviteForm, InviteResponseReceipt, QuestionnaireInvite } from "../../Domain/Questionnaires/Questionnaire.js"
import { addDays, instantOf, wallClockAt } from "../../Domain/Scheduling/ZonedTime.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { Access, type Viewer } from "../Access/Access.js"
import { addressLimits } from "../AddressLimits.js"
import { RateLimiter } from "../RateLimiter.js"
import { makeTransaction } from "../Repository.js"
import { hashToken, newToken } from "../Tokens.js"
import { mergeAnswers } from "./Answers.js"
import { Catalogue } from "./Catalogue.js"
import { crisisResourcesOf, evaluate, QuestionnaireResponses } from "./QuestionnaireResponses.js"
import { QuestionnaireInvitesRepo } from "./QuestionnaireInvitesRepo.js"
import { questionnaireInviteTask } from "./Tasks.js"
import { dayMs } from "../../Domain/Time.js"

export const inviteRules = {
  defaultDays: 14,
  maxDays: 30
} as const

export const inviteNotFound = () => notFound("Invite")

const pad = (n: number) => String(n).padStart(2, "0")

export class QuestionnaireInvites extends Effect.Service<QuestionnaireInvites>()("app/QuestionnaireInvites", {
  effect: Effect.gen(function*() {
    const repo = yield* QuestionnaireInvitesRepo
    const transaction = yield* makeTransaction
    const access = yield* Access
    const audit = yield* AuditLog
    const jobs = yield* Jobs
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const perAddress = addressLimits(config.addressLimits).questionnaireInvite
    const catalogue = yield* Catalogue
    const responses = yield* QuestionnaireResponses

    /** When an invite stops working: the end of its due date on the clinic's clock, else in 14 days. */
    const expiryOf = (now: Date, dueDate: string | null | undefined) =>
      Effect.gen(function*() {
        if (dueDate === null || dueDate === undefined) return new Date(now.getTime() + inviteRules.defaultDays * dayMs)
        const zone = config.clinicTimeZone
        const today = wallClockAt(now, zone)
        const todayText = `${today.year}-${pad(today.month)}-${pad(today.day)}`
        const last = addDays(today, inviteRules.maxDays)
        const lastText = `${last.year}-${pad(last.month)}-${pad(last.day)}`
        if (dueDate < todayText) return yield* Effect.fail(invalidField("due_date", "must be in the future"))
        if (dueDate > lastText) return yield* Effect.fail(invalidField("due_date", `must be within ${inviteRules.maxDays} days`))
        const [y, m, d] = dueDate.split("-").map(Number)
        const nextDay = addDays({ year: y!, month: m!, day: d!, hour: 0, minute: 0, second: 0, millisecond: 0 }, 1)
        return instantOf(nextDay, zone)
      })

    const create = Effect.fn("QuestionnaireInvites.create")(function*(
      viewer: Viewer,
      input: CreateQuestionnaireInviteRequest["questionnaire_invite"]
    ) {
      const patient = yield* access.visiblePatient(viewer, input.patient_id)
      const now = new Date(yield* Clock.currentTimeMillis)
      const def = (yield* catalogue.isActive(input.questionnaire_id)) ? yield* catalogue.definition(input.questionnaire_id) : undefined
      const expiresAt = yield* Effect.either(expiryOf(now, input.due_date))
      const problems = {
        ...(def === undefined ? { questionnaire_id: ["must exist"] } : {}),
        ...(expiresAt._tag === "Left" ? expiresAt.left.errors : {})
      }
      if (Object.keys(problems).length > 0 || expiresAt._tag === "Left") return yield* Effect.fail(invalid(problems))
      const token = newToken()
      const row = yield* transaction(Effect.gen(function*() {
        // One open invite per patient and questionnaire: concurrent invites queue here, the later revokes the earlier.
        yield* repo.lockPatient(patient)
        yield* repo.revokeOpen(patient, input.questionnaire_id, now)
        const row = yield* repo.insert({
          questionnaireId: input.questionnaire_id,
          patientId: patient,
          email: input.email.trim(),
          dueDate: input.due_date ?? null,
          message: input.message ?? null,
          tokenHash: hashToken(token),
          expiresAt: expiresAt.right,
          invitedById: viewer.id,
          at: now
        })
        yield* jobs.enqueue(questionnaireInviteTask, { invite_id: row.id, token })
        yield* audit.record({ actorId: viewer.id, action: "questionnaire_invite.create", targetType: "questionnaire_invite", targetId: row.id })
        return row
      }))
      return QuestionnaireInvite.make(row, true)
    })

    const limit = (address: string) => limiter.enforce(`questionnaire_invite:${address}`, perAddress)

    const form = Effect.fn("QuestionnaireInvites.form")(function*(address: string, token: string) {
      yield* limit(address)
      const now = new Date(yield* Clock.currentTimeMillis)
      const opened = yield* repo.open(hashToken(token), now)
      if (Option.isNone(opened)) return yield* Effect.fail(inviteNotFound())
      const row = opened.value
      const questionnaire = yield* Effect.catchTag(catalogue.show(row.questionnaire_id), "NotFound", () => Effect.dieMessage("invite's questionnaire missing"))
      return InviteForm.make({ invite: { due_date: row.due_date, expires_at: row.expires_at, message: row.message }, questionnaire }, true)
    })

    const respond = Effect.fn("QuestionnaireInvites.respond")(function*(
      address: string,
      input: { readonly token: string; readonly responses: ReadonlyArray<AnswerInput> }
    ) {
      yield* limit(address)
      return yield* transaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        // Locked: of concurrent submissions with one token, the first claims it, the others find it completed.
        const usable = yield* repo.lockUsable(hashToken(input.token), now)
        if (Option.isNone(usable)) return yield* Effect.fail(inviteNotFound())
        const invite = usable.value
        const def = yield* catalogue.definition(invite.questionnaire_id)
        if (def === undefined) return yield* Effect.dieMessage("invite's questionnaire missing")
        const answers = mergeAnswers({}, yield* responses.checked(def, input.responses))
        const { result } = evaluate(def, answers)
        if (!result.complete) {
          return yield* Effect.fail(invalidField("responses", result.invalid ? "leave too many questions blank" : "must answer every required question"))
        }
        yield* repo.complete(invite.id, now)
        const row = yield* responses.insert(def, invite.patient_id, answers, "submitted", { actorId: null, inviteId: invite.id })
        return InviteResponseReceipt.make({ id: row.id, status: "submitted", crisis_resources: crisisResourcesOf(row.flags) }, true)
      }))
    })

    return { create, form, respond } as const
  }),
  dependencies: [QuestionnaireInvitesRepo.Default, Access.Default, AuditLog.Default, RateLimiter.Default, Catalogue.Default, QuestionnaireResponses.Default]
}) {}
