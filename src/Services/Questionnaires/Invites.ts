/**
 * Questionnaire invites (general §4.12; issue 21). The emailed token is the respondent's only
 * credential: stored hashed, single use (claimed under a row lock in the transaction that saves the
 * answers, so a 422 keeps it and concurrent sends give one 201), per-address rate limits.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import type { AnswerInput } from "../../Api/Questionnaires/Questionnaires.js"
import type { CreateQuestionnaireInviteRequest } from "../../Api/Questionnaires/Invites.js"
import { InviteForm, InviteResponseReceipt, QuestionnaireInvite } from "../../Domain/Questionnaires/Questionnaire.js"
import { addDays, instantOf, wallClockAt } from "../../Domain/Scheduling/ZonedTime.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { Access, type Viewer } from "../Access/Access.js"
import { RateLimiter } from "../RateLimiter.js"
import { hashToken, newToken } from "../Tokens.js"
import { mergeAnswers } from "./Answers.js"
import { Catalogue } from "./Catalogue.js"
import { crisisResourcesOf, evaluate, QuestionnaireResponses } from "./Responses.js"
import { questionnaireInviteTask } from "./Tasks.js"

export const inviteRules = {
  defaultDays: 14,
  maxDays: 30,
  perAddress: { limit: 30, window: "1 minute" }
} as const

export const inviteNotFound = () => notFound("Invite")
/** Arbitrary constant, the first key of the advisory lock serialising invites of one patient and questionnaire. */
const inviteLockSpace = 7_340_221

interface InviteRow {
  readonly id: number
  readonly questionnaire_id: number
  readonly patient_id: number
  readonly email: string
  readonly due_date: string | null
  readonly message: string | null
  readonly status: QuestionnaireInvite["status"]
  readonly expires_at: Date
  readonly created_at: Date
}

const columns = `id, questionnaire_id, patient_id, email, to_char(due_date, 'YYYY-MM-DD') AS due_date, message, status, expires_at, created_at`

const pad = (n: number) => String(n).padStart(2, "0")

export class QuestionnaireInvites extends Effect.Service<QuestionnaireInvites>()("app/QuestionnaireInvites", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog
    const jobs = yield* Jobs
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const catalogue = yield* Catalogue
    const responses = yield* QuestionnaireResponses
    const cols = sql.literal(columns)

    /** When an invite stops working: the end of its due date on the clinic's clock, else in 14 days. */
    const expiryOf = (now: Date, dueDate: string | null | undefined) =>
      Effect.gen(function*() {
        if (dueDate === null || dueDate === undefined) return new Date(now.getTime() + inviteRules.defaultDays * 86_400_000)
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

    const create = (viewer: Viewer, input: CreateQuestionnaireInviteRequest["questionnaire_invite"]) =>
      Effect.gen(function*() {
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
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          // One open invite per patient and questionnaire: concurrent invites queue here, the later revokes the earlier.
          yield* sql`SELECT pg_advisory_xact_lock(${inviteLockSpace}, ${patient})`
          yield* sql`UPDATE questionnaire_invites SET status = 'revoked', revoked_at = ${now}, updated_at = ${now}
            WHERE patient_id = ${patient} AND questionnaire_id = ${input.questionnaire_id} AND status IN ('sent', 'opened')`
          const [row] = yield* sql<InviteRow>`INSERT INTO questionnaire_invites (questionnaire_id, patient_id, email, due_date, message,
              token_hash, expires_at, invited_by_id, created_at, updated_at)
            VALUES (${input.questionnaire_id}, ${patient}, ${input.email.trim()}, ${input.due_date ?? null}, ${input.message ?? null},
              ${hashToken(token)}, ${expiresAt.right}, ${viewer.id}, ${now}, ${now})
            RETURNING ${cols}`
          yield* jobs.enqueue(questionnaireInviteTask, { invite_id: row!.id, token })
          yield* audit.record({ actorId: viewer.id, action: "questionnaire_invite.create", targetType: "questionnaire_invite", targetId: row!.id })
          return row!
        }))
        return QuestionnaireInvite.make(row, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireInvites.create"))

    const limit = (address: string) => limiter.enforce(`questionnaire_invite:${address}`, inviteRules.perAddress)

    const form = (address: string, token: string) =>
      Effect.gen(function*() {
        yield* limit(address)
        const now = new Date(yield* Clock.currentTimeMillis)
        const [row] = yield* sql<InviteRow>`UPDATE questionnaire_invites SET status = 'opened', opened_at = coalesce(opened_at, ${now}),
            updated_at = ${now}
          WHERE token_hash = ${hashToken(token)} AND status IN ('sent', 'opened') AND expires_at > ${now}
          RETURNING ${cols}`
        if (row === undefined) return yield* Effect.fail(inviteNotFound())
        const questionnaire = yield* Effect.catchTag(catalogue.show(row.questionnaire_id), "NotFound", () => Effect.dieMessage("invite's questionnaire missing"))
        return InviteForm.make({ invite: { due_date: row.due_date, expires_at: row.expires_at, message: row.message }, questionnaire }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireInvites.form"))

    const respond = (address: string, input: { readonly token: string; readonly responses: ReadonlyArray<AnswerInput> }) =>
      Effect.gen(function*() {
        yield* limit(address)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          // Locked: of concurrent submissions with one token, the first claims it, the others find it completed.
          const [invite] = yield* sql<InviteRow>`SELECT ${cols} FROM questionnaire_invites
            WHERE token_hash = ${hashToken(input.token)} AND status IN ('sent', 'opened') AND expires_at > ${now} FOR UPDATE`
          if (invite === undefined) return yield* Effect.fail(inviteNotFound())
          const def = yield* catalogue.definition(invite.questionnaire_id)
          if (def === undefined) return yield* Effect.dieMessage("invite's questionnaire missing")
          const answers = mergeAnswers({}, yield* responses.checked(def, input.responses))
          const { result } = evaluate(def, answers)
          if (!result.complete) {
            return yield* Effect.fail(invalidField("responses", result.invalid ? "leave too many questions blank" : "must answer every required question"))
          }
          yield* sql`UPDATE questionnaire_invites SET status = 'completed', completed_at = ${now}, updated_at = ${now} WHERE id = ${invite.id}`
          const row = yield* responses.insert(def, invite.patient_id, answers, "submitted", { actorId: null, inviteId: invite.id })
          return InviteResponseReceipt.make({ id: row.id, status: "submitted", crisis_resources: crisisResourcesOf(row.flags) }, true)
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireInvites.respond"))

    return { create, form, respond } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, RateLimiter.Default, Catalogue.Default, QuestionnaireResponses.Default]
}) {}
