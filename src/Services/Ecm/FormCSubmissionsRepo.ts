/**
 * The only SQL on `form_c_submissions` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. A patient's member id (what a submission is checked against) is read here until
 * patients have a repository of their own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
/** jsonb: an object; the driver may hand it back as text when it cannot parse a value on its side. */
const StoredFormData = Schema.Union(JsonObject, Schema.parseJson(JsonObject))

/** A submission as stored. */
export const SubmissionRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  user_id: Schema.Int,
  form_data: StoredFormData,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type SubmissionRow = typeof SubmissionRow.Type

/** A submission with its author's and patient's names. */
export const SubmissionDetailRow = Schema.Struct({ ...SubmissionRow.fields, user_name: Schema.String, patient_name: Schema.String })
export type SubmissionDetailRow = typeof SubmissionDetailRow.Type

/** A patient's list: no form data. */
export const PatientSubmissionRow = Schema.Struct({ id: Schema.Int, patient_id: Schema.Int, user_id: Schema.Int, created_at: Schema.DateFromSelf })
export type PatientSubmissionRow = typeof PatientSubmissionRow.Type

/** The admin list: names, no form data. */
export const SubmissionListRow = Schema.Struct({
  ...PatientSubmissionRow.fields,
  user_name: Schema.String,
  patient_name: Schema.String
})
export type SubmissionListRow = typeof SubmissionListRow.Type

const NewSubmission = Schema.Struct({ patientId: Schema.Int, actorId: Schema.Int, formData: JsonObject, at: Schema.DateFromSelf })
export type NewSubmission = typeof NewSubmission.Type


export class FormCSubmissionsRepo extends Effect.Service<FormCSubmissionsRepo>()("app/FormCSubmissionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const detailColumns = sql`s.id, s.patient_id, s.user_id, s.form_data, s.created_at, s.updated_at,
      u.first_name || ' ' || u.last_name AS user_name, p.first_name || ' ' || p.last_name AS patient_name`
    const detailFrom = sql`form_c_submissions s JOIN users u ON u.id = s.user_id JOIN patients p ON p.id = s.patient_id`
    const patientClause = (patientId: number | undefined) => patientId === undefined ? sql`TRUE` : sql`s.patient_id = ${patientId}`
    const newestFirst = { created_at: sql`s.created_at` }

    const memberIdOf = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ member_id: Schema.NullOr(Schema.String) }),
      execute: (patientId) => sql`SELECT member_id FROM patients WHERE id = ${patientId}`
    })

    // The patient row is locked against deletion until the transaction ends: none found means it went.
    const insert = SqlSchema.findOne({
      Request: NewSubmission,
      Result: SubmissionRow,
      execute: ({ actorId, at, formData, patientId }) =>
        sql`INSERT INTO form_c_submissions (patient_id, user_id, form_data, created_at, updated_at)
          SELECT id, ${actorId}, ${JSON.stringify(formData)}::jsonb, ${at}, ${at} FROM patients WHERE id = ${patientId} FOR KEY SHARE
          RETURNING id, patient_id, user_id, form_data, created_at, updated_at`
    })

    const ofPatient = SqlSchema.findAll({
      Request: Schema.Int,
      Result: PatientSubmissionRow,
      execute: (patientId) =>
        sql`SELECT id, patient_id, user_id, created_at FROM form_c_submissions
          WHERE patient_id = ${patientId} ORDER BY created_at DESC, id DESC`
    })

    const detail = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, patientId: Schema.optional(Schema.Int) }),
      Result: SubmissionDetailRow,
      execute: ({ id, patientId }) => sql`SELECT ${detailColumns} FROM ${detailFrom} WHERE s.id = ${id} AND ${patientClause(patientId)}`
    })

    // One index probe per patient on form_c_submissions_patient_idx.
    const latest = SqlSchema.findAll({
      Request: Schema.Array(Schema.Int),
      Result: Schema.Struct({ patient_id: Schema.Int, submitted_at: Schema.DateFromSelf }),
      execute: (patientIds) =>
        sql`SELECT p.id AS patient_id, latest.created_at AS submitted_at
          FROM jsonb_array_elements_text(${JSON.stringify(patientIds)}::jsonb) AS ids(value)
          CROSS JOIN LATERAL (SELECT ids.value::int AS id) p
          CROSS JOIN LATERAL (SELECT created_at FROM form_c_submissions s WHERE s.patient_id = p.id
            ORDER BY created_at DESC, id DESC LIMIT 1) latest`
    })

    return {
      /** The patient's member id (null when it has none), if the patient exists. */
      memberIdOf: (patientId: number) => Effect.map(orDefect(memberIdOf(patientId)), Option.map((row) => row.member_id)),
      /** Stores a submission if the patient still exists (locking it against deletion until the transaction ends). */
      insert: (submission: NewSubmission) => orDefect(insert(submission)),
      /** The patient's submissions, newest first. */
      ofPatient: (patientId: number) => orDefect(ofPatient(patientId)),
      /** A submission with its names; of `patientId` when given. */
      detail: (id: number, patientId?: number) => orDefect(detail({ id, patientId })),
      /** A page of every submission (or one patient's), newest first. */
      list: (patientId: number | undefined, request: PageRequest) =>
        listPage({
          select: sql`s.id, s.patient_id, s.user_id, s.created_at,
            u.first_name || ' ' || u.last_name AS user_name, p.first_name || ' ' || p.last_name AS patient_name`,
          from: detailFrom,
          countFrom: sql`form_c_submissions s`,
          row: SubmissionListRow,
          filters: [patientId !== undefined && sql`s.patient_id = ${patientId}`],
          sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`s.id` }
        }, request),
      /** The latest submission time of each of `patientIds` that has one. */
      latestSubmittedAt: (patientIds: ReadonlyArray<number>) => orDefect(latest(patientIds))
    } as const
  })
}) {}
