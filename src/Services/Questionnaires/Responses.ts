/**
 * Questionnaire responses (general §2.11, §4.12, §4.2; issue 21): answers checked against their
 * questions and scored on every save (src/Domain/Questionnaires/Scoring.ts), the status machine,
 * the parent rule (Access), and the self-harm alert in the saving transaction.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either } from "effect"
import { forbidden, invalid, invalidField, messages, notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import type { AnswerInput, ResponseChanges } from "../../Api/Questionnaires/Questionnaires.js"
import { isStaff } from "../../Domain/Accounts/User.js"
import { CrisisResource, QuestionnaireResponse } from "../../Domain/Questionnaires/Questionnaire.js"
import {
  crisisResources,
  derivedStatus,
  isOpen,
  nextStatus,
  type ResponseStatus,
  scoreResponse
} from "../../Domain/Questionnaires/Scoring.js"
import { AuditLog } from "../AuditLog.js"
import { Access, type Viewer } from "../Access/Access.js"
import { QuestionnaireAlerts } from "./Alerts.js"
import { answerMap, changesAnything, checkAnswers, itemsOf, mergeAnswers, type StoredAnswers } from "./Answers.js"
import { Catalogue, type Definition } from "./Catalogue.js"

export interface ResponseRow {
  readonly id: number
  readonly questionnaire_id: number
  readonly questionnaire_version: number
  readonly patient_id: number
  readonly status: ResponseStatus
  readonly answers: StoredAnswers
  readonly score: number | null
  readonly severity: string | null
  readonly subscales: Readonly<Record<string, number>>
  readonly flags: ReadonlyArray<string>
  readonly review_notes: string | null
  readonly reviewed_by_id: number | null
  readonly reviewed_at: Date | null
  readonly completed_at: Date | null
  readonly submitted_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const responseColumns = `id, questionnaire_id, questionnaire_version, patient_id, status, answers, score, severity, subscales,
  flags, review_notes, reviewed_by_id, reviewed_at, completed_at, submitted_at, created_at, updated_at`

export const responseNotFound = () => notFound("Questionnaire response")
export const mustExist = () => invalidField("questionnaire_id", "must exist")

export const crisisResourcesOf = (flags: ReadonlyArray<string>) =>
  flags.includes("self_harm") ? crisisResources.map((r) => CrisisResource.make(r, true)) : null

export const toResponse = (def: Definition, row: ResponseRow): QuestionnaireResponse =>
  QuestionnaireResponse.make({
    id: row.id, questionnaire_id: row.questionnaire_id, questionnaire_version: row.questionnaire_version, patient_id: row.patient_id,
    status: row.status, score: row.score, severity: row.severity, subscales: row.subscales, flags: row.flags,
    responses: itemsOf(def, row.answers), review_notes: row.review_notes, reviewed_by_id: row.reviewed_by_id,
    reviewed_at: row.reviewed_at, completed_at: row.completed_at, submitted_at: row.submitted_at,
    crisis_resources: crisisResourcesOf(row.flags), created_at: row.created_at, updated_at: row.updated_at
  }, true)

/** A text[] parameter (node-postgres sends arrays as PostgreSQL array literals). */
const textArray = (items: ReadonlyArray<string>) => items as Array<string>

/** The scored state of a set of answers. */
export const evaluate = (def: Definition, answers: StoredAnswers) => {
  const result = scoreResponse(def.questions, def.scoring, answerMap(answers))
  return { result, derived: derivedStatus(Object.keys(answers).length, result.complete) }
}

export class QuestionnaireResponses extends Effect.Service<QuestionnaireResponses>()("app/QuestionnaireResponses", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog
    const catalogue = yield* Catalogue
    const alerts = yield* QuestionnaireAlerts
    const cols = sql.literal(responseColumns)

    /** An active version's definition, else 422 `questionnaire_id: must exist`. */
    const activeDefinition = (questionnaireId: number) =>
      Effect.gen(function*() {
        const def = (yield* catalogue.isActive(questionnaireId)) ? yield* catalogue.definition(questionnaireId) : undefined
        if (def === undefined) return yield* Effect.fail(mustExist())
        return def
      })

    const definitionOf = (row: ResponseRow) =>
      Effect.flatMap(catalogue.definition(row.questionnaire_id), (def) => def === undefined ? Effect.dieMessage("questionnaire of a response missing") : Effect.succeed(def))

    const checked = (def: Definition, inputs: ReadonlyArray<AnswerInput>) =>
      Either.match(checkAnswers(def, inputs), { onLeft: (problems) => Effect.fail(invalid(problems)), onRight: Effect.succeed })

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /**
     * Inserts a response (inside the caller's transaction) and raises the alert its answers call
     * for. Shared with invites, whose respondent has no account (`actorId` null).
     */
    const insert = (
      def: Definition,
      patientId: number,
      answers: StoredAnswers,
      status: ResponseStatus,
      extra: { readonly actorId: number | null; readonly inviteId: number | null }
    ) =>
      Effect.gen(function*() {
        const { result } = evaluate(def, answers)
        const at = yield* now
        const [row] = yield* sql<ResponseRow>`INSERT INTO questionnaire_responses (questionnaire_id, questionnaire_version, patient_id,
            status, answers, score, severity, subscales, flags, created_by_id, invite_id, completed_at, submitted_at, created_at, updated_at)
          VALUES (${def.id}, ${def.version}, ${patientId}, ${status}, ${JSON.stringify(answers)}::jsonb, ${result.score},
            ${result.severity}, ${JSON.stringify(result.subscales)}::jsonb, ${textArray(result.flags)}::text[], ${extra.actorId},
            ${extra.inviteId}, ${result.complete ? at : null}, ${status === "submitted" ? at : null}, ${at}, ${at})
          RETURNING ${cols}`
        if (result.flags.includes("self_harm")) {
          yield* alerts.raise({ _tag: "Response", id: row!.id, patientId }, extra.actorId)
        }
        yield* audit.record({ actorId: extra.actorId, action: "questionnaire_response.create", targetType: "questionnaire_response", targetId: row!.id })
        return row!
      })

    const create = (viewer: Viewer, input: { readonly questionnaire_id: number; readonly patient_id: number; readonly responses: ReadonlyArray<AnswerInput> }) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, input.patient_id)
        const def = yield* activeDefinition(input.questionnaire_id)
        const answers = mergeAnswers({}, yield* checked(def, input.responses))
        const { derived } = evaluate(def, answers)
        const row = yield* sql.withTransaction(insert(def, patient, answers, derived, { actorId: viewer.id, inviteId: null }))
        return toResponse(def, row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireResponses.create"))

    /** The response when the caller may see its patient; otherwise 404, as for an unknown id. */
    const find = (viewer: Viewer, id: number, lock: boolean) =>
      Effect.gen(function*() {
        const [row] = isStaff(viewer.role)
          ? yield* sql<ResponseRow>`SELECT ${cols} FROM questionnaire_responses WHERE id = ${id} ${lock ? sql`FOR UPDATE` : sql``}`
          : yield* sql<ResponseRow>`SELECT ${cols} FROM questionnaire_responses r WHERE id = ${id}
              AND EXISTS (SELECT 1 FROM patients p WHERE p.id = r.patient_id AND p.user_id = ${viewer.id})
              ${lock ? sql`FOR UPDATE OF r` : sql``}`
        if (row === undefined) return yield* Effect.fail(responseNotFound())
        return row
      })

    const show = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* find(viewer, id, false)
        return toResponse(yield* definitionOf(row), row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireResponses.show", { attributes: { "questionnaire_response.id": id } }))

    const update = (viewer: Viewer, id: number, changes: ResponseChanges) =>
      Effect.gen(function*() {
        yield* find(viewer, id, false)
        if (!isStaff(viewer.role) && (changes.status === "reviewed" || changes.review_notes !== undefined)) {
          return yield* Effect.fail(forbidden(messages.unauthorized))
        }
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* find(viewer, id, true)
          const def = yield* definitionOf(current)
          const answerChanges = yield* checked(def, changes.responses ?? [])
          const answersChanged = changesAnything(current.answers, answerChanges)
          const answers = mergeAnswers(current.answers, answerChanges)
          const { derived, result } = evaluate(def, answers)
          const transition = nextStatus(current.status, derived, answersChanged, changes.status)
          if (transition._tag === "Refused") return yield* Effect.fail(invalidField("status", transition.message))
          const status = transition.status
          const at = yield* now
          // The self_harm flag is never retracted, even when the answer that raised it changes.
          const flags = current.flags.includes("self_harm") && !result.flags.includes("self_harm") ? ["self_harm", ...result.flags] : [...result.flags]
          const scored = isOpen(current.status)
            ? { score: result.score, severity: result.severity, subscales: result.subscales, flags }
            : { score: current.score, severity: current.severity, subscales: current.subscales, flags: current.flags }
          const completedAt = status === "started" || status === "in_progress" ? null : current.completed_at ?? at
          const submittedAt = status === "submitted" && current.status !== "submitted" ? at : current.submitted_at
          const reviewed = status === "reviewed" && current.status !== "reviewed"
          const [row] = yield* sql<ResponseRow>`UPDATE questionnaire_responses SET status = ${status},
              answers = ${JSON.stringify(answers)}::jsonb, score = ${scored.score}, severity = ${scored.severity},
              subscales = ${JSON.stringify(scored.subscales)}::jsonb, flags = ${textArray(scored.flags)}::text[],
              completed_at = ${completedAt}, submitted_at = ${submittedAt},
              review_notes = ${changes.review_notes === undefined ? current.review_notes : changes.review_notes},
              reviewed_by_id = ${reviewed ? viewer.id : current.reviewed_by_id}, reviewed_at = ${reviewed ? at : current.reviewed_at},
              updated_at = ${at}
            WHERE id = ${id} RETURNING ${cols}`
          if (scored.flags.includes("self_harm")) yield* alerts.raise({ _tag: "Response", id, patientId: current.patient_id }, viewer.id)
          if (reviewed) yield* alerts.acknowledge(id, viewer.id, at)
          yield* audit.record({
            actorId: viewer.id,
            action: status !== current.status ? `questionnaire_response.${status}` : "questionnaire_response.update",
            targetType: "questionnaire_response",
            targetId: id
          })
          return { row: row!, def }
        }))
        return toResponse(row.def, row.row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireResponses.update", { attributes: { "questionnaire_response.id": id } }))

    const list = (
      viewer: Viewer,
      filters: { readonly patientId?: number | undefined; readonly questionnaireId?: number | undefined; readonly status?: ResponseStatus | undefined },
      request: PageRequest
    ) =>
      Effect.gen(function*() {
        const patient = filters.patientId === undefined ? undefined : yield* access.visiblePatient(viewer, filters.patientId)
        const where = sql.and([
          patient !== undefined
            ? sql`patient_id = ${patient}`
            : Access.scope.patientRecords(sql, viewer),
          filters.questionnaireId === undefined ? sql`true` : sql`questionnaire_id = ${filters.questionnaireId}`,
          filters.status === undefined ? sql`true` : sql`status = ${filters.status}`
        ])
        const rows = yield* sql<ResponseRow>`SELECT ${cols} FROM questionnaire_responses WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM questionnaire_responses WHERE ${where}`
        const responses = yield* Effect.forEach(rows, (row) => Effect.map(definitionOf(row), (def) => toResponse(def, row)))
        return { questionnaire_responses: responses, pagination: paginationOf(request, counted?.count ?? 0) }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("QuestionnaireResponses.list"))

    return { create, update, show, list, insert, activeDefinition, checked } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, Catalogue.Default, QuestionnaireAlerts.Default]
}) {}
