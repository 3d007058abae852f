/**
 * Collaborator assessments (general §2.4, §4.4, §5.5; issue 22): single-use links, the public form,
 * decline and submit, and reading the answers.
 *
 * A link is `newToken()`, stored as `hashToken()`, scoped to one pending assessment (so to its
 * collaborator, patient and type). It is claimed by one conditional `UPDATE … RETURNING` (unused,
 * unrevoked, unexpired, assessment pending, collaborator pending or active) inside the transaction
 * that saves the answers: a 422 rolls the claim back and leaves the link usable, and of concurrent
 * submits the others wait for the first's commit and then find nothing to claim. Raw tokens reach
 * no log, span, audit entry or queue row (the mail job carries it sealed: LinkSeal.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import type { CreateAssessmentRequest } from "../../Api/Collaborators/Collaborators.js"
import { assessmentsPageSize, collaboratorMessages } from "../../Api/Collaborators/Collaborators.js"
import { forbidden, invalid, invalidField, notFound, unauthorized } from "../../Api/Errors.js"
import { pageRequest, paginationOf } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import {
  type AssessmentStatus, AssessmentToken, type AssessmentType, canAssess, CollaboratorAssessment, type CollaboratorAssessmentId,
  type CollaboratorId
} from "../../Domain/Collaborators/Collaborator.js"
import {
  decodeBands, decodeQuestions, isAlertingIncident, type AssessmentQuestion, type QuestionSet, scoreAnswers, type ScoredResponse
} from "../../Domain/Collaborators/QuestionSets.js"
import type { PatientId } from "../../Domain/Ids.js"
import { calendarDayIn } from "../../Domain/Time.js"
import { AppConfig } from "../AppConfig.js"
import { type AuditEntry, AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { Access } from "../Access/Access.js"
import { inviteLink } from "../Providers/Invites.js"
import { type Limit, RateLimiter } from "../RateLimiter.js"
import { hashToken, newToken } from "../Tokens.js"
import { incidentAlertTask, sendAssessmentLinkTask } from "./AssessmentTasks.js"
import { Collaborators, notAuthorized } from "./Collaborators.js"
import { LinkSealKey, seal } from "./LinkSeal.js"

/** Public link endpoints, per client address (issue 22). */
export const publicLinkLimit: Limit = { limit: 20, window: "1 minute" }

/** The API's own form when ASSESSMENT_FORM_URL names no frontend. */
export const apiFormPath = "/v1/collaborator_assessments/form"

interface AssessmentRow {
  readonly id: number
  readonly collaborator_id: number
  readonly patient_id: number
  readonly assessment_type: AssessmentType
  readonly status: AssessmentStatus
  readonly responses: ReadonlyArray<ScoredResponse>
  readonly total_score: number | null
  readonly interpretation: string | null
  readonly completed_at: Date | null
  readonly created_at: Date
}

const assessmentColumns = `a.id, a.collaborator_id, a.patient_id, a.assessment_type, a.status, a.responses, a.total_score,
  a.interpretation, a.completed_at, a.created_at`

const toAssessment = (row: AssessmentRow) =>
  CollaboratorAssessment.make({
    id: row.id as CollaboratorAssessmentId,
    collaborator_id: row.collaborator_id as CollaboratorId,
    patient_id: row.patient_id as PatientId,
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

/** The claimed or presented link: what the token is scoped to. */
interface LinkRow {
  readonly token_id: number
  readonly assessment_id: number
  readonly collaborator_id: number
  readonly patient_id: number
  readonly assessment_type: AssessmentType
  readonly question_set_version: number
  readonly expires_at: Date
}

export class Assessments extends Effect.Service<Assessments>()("app/CollaboratorAssessments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const collaborators = yield* Collaborators
    const limiter = yield* RateLimiter
    const jobs = yield* Jobs
    const config = yield* AppConfig
    const sealKey = yield* LinkSealKey
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const ttl = Duration.hours(config.collaborators.tokenTtlHours)
    const linkBase = Option.getOrElse(config.collaborators.formUrl, () => `${config.publicBaseUrl}${apiFormPath}`)
    const columns = sql.literal(assessmentColumns)

    /** The question set of a row that joined `assessment_question_sets` (its questions and bands). */
    const setOf = (row: { readonly question_set_version: number; readonly questions: unknown; readonly bands: unknown }): QuestionSet =>
      ({ version: row.question_set_version, questions: decodeQuestions(row.questions), bands: decodeBands(row.bands) })

    const questionSet = (type: AssessmentType, version?: number) =>
      Effect.gen(function*() {
        const [row] = version === undefined
          ? yield* sql<{ version: number; questions: unknown; bands: unknown }>`SELECT version, questions, bands FROM assessment_question_sets
              WHERE assessment_type = ${type} ORDER BY version DESC LIMIT 1`
          : yield* sql<{ version: number; questions: unknown; bands: unknown }>`SELECT version, questions, bands FROM assessment_question_sets
              WHERE assessment_type = ${type} AND version = ${version}`
        if (row === undefined) return yield* Effect.dieMessage(`no question set for ${type}`)
        return { version: row.version, questions: decodeQuestions(row.questions), bands: decodeBands(row.bands) } satisfies QuestionSet
      })

    /** Owner, admin, or the primary provider of this patient. */
    const mayAssess = (caller: Caller, ownerId: number, patientId: number) =>
      Effect.gen(function*() {
        if (caller.role === "admin" || ownerId === caller.id) return true
        const [row] = yield* sql`SELECT 1 FROM patients p JOIN providers pr ON pr.id = p.provider_id
          WHERE p.id = ${patientId} AND pr.user_id = ${caller.id}`
        return row !== undefined
      })

    /**
     * The checks before a caller assesses (token or phoned answers): the patient visible (404), the
     * collaborator there (404), the caller owner/admin/primary provider (403), linked (422), able
     * to assess (422). The collaborator row is share-locked: a suspension waits for us.
     */
    const checkAssessor = (caller: Caller, collaboratorId: number, patientId: number) =>
      Effect.gen(function*() {
        const found = yield* collaborators.standing(caller, collaboratorId, "share")
        if (!(yield* mayAssess(caller, found.row.owner_id, patientId))) return yield* Effect.fail(notAuthorized())
        const [linked] = yield* sql`SELECT 1 FROM collaborator_patients WHERE collaborator_id = ${collaboratorId} AND patient_id = ${patientId}`
        if (linked === undefined) return yield* Effect.fail(invalidField("patient_id", collaboratorMessages.notLinked))
        if (!canAssess(found.row.status)) return yield* Effect.fail(invalidField("collaborator_id", collaboratorMessages.notActive))
        return found.row
      })

    const issueToken = (caller: Caller, query: {
      readonly collaborator_id: number
      readonly patient_id: number
      readonly assessment_type: AssessmentType
      readonly send?: boolean | undefined
    }) =>
      Effect.gen(function*() {
        yield* access.visiblePatient(caller, query.patient_id)
        const token = newToken()
        const at = yield* now
        const expiresAt = new Date(at.getTime() + Duration.toMillis(ttl))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* checkAssessor(caller, query.collaborator_id, query.patient_id)
          const set = yield* questionSet(query.assessment_type)
          // One pending assessment per triple: a new link reuses it and revokes its open link.
          const [assessment] = yield* sql<{ id: number }>`INSERT INTO collaborator_assessments
              (collaborator_id, patient_id, assessment_type, question_set_version, expires_at, created_at, updated_at)
            VALUES (${query.collaborator_id}, ${query.patient_id}, ${query.assessment_type}, ${set.version}, ${expiresAt}, ${at}, ${at})
            ON CONFLICT (collaborator_id, patient_id, assessment_type) WHERE status = 'pending'
            DO UPDATE SET expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
            RETURNING id`
          yield* sql`UPDATE collaborator_assessment_tokens SET revoked_at = ${at}
            WHERE assessment_id = ${assessment!.id} AND used_at IS NULL AND revoked_at IS NULL`
          const [issued] = yield* sql<{ id: number }>`INSERT INTO collaborator_assessment_tokens ${sql.insert({
            assessment_id: assessment!.id, token_hash: hashToken(token), expires_at: expiresAt, issued_by: caller.id, created_at: at
          })} RETURNING id`
          if (query.send === true) yield* jobs.enqueue(sendAssessmentLinkTask, { token_id: issued!.id, sealed_token: seal(sealKey, token) })
          yield* audit.record({ actorId: caller.id, action: "collaborator_assessment.token_issued", targetType: "collaborator_assessment", targetId: assessment!.id })
        }))
        return AssessmentToken.make({ token, expires_at: expiresAt, assessment_url: inviteLink(linkBase, token) }, true)
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("CollaboratorAssessments.issueToken", {
          attributes: { "collaborator.id": query.collaborator_id, "patient.id": query.patient_id, "send": query.send === true }
        })
      )

    /** Also joins the assessment's question set `s`: the public paths read it in the same statement. */
    const usableLink = (at: Date) =>
      sql`t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ${at} AND a.id = t.assessment_id AND a.status = 'pending'
        AND c.id = a.collaborator_id AND c.deleted_at IS NULL AND c.status IN ('pending', 'active')
        AND s.assessment_type = a.assessment_type AND s.version = a.question_set_version`

    /** Claims the link (single use), with its question set: undefined when it is not usable. */
    const claim = (token: string, at: Date) =>
      Effect.map(
        sql<LinkRow & { questions: unknown; bands: unknown }>`UPDATE collaborator_assessment_tokens t SET used_at = ${at}
          FROM collaborator_assessments a, collaborators c, assessment_question_sets s
          WHERE t.token_hash = ${hashToken(token)} AND ${usableLink(at)}
          RETURNING t.id AS token_id, a.id AS assessment_id, a.collaborator_id, a.patient_id, a.assessment_type, a.question_set_version,
            t.expires_at, s.questions, s.bands`,
        (rows) => rows[0]
      )

    const form = (clientAddress: string, token: string) =>
      Effect.gen(function*() {
        yield* limiter.enforce(`assessment_form:${clientAddress}`, publicLinkLimit)
        const at = yield* now
        // The link, its question set and the first opening recorded in one statement (one round trip).
        const [row] = yield* sql<LinkRow & {
          collaborator_first_name: string
          collaborator_last_name: string
          patient_first_name: string
          questions: unknown
          bands: unknown
        }>`
          WITH link AS (
            SELECT t.id AS token_id, a.id AS assessment_id, a.assessment_type, a.question_set_version, t.expires_at,
              c.first_name AS collaborator_first_name, c.last_name AS collaborator_last_name, p.first_name AS patient_first_name,
              s.questions, s.bands
            FROM collaborator_assessment_tokens t, collaborator_assessments a, collaborators c, patients p, assessment_question_sets s
            WHERE t.token_hash = ${hashToken(token)} AND ${usableLink(at)} AND p.id = a.patient_id
          ), opened AS (
            UPDATE collaborator_assessments SET opened_at = COALESCE(opened_at, ${at}) WHERE id IN (SELECT assessment_id FROM link)
          )
          SELECT * FROM link`
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
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CollaboratorAssessments.form"))

    const decline = (clientAddress: string, token: string) =>
      Effect.gen(function*() {
        yield* limiter.enforce(`assessment_decline:${clientAddress}`, publicLinkLimit)
        const at = yield* now
        const result = yield* sql.withTransaction(Effect.gen(function*() {
          const link = yield* claim(token, at)
          if (link === undefined) return yield* Effect.fail(invalidLink())
          const [declined] = yield* sql<{ id: number }>`UPDATE collaborators SET status = 'declined', updated_at = ${at}
            WHERE id = ${link.collaborator_id} AND status = 'pending' RETURNING id`
          if (declined !== undefined) {
            // Pending → declined: every open request to them is over.
            yield* collaborators.closeOpenAssessments(link.collaborator_id, at)
            yield* audit.record({ actorId: null, action: "collaborator.status", targetType: "collaborator", targetId: link.collaborator_id })
          } else {
            // An active collaborator turns down this request only (docs/spec-decisions.md).
            yield* sql`UPDATE collaborator_assessments SET status = 'cancelled', expires_at = NULL, updated_at = ${at} WHERE id = ${link.assessment_id}`
          }
          yield* audit.record({ actorId: null, action: "collaborator_assessment.declined", targetType: "collaborator_assessment", targetId: link.assessment_id })
          return { declined: true, assessment: { assessment_type: link.assessment_type, status: "cancelled" as const } }
        }))
        return result
      }).pipe(
        Effect.tapError((error) => error._tag === "Unauthorized"
          ? audit.record({ actorId: null, action: "collaborator_assessment.refused", targetType: "collaborator_assessment", targetId: null })
          : Effect.void),
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("CollaboratorAssessments.decline")
      )

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
        const [row] = yield* sql<AssessmentRow & { activated: boolean }>`WITH completed AS (
            UPDATE collaborator_assessments a SET status = 'completed',
              responses = ${JSON.stringify(scored.responses)}::jsonb, total_score = ${scored.total_score},
              interpretation = ${scored.interpretation}, completed_at = ${at}, expires_at = NULL, submitted_by = ${submittedBy}, updated_at = ${at}
            WHERE a.id = ${assessmentId} RETURNING ${columns}
          ), revoked AS (
            UPDATE collaborator_assessment_tokens SET revoked_at = ${at}
            WHERE assessment_id = ${assessmentId} AND used_at IS NULL AND revoked_at IS NULL
          ), activated AS (
            UPDATE collaborators SET status = 'active', updated_at = ${at}
            WHERE id = ${collaboratorId} AND status = 'pending' RETURNING id
          )
          SELECT a.*, EXISTS (SELECT 1 FROM activated) AS activated FROM completed a`
        const entries: Array<AuditEntry> = [
          ...(row!.activated ? [{ actorId: submittedBy, action: "collaborator.status", targetType: "collaborator", targetId: collaboratorId }] : []),
          { actorId: submittedBy, action: "collaborator_assessment.submitted", targetType: "collaborator_assessment", targetId: assessmentId }
        ]
        if (row!.assessment_type === "incident_report" && isAlertingIncident(scored.responses)) {
          yield* jobs.enqueue(incidentAlertTask, { assessment_id: assessmentId })
          entries.push({ actorId: submittedBy, action: "collaborator_assessment.incident_alert", targetType: "collaborator_assessment", targetId: assessmentId })
        }
        yield* audit.recordMany(entries)
        return toAssessment(row!)
      })

    const submitWithToken = (clientAddress: string, token: string, input: CreateAssessmentRequest["collaborator_assessment"]) =>
      Effect.gen(function*() {
        yield* limiter.enforce(`assessment_submit:${clientAddress}`, publicLinkLimit)
        const at = yield* now
        return yield* sql.withTransaction(Effect.gen(function*() {
          const link = yield* claim(token, at)
          if (link === undefined) return yield* Effect.fail(invalidLink())
          const differs = (input.collaborator_id !== undefined && input.collaborator_id !== link.collaborator_id) ||
            (input.patient_id !== undefined && input.patient_id !== link.patient_id) ||
            (input.assessment_type !== undefined && input.assessment_type !== link.assessment_type)
          if (differs) return yield* Effect.fail(forbidden(collaboratorMessages.differentAssessment))
          return yield* complete(link.assessment_id, link.collaborator_id, setOf(link), input.responses, at, null)
        }))
      }).pipe(
        Effect.tapError((error) => error._tag === "Unauthorized" || error._tag === "Forbidden"
          ? audit.record({ actorId: null, action: "collaborator_assessment.refused", targetType: "collaborator_assessment", targetId: null })
          : Effect.void),
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("CollaboratorAssessments.submitWithToken")
      )

    const submitWithSession = (caller: Caller, input: CreateAssessmentRequest["collaborator_assessment"]) =>
      Effect.gen(function*() {
        if (input.patient_id !== undefined) yield* access.visiblePatient(caller, input.patient_id)
        const blanks = (["collaborator_id", "patient_id", "assessment_type"] as const).filter((field) => input[field] === undefined)
        if (blanks.length > 0) return yield* Effect.fail(invalid(Object.fromEntries(blanks.map((field) => [field, ["can't be blank"]]))))
        const collaboratorId = input.collaborator_id!
        const patientId = input.patient_id!
        const type = input.assessment_type!
        const at = yield* now
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* checkAssessor(caller, collaboratorId, patientId)
          // The triple's pending assessment (its link is revoked), else a new one.
          const [pending] = yield* sql<{ id: number; question_set_version: number }>`SELECT id, question_set_version FROM collaborator_assessments
            WHERE collaborator_id = ${collaboratorId} AND patient_id = ${patientId} AND assessment_type = ${type} AND status = 'pending' FOR UPDATE`
          const set = yield* questionSet(type, pending?.question_set_version)
          const id = pending?.id ?? (yield* sql<{ id: number }>`INSERT INTO collaborator_assessments
              (collaborator_id, patient_id, assessment_type, question_set_version, status, created_at, updated_at)
            VALUES (${collaboratorId}, ${patientId}, ${type}, ${set.version}, 'completed', ${at}, ${at}) RETURNING id`)[0]!.id
          return yield* complete(id, collaboratorId, set, input.responses, at, caller.id)
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CollaboratorAssessments.submitWithSession"))

    /** A body token wins over a session; neither is a 401. */
    const submit = (clientAddress: string, caller: Option.Option<Caller>, payload: CreateAssessmentRequest) =>
      (payload.token !== undefined
        ? submitWithToken(clientAddress, payload.token, payload.collaborator_assessment)
        : Option.match(caller, {
          onNone: () => Effect.fail(unauthorized()),
          onSome: (c) => submitWithSession(c, payload.collaborator_assessment)
        }))

    /** Non-admins read assessments of collaborators they own, of their patients (provider or parent). */
    const readable = (caller: Caller) =>
      caller.role === "admin"
        ? sql`TRUE`
        : sql`(c.owner_id = ${caller.id} OR p.user_id = ${caller.id}
            OR EXISTS (SELECT 1 FROM providers pr WHERE pr.id = p.provider_id AND pr.user_id = ${caller.id}))`

    const list = (caller: Caller, query: {
      readonly page?: number | undefined
      readonly page_size?: number | undefined
      readonly patient_id?: PatientId | undefined
      readonly collaborator_id?: CollaboratorId | undefined
      readonly assessment_type?: AssessmentType | undefined
      readonly status?: AssessmentStatus | undefined
    }) =>
      Effect.gen(function*() {
        if (query.patient_id !== undefined) yield* access.visiblePatient(caller, query.patient_id)
        const page = pageRequest(query, assessmentsPageSize)
        const where = sql.and([
          readable(caller),
          ...(query.patient_id === undefined ? [] : [sql`a.patient_id = ${query.patient_id}`]),
          ...(query.collaborator_id === undefined ? [] : [sql`a.collaborator_id = ${query.collaborator_id}`]),
          ...(query.assessment_type === undefined ? [] : [sql`a.assessment_type = ${query.assessment_type}`]),
          ...(query.status === undefined ? [] : [sql`a.status = ${query.status}`])
        ])
        const from = sql`collaborator_assessments a JOIN collaborators c ON c.id = a.collaborator_id JOIN patients p ON p.id = a.patient_id`
        const [rows, [count]] = yield* Effect.all([
          sql<AssessmentRow>`SELECT ${columns} FROM ${from} WHERE ${where} ORDER BY a.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`,
          sql<{ count: number }>`SELECT count(*)::int AS count FROM ${from} WHERE ${where}`
        ], { concurrency: 2 })
        return { collaborator_assessments: rows.map(toAssessment), pagination: paginationOf(page, count?.count ?? 0) }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CollaboratorAssessments.list"))

    const show = (caller: Caller, id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<AssessmentRow>`SELECT ${columns} FROM collaborator_assessments a
          JOIN collaborators c ON c.id = a.collaborator_id JOIN patients p ON p.id = a.patient_id
          WHERE a.id = ${id} AND ${readable(caller)}`
        if (row === undefined) return yield* Effect.fail(assessmentNotFound())
        return toAssessment(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("CollaboratorAssessments.show", { attributes: { "collaborator_assessment.id": id } }))

    return { issueToken, form, decline, submit, list, show } as const
  }),
  dependencies: [AuditLog.Default, Access.Default, RateLimiter.Default, Collaborators.Default]
}) {}
