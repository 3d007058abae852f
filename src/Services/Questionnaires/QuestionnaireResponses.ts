/**
 * Questionnaire responses (general §2.11, §4.12, §4.2): answers checked against their
 * questions and scored on every save (src/Domain/Questionnaires/Scoring.ts), the status machine,
 * the parent rule (Access), and the self-harm alert in the saving transaction.
 */
import { Clock, Effect, Either, Option } from "effect"
import { forbidden, invalid, invalidField, messages, notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
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
import { makeTransaction } from "../Repository.js"
import { QuestionnaireAlerts } from "./QuestionnaireAlerts.js"
import { answerMap, changesAnything, checkAnswers, itemsOf, mergeAnswers, type StoredAnswers } from "./Answers.js"
import { Catalogue, type Definition } from "./Catalogue.js"
import { QuestionnaireResponsesRepo, type ResponseRow, type ResponseScope } from "./QuestionnaireResponsesRepo.js"

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

/** The scored state of a set of answers. */
export const evaluate = (def: Definition, answers: StoredAnswers) => {
  const result = scoreResponse(def.questions, def.scoring, answerMap(answers))
  return { result, derived: derivedStatus(Object.keys(answers).length, result.complete) }
}

export class QuestionnaireResponses extends Effect.Service<QuestionnaireResponses>()("app/QuestionnaireResponses", {
  effect: Effect.gen(function*() {
    const repo = yield* QuestionnaireResponsesRepo
    const transaction = yield* makeTransaction
    const access = yield* Access
    const audit = yield* AuditLog
    const catalogue = yield* Catalogue
    const alerts = yield* QuestionnaireAlerts

    /** The responses of the patients whose clinical content the viewer sees (Access), now. */
    const scopeOf = (viewer: Viewer): Effect.Effect<ResponseScope> =>
      Effect.map(now, (at) => ({ _tag: "Viewer", id: viewer.id, role: viewer.role, at }))

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
        const row = yield* repo.insert({
          questionnaireId: def.id,
          version: def.version,
          patientId,
          status,
          answers,
          score: result.score,
          severity: result.severity,
          subscales: result.subscales,
          flags: result.flags,
          createdById: extra.actorId,
          inviteId: extra.inviteId,
          completedAt: result.complete ? at : null,
          submittedAt: status === "submitted" ? at : null,
          at
        })
        if (result.flags.includes("self_harm")) {
          yield* alerts.raise({ _tag: "Response", id: row.id, patientId }, extra.actorId)
        }
        yield* audit.record({ actorId: extra.actorId, action: "questionnaire_response.create", targetType: "questionnaire_response", targetId: row.id })
        return row
      })

    const create = Effect.fn("QuestionnaireResponses.create")(function*(
      viewer: Viewer,
      input: { readonly questionnaire_id: number; readonly patient_id: number; readonly responses: ReadonlyArray<AnswerInput> }
    ) {
      const patient = yield* access.visiblePatient(viewer, input.patient_id, "clinical")
      const def = yield* activeDefinition(input.questionnaire_id)
      const answers = mergeAnswers({}, yield* checked(def, input.responses))
      const { derived } = evaluate(def, answers)
      const row = yield* transaction(insert(def, patient, answers, derived, { actorId: viewer.id, inviteId: null }))
      return toResponse(def, row)
    })

    /** The response when the caller may see its patient; otherwise 404, as for an unknown id. */
    const find = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* repo.findById(id, { _tag: "All" }, false)
        if (Option.isNone(row)) return yield* Effect.fail(responseNotFound())
        yield* Effect.mapError(access.visiblePatient(viewer, row.value.patient_id, "clinical"), () => responseNotFound())
        return row.value
      })

    /** The response, locked, once `find` has let the caller in. */
    const lockResponse = (id: number) =>
      Effect.flatMap(repo.findById(id, { _tag: "All" }, true), Option.match({ onNone: () => Effect.fail(responseNotFound()), onSome: Effect.succeed }))

    const show = Effect.fn("QuestionnaireResponses.show")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "questionnaire_response.id": id })
      const row = yield* find(viewer, id)
      return toResponse(yield* definitionOf(row), row)
    })

    const update = Effect.fn("QuestionnaireResponses.update")(function*(viewer: Viewer, id: number, changes: ResponseChanges) {
      yield* Effect.annotateCurrentSpan({ "questionnaire_response.id": id })
      yield* find(viewer, id)
      if (!isStaff(viewer.role) && (changes.status === "reviewed" || changes.review_notes !== undefined)) {
        return yield* Effect.fail(forbidden(messages.unauthorized))
      }
      const row = yield* transaction(Effect.gen(function*() {
        const current = yield* lockResponse(id)
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
        const row = yield* repo.update({
          id,
          status,
          answers,
          ...scored,
          completedAt,
          submittedAt,
          reviewNotes: changes.review_notes === undefined ? current.review_notes : changes.review_notes,
          reviewedById: reviewed ? viewer.id : current.reviewed_by_id,
          reviewedAt: reviewed ? at : current.reviewed_at,
          at
        })
        if (scored.flags.includes("self_harm")) yield* alerts.raise({ _tag: "Response", id, patientId: current.patient_id }, viewer.id)
        if (reviewed) yield* alerts.acknowledge(id, viewer.id, at)
        yield* audit.record({
          actorId: viewer.id,
          action: status !== current.status ? `questionnaire_response.${status}` : "questionnaire_response.update",
          targetType: "questionnaire_response",
          targetId: id
        })
        return { row, def }
      }))
      return toResponse(row.def, row.row)
    })

    const list = Effect.fn("QuestionnaireResponses.list")(function*(
      viewer: Viewer,
      filters: { readonly patientId?: number | undefined; readonly questionnaireId?: number | undefined; readonly status?: ResponseStatus | undefined },
      request: PageRequest
    ) {
      const patient = filters.patientId === undefined ? undefined : yield* access.visiblePatient(viewer, filters.patientId, "clinical")
      const criteria = { scope: yield* scopeOf(viewer), patientId: patient, questionnaireId: filters.questionnaireId, status: filters.status }
      const { pagination, rows } = yield* repo.list(criteria, request)
      const responses = yield* Effect.forEach(rows, (row) => Effect.map(definitionOf(row), (def) => toResponse(def, row)))
      return { questionnaire_responses: responses, pagination }
    })

    return { create, update, show, list, insert, activeDefinition, checked } as const
  }),
  dependencies: [QuestionnaireResponsesRepo.Default, Access.Default, AuditLog.Default, Catalogue.Default, QuestionnaireAlerts.Default]
}) {}
