/**
 * The only SQL on `collaborator_assessments` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. Completing an assessment also revokes its open link and activates a pending collaborator
 * in the same statement (one round trip), so that statement names their tables too. Who may read
 * an assessment is the access module's `Access.scope.collaboratorAssessments`; the alert's
 * look-up of the primary provider's address stays here until patients and users have repositories.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AssessmentStatus, AssessmentType } from "../../Domain/Collaborators/Collaborator.js"
import { CollaboratorAssessmentId, CollaboratorId, PatientId } from "../../Domain/Ids.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { Access, type Viewer } from "../Access/Access.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

export const AssessmentRow = Schema.Struct({
  id: CollaboratorAssessmentId,
  collaborator_id: CollaboratorId,
  patient_id: PatientId,
  assessment_type: AssessmentType,
  status: AssessmentStatus,
  /** jsonb: the scored responses as stored. */
  responses: Schema.Unknown,
  total_score: Schema.NullOr(Schema.Int),
  interpretation: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type AssessmentRow = typeof AssessmentRow.Type

const CompletedRow = Schema.Struct({ ...AssessmentRow.fields, activated: Schema.Boolean })
const IdRow = Schema.Struct({ id: Schema.Number })

/**
 * Whose assessments are in view: every one (admins, or one patient the caller may see, named by the
 * criteria) or those a viewer may read (`Access.scope.collaboratorAssessments`).
 */
export type Reader = { readonly _tag: "Everyone" } | { readonly _tag: "Viewer"; readonly viewer: Viewer }

export const AssessmentCriteria = Schema.Struct({
  patientId: Schema.optional(Schema.Number),
  collaboratorId: Schema.optional(Schema.Number),
  assessmentType: Schema.optional(AssessmentType),
  status: Schema.optional(AssessmentStatus)
})
export type AssessmentCriteria = typeof AssessmentCriteria.Type

const Triple = Schema.Struct({ collaboratorId: Schema.Number, patientId: Schema.Number, assessmentType: AssessmentType })
const NewPending = Schema.Struct({ ...Triple.fields, version: Schema.Int, expiresAt: Schema.DateFromSelf, at: Schema.DateFromSelf })
const NewCompleted = Schema.Struct({ ...Triple.fields, version: Schema.Int, at: Schema.DateFromSelf })
const Stamp = Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf })

export const Completion = Schema.Struct({
  assessmentId: Schema.Number,
  collaboratorId: Schema.Number,
  /** The scored responses as JSON text. */
  responses: Schema.String,
  totalScore: Schema.NullOr(Schema.Number),
  interpretation: Schema.NullOr(Schema.String),
  submittedBy: Schema.NullOr(Schema.Number),
  at: Schema.DateFromSelf
})
export type Completion = typeof Completion.Type

export class CollaboratorAssessmentsRepo extends Effect.Service<CollaboratorAssessmentsRepo>()("app/CollaboratorAssessmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(`a.id, a.collaborator_id, a.patient_id, a.assessment_type, a.status, a.responses, a.total_score,
  a.interpretation, a.completed_at, a.created_at`)
    const from = sql`collaborator_assessments a JOIN collaborators c ON c.id = a.collaborator_id JOIN patients p ON p.id = a.patient_id`

    const readable = (reader: Reader, at: Date, form: "one" | "many") =>
      reader._tag === "Everyone" ? sql`TRUE` : Access.scope.collaboratorAssessments(sql, reader.viewer, at, form)

    const newestFirst = { id: sql`a.id` }

    /** A page of the assessments in the reader's view, newest first, and how many there are. */
    const list = (reader: Reader, criteria: AssessmentCriteria, page: PageRequest) =>
      Effect.flatMap(now, (at) => listPage({
        select: columns,
        from,
        row: AssessmentRow,
        scope: readable(reader, at, "many"),
        filters: [
          criteria.patientId !== undefined && sql`a.patient_id = ${criteria.patientId}`,
          criteria.collaboratorId !== undefined && sql`a.collaborator_id = ${criteria.collaboratorId}`,
          criteria.assessmentType !== undefined && sql`a.assessment_type = ${criteria.assessmentType}`,
          criteria.status !== undefined && sql`a.status = ${criteria.status}`
        ],
        sort: { columns: newestFirst, by: "id", dir: "DESC", id: newestFirst.id },
        concurrent: true
      }, page))

    const findReadable = (reader: Reader, at: Date) =>
      SqlSchema.findOne({
        Request: Schema.Number,
        Result: AssessmentRow,
        execute: (id) =>
          sql`SELECT ${columns} FROM collaborator_assessments a
            JOIN collaborators c ON c.id = a.collaborator_id JOIN patients p ON p.id = a.patient_id
            WHERE a.id = ${id} AND ${readable(reader, at, "one")}`
      })

    const cancelPendingOf = SqlSchema.findAll({
      Request: Stamp,
      Result: IdRow,
      execute: ({ at, id }) =>
        sql`UPDATE collaborator_assessments SET status = 'cancelled', expires_at = NULL, updated_at = ${at}
          WHERE collaborator_id = ${id} AND status = 'pending' RETURNING id`
    })

    const cancel = SqlSchema.void({
      Request: Stamp,
      execute: ({ at, id }) =>
        sql`UPDATE collaborator_assessments SET status = 'cancelled', expires_at = NULL, updated_at = ${at} WHERE id = ${id}`
    })

    // One pending assessment per triple: a new link reuses it.
    const upsertPending = SqlSchema.single({
      Request: NewPending,
      Result: IdRow,
      execute: (row) =>
        sql`INSERT INTO collaborator_assessments
              (collaborator_id, patient_id, assessment_type, question_set_version, expires_at, created_at, updated_at)
            VALUES (${row.collaboratorId}, ${row.patientId}, ${row.assessmentType}, ${row.version}, ${row.expiresAt}, ${row.at}, ${row.at})
            ON CONFLICT (collaborator_id, patient_id, assessment_type) WHERE status = 'pending'
            DO UPDATE SET expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
            RETURNING id`
    })

    const findPendingForUpdate = SqlSchema.findOne({
      Request: Triple,
      Result: Schema.Struct({ id: Schema.Number, question_set_version: Schema.Int }),
      execute: ({ assessmentType, collaboratorId, patientId }) =>
        sql`SELECT id, question_set_version FROM collaborator_assessments
            WHERE collaborator_id = ${collaboratorId} AND patient_id = ${patientId} AND assessment_type = ${assessmentType} AND status = 'pending' FOR UPDATE`
    })

    const insertCompleted = SqlSchema.single({
      Request: NewCompleted,
      Result: IdRow,
      execute: (row) =>
        sql`INSERT INTO collaborator_assessments
              (collaborator_id, patient_id, assessment_type, question_set_version, status, created_at, updated_at)
            VALUES (${row.collaboratorId}, ${row.patientId}, ${row.assessmentType}, ${row.version}, 'completed', ${row.at}, ${row.at}) RETURNING id`
    })

    // Completed, its open link revoked, a pending collaborator made active: one statement (one round trip).
    const complete = SqlSchema.single({
      Request: Completion,
      Result: CompletedRow,
      execute: (c) =>
        sql`WITH completed AS (
            UPDATE collaborator_assessments a SET status = 'completed',
              responses = ${c.responses}::jsonb, total_score = ${c.totalScore},
              interpretation = ${c.interpretation}, completed_at = ${c.at}, expires_at = NULL, submitted_by = ${c.submittedBy}, updated_at = ${c.at}
            WHERE a.id = ${c.assessmentId} RETURNING ${columns}
          ), revoked AS (
            UPDATE collaborator_assessment_tokens SET revoked_at = ${c.at}
            WHERE assessment_id = ${c.assessmentId} AND used_at IS NULL AND revoked_at IS NULL
          ), activated AS (
            UPDATE collaborators SET status = 'active', updated_at = ${c.at}
            WHERE id = ${c.collaboratorId} AND status = 'pending' RETURNING id
          )
          SELECT a.*, EXISTS (SELECT 1 FROM activated) AS activated FROM completed a`
    })

    const markAlerted = SqlSchema.findOne({
      Request: Stamp,
      Result: Schema.Struct({ email: Schema.NullOr(Schema.String) }),
      execute: ({ at, id }) =>
        sql`UPDATE collaborator_assessments a SET alerted_at = ${at}
          WHERE a.id = ${id} AND a.alerted_at IS NULL
          RETURNING (SELECT u.email FROM patients p JOIN providers pr ON pr.id = p.provider_id JOIN users u ON u.id = pr.user_id
            WHERE p.id = a.patient_id AND u.deleted_at IS NULL) AS email`
    })

    const expire = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: IdRow,
      execute: (at) =>
        sql`UPDATE collaborator_assessments SET status = 'expired', updated_at = ${at}
        WHERE status = 'pending' AND expires_at <= ${at} RETURNING id`
    })

    return {
      list,
      findReadable: (reader: Reader, id: number) => orDefect(Effect.flatMap(now, (at) => findReadable(reader, at)(id))),
      /** Cancels the collaborator's pending assessments; their ids. */
      cancelPendingOf: (collaboratorId: number, at: Date) =>
        Effect.map(orDefect(cancelPendingOf({ id: collaboratorId, at })), (rows) => rows.map((row) => row.id)),
      cancel: (id: number, at: Date) => orDefect(cancel({ id, at })),
      /** The triple's pending assessment, made now or reused with the new expiry; its id. */
      upsertPending: (row: typeof NewPending.Type) => Effect.map(orDefect(upsertPending(row)), (r) => r.id),
      /** The triple's pending assessment, row-locked. */
      findPendingForUpdate: (triple: typeof Triple.Type) => orDefect(findPendingForUpdate(triple)),
      /** A new assessment for answers entered by a signed-in user (completed by `complete` next); its id. */
      insertCompleted: (row: typeof NewCompleted.Type) => Effect.map(orDefect(insertCompleted(row)), (r) => r.id),
      /** The completed row, and whether a pending collaborator became active. */
      complete: (completion: Completion) => orDefect(complete(completion)),
      /** Claims the alert once: the primary provider's address (null if none), or none when already alerted. */
      markAlerted: (id: number, at: Date) => Effect.map(orDefect(markAlerted({ id, at })), Option.map((row) => row.email)),
      /** Pending assessments whose link ran out become expired; their ids. */
      expire: (at: Date) => Effect.map(orDefect(expire(at)), (rows) => rows.map((row) => row.id))
    } as const
  })
}) {}
