/**
 * Collaborator assessments (general §2.4, §4.4, §5.5): single-use links, the public form,
 * decline and submit, and reading the answers.
 *
 * A link is `newToken()`, stored as `hashToken()`, scoped to one pending assessment (so to its
 * collaborator, patient and type). It is claimed by one conditional `UPDATE … RETURNING` (unused,
 * unrevoked, unexpired, assessment pending, collaborator pending or active) inside the transaction
 * that saves the answers: a 422 rolls the claim back and leaves the link usable, and of concurrent
 * submits the others wait for the first's commit and then find nothing to claim. Raw tokens reach
 * no log, span, audit entry or queue row (the mail job carries it sealed: LinkSeal.ts).
 */
import { Clock, Duration, Effect, Option } from "effect"
import type { CreateAssessmentRequest } from "../../Api/Collaborators/Collaborators.js"
import { assessmentsPageSize, collaboratorMessages } from "../../Api/Collaborators/Collaborators.js"
import { forbidden, invalid, invalidField, notFound, unauthorized } from "../../Api/Errors.js"
import { pageRequest } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import {
  type AssessmentStatus, AssessmentToken, type AssessmentType, canAssess, CollaboratorAssessment, type CollaboratorId
} from "../../Domain/Collaborators/Collaborator.js"
import {
  decodeBands, decodeQuestions, isAlertingIncident, type AssessmentQuestion, type QuestionSet, scoreAnswers, type ScoredResponse
} from "../../Domain/Collaborators/QuestionSets.js"
import type { PatientId } from "../../Domain/Ids.js"
import { calendarDayIn } from "../../Domain/Time.js"
import { addressLimits } from "../AddressLimits.js"
import { AppConfig } from "../AppConfig.js"
import { type AuditEntry, AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { Access, followsCareRelationships, isAdmin } from "../Access/Access.js"
import { inviteLink } from "../Providers/ProviderInvites.js"
import { RateLimiter } from "../RateLimiter.js"
import { makeTransaction } from "../Repository.js"
import { hashToken, newToken } from "../Tokens.js"
import { AssessmentQuestionSetsRepo, type QuestionSetRow } from "./AssessmentQuestionSetsRepo.js"
import { incidentAlertTask, sendAssessmentLinkTask } from "./AssessmentTasks.js"
import { AssessmentTokensRepo } from "./AssessmentTokensRepo.js"
import { type AssessmentRow, CollaboratorAssessmentsRepo, type Reader } from "./CollaboratorAssessmentsRepo.js"
import { CollaboratorPatientsRepo } from "./CollaboratorPatientsRepo.js"
import { Collaborators, notAuthorized } from "./Collaborators.js"
import { CollaboratorsRepo } from "./CollaboratorsRepo.js"
import { LinkSealKey, seal } from "./LinkSeal.js"

/** Public link endpoints, per client address. */

/** The API's own form when ASSESSMENT_FORM_URL names no frontend. */
export const apiFormPath = "/v1/collaborator_assessments/form"

const toAssessment = (row: AssessmentRow) =>
  CollaboratorAssessment.make({
    id: row.id,
    collaborator_id: row.collaborator_id,
    patient_id: row.patient_id,
    assessment_type: row.assessment_type,
    status: row.status,
    responses: (typeof row.responses === "string" ? JSON.parse(row.responses) : row.responses) as ReadonlyArray<ScoredResponse>,
    total_score: row.total_score,
    interpretation: row.interpretation,
    completed_at: row.completed_at,
    created_at: row.created_at
  }, true)

const invalidLink = () => unauthorized(collaboratorMessages.invalidLink)
const assessmentNotFound = () => notFound("Collaborator assessment")

export class Assessments extends Effect.Service<Assessments>()("app/CollaboratorAssessments", {
  effect: Effect.gen(function*() {
    const assessments = yield* CollaboratorAssessmentsRepo
    const tokens = yield* AssessmentTokensRepo
    const questionSets = yield* AssessmentQuestionSetsRepo
    const links = yield* CollaboratorPatientsRepo
    const collaboratorsRepo = yield* CollaboratorsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const access = yield* Access
    const collaborators = yield* Collaborators
    const limiter = yield* RateLimiter
    const jobs = yield* Jobs
    const config = yield* AppConfig
    const publicLinkLimit = addressLimits(config.addressLimits).assessmentLink
    const sealKey = yield* LinkSealKey
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const ttl = Duration.hours(config.collaborators.tokenTtlHours)
    const linkBase = Option.getOrElse(config.collaborators.formUrl, () => `${config.publicBaseUrl}${apiFormPath}`)

    /** The question set of a stored set or of a row that joined `assessment_question_sets`. */
    const setOf = (row: { readonly question_set_version: number; readonly questions: unknown; readonly bands: unknown }): QuestionSet =>
      ({ version: row.question_set_version, questions: decodeQuestions(row.questions), bands: decodeBands(row.bands) })

    const setOfStored = (row: QuestionSetRow): QuestionSet => setOf({ ...row, question_set_version: row.version })

    const questionSet = (type: AssessmentType, version?: number) =>
      Effect.flatMap(
        version === undefined ? questionSets.latest(type) : questionSets.byVersion(type, version),
        Option.match({ onNone: () => Effect.dieMessage(`no question set for ${type}`), onSome: (row) => Effect.succeed(setOfStored(row)) })
      )

    /**
     * Owner, admin, or a provider or supervisor who sees the patient: the caller has passed
     * `Access.visiblePatient` for it as clinical content (a care relationship, or break-glass; never
     * front desk or billing, whose ids answer 404 like unknown ones) before `checkAssessor`.
     */
    const mayAssess = (caller: Caller, ownerId: number) => isAdmin(caller) || ownerId === caller.id || followsCareRelationships(caller)

    /**
     * The checks before a caller assesses (token or phoned answers), after the patient's visibility
     * (404, `Access.visiblePatient`): the collaborator there (404), the caller owner, admin or a
     * provider who sees the patient (403), linked (422), able to assess (422). The collaborator row
     * is share-locked: a suspension waits for us.
     */
    const checkAssessor = (caller: Caller, collaboratorId: number, patientId: number) =>
      Effect.gen(function*() {
        const found = yield* collaborators.standing(caller, collaboratorId, "share")
        if (!mayAssess(caller, found.row.owner_id)) return yield* Effect.fail(notAuthorized())
        if (!(yield* links.isLinked(collaboratorId, patientId))) return yield* Effect.fail(invalidField("patient_id", collaboratorMessages.notLinked))
        if (!canAssess(found.row.status)) return yield* Effect.fail(invalidField("collaborator_id", collaboratorMessages.notActive))
        return found.row
      })

    const issueToken = Effect.fn("CollaboratorAssessments.issueToken")(function*(caller: Caller, query: {
      readonly collaborator_id: number
      readonly patient_id: number
      readonly assessment_type: AssessmentType
      readonly send?: boolean | undefined
    }) {
      yield* Effect.annotateCurrentSpan({ "collaborator.id": query.collaborator_id, "patient.id": query.patient_id, "send": query.send === true })
      yield* access.visiblePatient(caller, query.patient_id, "clinical")
      const token = newToken()
      const at = yield* now
      const expiresAt = new Date(at.getTime() + Duration.toMillis(ttl))
      yield* transaction(Effect.gen(function*() {
        yield* checkAssessor(caller, query.collaborator_id, query.patient_id)
        const set = yield* questionSet(query.assessment_type)
        // One pending assessment per triple: a new link reuses it and revokes its open link.
        const assessmentId = yield* assessments.upsertPending({
          collaboratorId: query.collaborator_id,
          patientId: query.patient_id,
          assessmentType: query.assessment_type,
          version: set.version,
          expiresAt,
          at
        })
        yield* tokens.revokeOpen([assessmentId], at)
        const issued = yield* tokens.insert({
          assessment_id: assessmentId, token_hash: hashToken(token), expires_at: expiresAt, issued_by: caller.id, created_at: at
        })
        if (query.send === true) yield* jobs.enqueue(sendAssessmentLinkTask, { token_id: issued, sealed_token: seal(sealKey, token) })
        yield* audit.record({ actorId: caller.id, action: "collaborator_assessment.token_issued", targetType: "collaborator_assessment", targetId: assessmentId })
      }))
      return AssessmentToken.make({ token, expires_at: expiresAt, assessment_url: inviteLink(linkBase, token) }, true)
    })

    /** Claims the link (single use), with its question set: undefined when it is not usable. */
    const claim = (token: string, at: Date) => Effect.map(tokens.claim(hashToken(token), at), Option.getOrUndefined)

    const form = Effect.fn("CollaboratorAssessments.form")(function*(clientAddress: string, token: string) {
      yield* limiter.enforce(`assessment_form:${clientAddress}`, publicLinkLimit)
      const at = yield* now
      // The link, its question set and the first opening recorded in one statement (one round trip).
      const row = Option.getOrUndefined(yield* tokens.open(hashToken(token), at))
      if (row === undefined) {
        yield* audit.record({ actorId: null, action: "collaborator_assessment.refused", targetType: "collaborator_assessment", targetId: null })
        return yield* Effect.fail(invalidLink())
      }
      yield* audit.record({ actorId: null, action: "collaborator_assessment.form_opened", targetType: "collaborator_assessment", targetId: row.assessment_id })
      const set = setOf(row)
      return {
        assessment: {
          assessment_type: row.assessment_type,
          expires_at: row.expires_at,
          collaborator: { first_name: row.collaborator_first_name, last_name: row.collaborator_last_name },
          patient: { first_name: row.patient_first_name }
        },
        questions: set.questions as ReadonlyArray<AssessmentQuestion>
      }
    })

    const decline = Effect.fn("CollaboratorAssessments.decline")(function*(clientAddress: string, token: string) {
      yield* limiter.enforce(`assessment_decline:${clientAddress}`, publicLinkLimit)
      const at = yield* now
      const result = yield* transaction(Effect.gen(function*() {
        const link = yield* claim(token, at)
        if (link === undefined) return yield* Effect.fail(invalidLink())
        if (yield* collaboratorsRepo.declinePending(link.collaborator_id, at)) {
          // Pending → declined: every open request to them is over.
          yield* collaborators.closeOpenAssessments(link.collaborator_id, at)
          yield* audit.record({ actorId: null, action: "collaborator.status", targetType: "collaborator", targetId: link.collaborator_id })
        } else {
          // An active collaborator turns down this request only (docs/spec-decisions.md).
          yield* assessments.cancel(link.assessment_id, at)
        }
        yield* audit.record({ actorId: null, action: "collaborator_assessment.declined", targetType: "collaborator_assessment", targetId: link.assessment_id })
        return { declined: true, assessment: { assessment_type: link.assessment_type, status: "cancelled" as const } }
      }))
      return result
    }, Effect.tapError((error) => error._tag === "Unauthorized"
      ? audit.record({ actorId: null, action: "collaborator_assessment.refused", targetType: "collaborator_assessment", targetId: null })
      : Effect.void))

    /** Completes the assessment with scored answers; the collaborator's first one makes them active. */
    const complete = (
      assessmentId: number,
      collaboratorId: number,
      set: QuestionSet,
      answers: CreateAssessmentRequest["collaborator_assessment"]["responses"],
      at: Date,
      submittedBy: number | null
    ) =>
      Effect.gen(function*() {
        const outcome = scoreAnswers(set, answers, calendarDayIn(at.getTime(), config.clinicTimeZone))
        if (outcome._tag === "Invalid") return yield* Effect.fail(invalid(outcome.errors))
        const { scored } = outcome
        // Completed, its open link revoked, a pending collaborator made active: one statement (one round trip).
        const row = yield* assessments.complete({
          assessmentId,
          collaboratorId,
          responses: JSON.stringify(scored.responses),
          totalScore: scored.total_score,
          interpretation: scored.interpretation,
          submittedBy,
          at
        })
        const entries: Array<AuditEntry> = [
          ...(row.activated ? [{ actorId: submittedBy, action: "collaborator.status", targetType: "collaborator", targetId: collaboratorId }] : []),
          { actorId: submittedBy, action: "collaborator_assessment.submitted", targetType: "collaborator_assessment", targetId: assessmentId }
        ]
        if (row.assessment_type === "incident_report" && isAlertingIncident(scored.responses)) {
          yield* jobs.enqueue(incidentAlertTask, { assessment_id: assessmentId })
          entries.push({ actorId: submittedBy, action: "collaborator_assessment.incident_alert", targetType: "collaborator_assessment", targetId: assessmentId })
        }
        yield* audit.recordMany(entries)
        return toAssessment(row)
      })

    const submitWithToken = Effect.fn("CollaboratorAssessments.submitWithToken")(function*(
      clientAddress: string,
      token: string,
      input: CreateAssessmentRequest["collaborator_assessment"]
    ) {
      yield* limiter.enforce(`assessment_submit:${clientAddress}`, publicLinkLimit)
      const at = yield* now
      return yield* transaction(Effect.gen(function*() {
        const link = yield* claim(token, at)
        if (link === undefined) return yield* Effect.fail(invalidLink())
        const differs = (input.collaborator_id !== undefined && input.collaborator_id !== link.collaborator_id) ||
          (input.patient_id !== undefined && input.patient_id !== link.patient_id) ||
          (input.assessment_type !== undefined && input.assessment_type !== link.assessment_type)
        if (differs) return yield* Effect.fail(forbidden(collaboratorMessages.differentAssessment))
        return yield* complete(link.assessment_id, link.collaborator_id, setOf(link), input.responses, at, null)
      }))
    }, Effect.tapError((error) => error._tag === "Unauthorized" || error._tag === "Forbidden"
      ? audit.record({ actorId: null, action: "collaborator_assessment.refused", targetType: "collaborator_assessment", targetId: null })
      : Effect.void))

    const submitWithSession = Effect.fn("CollaboratorAssessments.submitWithSession")(function*(
      caller: Caller,
      input: CreateAssessmentRequest["collaborator_assessment"]
    ) {
      if (input.patient_id !== undefined) yield* access.visiblePatient(caller, input.patient_id, "clinical")
      const blanks = (["collaborator_id", "patient_id", "assessment_type"] as const).filter((field) => input[field] === undefined)
      if (blanks.length > 0) return yield* Effect.fail(invalid(Object.fromEntries(blanks.map((field) => [field, ["can't be blank"]]))))
      const collaboratorId = input.collaborator_id!
      const patientId = input.patient_id!
      const type = input.assessment_type!
      const at = yield* now
      return yield* transaction(Effect.gen(function*() {
        yield* checkAssessor(caller, collaboratorId, patientId)
        // The triple's pending assessment (its link is revoked), else a new one.
        const triple = { collaboratorId, patientId, assessmentType: type }
        const pending = Option.getOrUndefined(yield* assessments.findPendingForUpdate(triple))
        const set = yield* questionSet(type, pending?.question_set_version)
        const id = pending?.id ?? (yield* assessments.insertCompleted({ ...triple, version: set.version, at }))
        return yield* complete(id, collaboratorId, set, input.responses, at, caller.id)
      }))
    })

    /** A body token wins over a session; neither is a 401. */
    const submit = (clientAddress: string, caller: Option.Option<Caller>, payload: CreateAssessmentRequest) =>
      (payload.token !== undefined
        ? submitWithToken(clientAddress, payload.token, payload.collaborator_assessment)
        : Option.match(caller, {
          onNone: () => Effect.fail(unauthorized()),
          onSome: (c) => submitWithSession(c, payload.collaborator_assessment)
        }))

    const readerOf = (caller: Caller): Reader => isAdmin(caller) ? { _tag: "Everyone" } : { _tag: "Viewer", viewer: caller }

    const list = Effect.fn("CollaboratorAssessments.list")(function*(caller: Caller, query: {
      readonly page?: number | undefined
      readonly page_size?: number | undefined
      readonly patient_id?: PatientId | undefined
      readonly collaborator_id?: CollaboratorId | undefined
      readonly assessment_type?: AssessmentType | undefined
      readonly status?: AssessmentStatus | undefined
    }) {
      if (query.patient_id !== undefined) yield* access.visiblePatient(caller, query.patient_id, "clinical")
      const page = pageRequest(query, assessmentsPageSize)
      // A provider or supervisor who may see the patient (care relationship or break-glass) reads its assessments.
      const reader: Reader = query.patient_id !== undefined && followsCareRelationships(caller) ? { _tag: "Everyone" } : readerOf(caller)
      const { pagination, rows } = yield* assessments.list(reader, {
        patientId: query.patient_id,
        collaboratorId: query.collaborator_id,
        assessmentType: query.assessment_type,
        status: query.status
      }, page)
      return { collaborator_assessments: rows.map(toAssessment), pagination }
    })

    const show = Effect.fn("CollaboratorAssessments.show")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "collaborator_assessment.id": id })
      const found = yield* assessments.findReadable(readerOf(caller), id)
      if (Option.isSome(found)) return toAssessment(found.value)
      // Outside the caller's rules: a provider or supervisor may open it by breaking the glass for its patient.
      if (!followsCareRelationships(caller)) return yield* Effect.fail(assessmentNotFound())
      const row = yield* assessments.findReadable({ _tag: "Everyone" }, id)
      if (Option.isNone(row)) return yield* Effect.fail(assessmentNotFound())
      yield* access.visibleRecord(caller, { visible: false, patient_id: row.value.patient_id }, assessmentNotFound, "clinical")
      return toAssessment(row.value)
    })

    return { issueToken, form, decline, submit, list, show } as const
  }),
  dependencies: [
    CollaboratorAssessmentsRepo.Default,
    AssessmentTokensRepo.Default,
    AssessmentQuestionSetsRepo.Default,
    CollaboratorPatientsRepo.Default,
    CollaboratorsRepo.Default,
    AuditLog.Default,
    Access.Default,
    RateLimiter.Default,
    Collaborators.Default
  ]
}) {}
