/**
 * Form C submissions (ECM §2.5, §4.4, §4.5): stored as given once `formDataProblems` and the
 * member id check pass; read by clinic staff per patient and by admins across patients.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import {
  AdminFormCList,
  AdminFormCListItem,
  AdminFormCSubmission,
  AdminFormCSubmissionResponse,
  ClinicFormCList,
  ClinicFormCListItem,
  ClinicFormCSubmission,
  ClinicFormCSubmissionResponse,
  FormCSubmission,
  FormCSubmissionResponse
} from "../../Api/Ecm/FormC.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { formDataProblems, memberIdProblem } from "../../Domain/Ecm/FormC.js"
import { AuditLog } from "../AuditLog.js"

export const formCAdminPageSize = 25

const submissionNotFound = () => ecmNotFound("Form C submission")
const patientNotFound = () => ecmNotFound("Patient")

interface SubmissionRow {
  readonly id: number
  readonly patient_id: number
  readonly user_id: number
  readonly form_data: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
  readonly user_name: string
  readonly patient_name: string
}

/** The driver may hand jsonb back as text when a value cannot be parsed on its side. */
const objectOf = (value: unknown): Record<string, unknown> =>
  (typeof value === "string" ? JSON.parse(value) : value) as Record<string, unknown>

const recordOf = (row: SubmissionRow) => ({
  id: row.id,
  patient_id: row.patient_id,
  user_id: row.user_id,
  form_data: objectOf(row.form_data),
  created_at: row.created_at,
  updated_at: row.updated_at
})

export class FormCSubmissions extends Effect.Service<FormCSubmissions>()("app/FormCSubmissions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    const patientMemberId = (patientId: number) =>
      sql<{ member_id: string | null }>`SELECT member_id FROM patients WHERE id = ${patientId}`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => (row === undefined ? Effect.fail(patientNotFound()) : Effect.succeed(row.member_id)))
      )

    const create = (actorId: number, patientId: number, formData: unknown) =>
      Effect.gen(function*() {
        const memberId = yield* patientMemberId(patientId)
        const problems = formDataProblems(formData)
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        const document = formData as Record<string, unknown>
        const mismatch = memberIdProblem(document, memberId)
        if (mismatch !== undefined) return yield* Effect.fail(ecmInvalid([mismatch]))
        const now = new Date(yield* Clock.currentTimeMillis)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          // The patient row is locked against deletion between the check above and the insert:
          // none found means it went meanwhile.
          const [inserted] = yield* sql<SubmissionRow>`INSERT INTO form_c_submissions (patient_id, user_id, form_data, created_at, updated_at)
            SELECT id, ${actorId}, ${JSON.stringify(document)}::jsonb, ${now}, ${now} FROM patients WHERE id = ${patientId} FOR KEY SHARE
            RETURNING id, patient_id, user_id, form_data, created_at, updated_at`
          if (inserted === undefined) return undefined
          yield* audit.record({ actorId, action: "form_c_submission.create", targetType: "form_c_submission", targetId: inserted.id })
          return inserted
        })).pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(patientNotFound())
        yield* Effect.annotateCurrentSpan("form_c_submission.id", row.id)
        return FormCSubmissionResponse.make({ form_c_submission: FormCSubmission.make(recordOf(row), true) }, true)
      }).pipe(Effect.withSpan("FormCSubmissions.create", { attributes: { "patient.id": patientId } }))

    const listForPatient = (patientId: number) =>
      Effect.gen(function*() {
        yield* patientMemberId(patientId)
        const rows = yield* sql<{ id: number; patient_id: number; user_id: number; created_at: Date }>`
          SELECT id, patient_id, user_id, created_at FROM form_c_submissions
          WHERE patient_id = ${patientId} ORDER BY created_at DESC, id DESC`.pipe(Effect.orDie)
        yield* Effect.annotateCurrentSpan("form_c_submissions.count", rows.length)
        return ClinicFormCList.make({ form_c_submissions: rows.map((r) => ClinicFormCListItem.make(r, true)) }, true)
      }).pipe(Effect.withSpan("FormCSubmissions.listForPatient", { attributes: { "patient.id": patientId } }))

    const detailColumns = sql`s.id, s.patient_id, s.user_id, s.form_data, s.created_at, s.updated_at,
      u.first_name || ' ' || u.last_name AS user_name, p.first_name || ' ' || p.last_name AS patient_name`
    const detailFrom = sql`form_c_submissions s JOIN users u ON u.id = s.user_id JOIN patients p ON p.id = s.patient_id`

    const showForPatient = (patientId: number, id: number) =>
      Effect.gen(function*() {
        yield* patientMemberId(patientId)
        const [row] = yield* sql<SubmissionRow>`SELECT ${detailColumns} FROM ${detailFrom}
          WHERE s.id = ${id} AND s.patient_id = ${patientId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(submissionNotFound())
        return ClinicFormCSubmissionResponse.make({
          form_c_submission: ClinicFormCSubmission.make({ ...recordOf(row), user_name: row.user_name }, true)
        }, true)
      }).pipe(Effect.withSpan("FormCSubmissions.showForPatient", { attributes: { "patient.id": patientId, "form_c_submission.id": id } }))

    const list = (patientId: number | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const where = patientId === undefined ? sql`TRUE` : sql`s.patient_id = ${patientId}`
        const rows = yield* sql<Omit<SubmissionRow, "form_data" | "updated_at">>`
          SELECT s.id, s.patient_id, s.user_id, s.created_at,
            u.first_name || ' ' || u.last_name AS user_name, p.first_name || ' ' || p.last_name AS patient_name
          FROM ${detailFrom} WHERE ${where}
          ORDER BY s.created_at DESC, s.id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM form_c_submissions s WHERE ${where}`
        return AdminFormCList.make({
          form_c_submissions: rows.map((r) =>
            AdminFormCListItem.make({
              id: r.id,
              patient_id: r.patient_id,
              patient_name: r.patient_name,
              user_id: r.user_id,
              user_name: r.user_name,
              created_at: r.created_at
            }, true)),
          pagination: paginationOf(request, counted?.count ?? 0)
        }, true)
      }).pipe(Effect.orDie, Effect.withSpan("FormCSubmissions.list"))

    const show = (id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<SubmissionRow>`SELECT ${detailColumns} FROM ${detailFrom} WHERE s.id = ${id}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(submissionNotFound())
        return AdminFormCSubmissionResponse.make({
          form_c_submission: AdminFormCSubmission.make({ ...recordOf(row), patient_name: row.patient_name, user_name: row.user_name }, true)
        }, true)
      }).pipe(Effect.withSpan("FormCSubmissions.show", { attributes: { "form_c_submission.id": id } }))

    /**
     * The latest submission time of each of `patientIds`: what the PRTF report's assessment
     * column reads (one index probe per patient on form_c_submissions_patient_idx).
     */
    const latestSubmittedAt = (patientIds: ReadonlyArray<number>) =>
      sql<{ patient_id: number; submitted_at: Date }>`
        SELECT p.id AS patient_id, latest.created_at AS submitted_at
        FROM jsonb_array_elements_text(${JSON.stringify(patientIds)}::jsonb) AS ids(value)
        CROSS JOIN LATERAL (SELECT ids.value::int AS id) p
        CROSS JOIN LATERAL (SELECT created_at FROM form_c_submissions s WHERE s.patient_id = p.id
          ORDER BY created_at DESC, id DESC LIMIT 1) latest`.pipe(
        Effect.orDie,
        Effect.map((rows) => new Map(rows.map((r) => [r.patient_id, r.submitted_at]))),
        Effect.withSpan("FormCSubmissions.latestSubmittedAt", { attributes: { "patients.count": patientIds.length } })
      )

    return { create, listForPatient, showForPatient, list, show, latestSubmittedAt } as const
  })
}) {}
