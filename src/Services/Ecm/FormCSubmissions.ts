/**
 * Form C submissions (ECM §2.5, §4.4, §4.5): stored as given once `formDataProblems` and the
 * member id check pass; read by clinic staff per patient and by admins across patients.
 */
import { Effect, Option } from "effect"
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
import type { PageRequest } from "../../Api/Pagination.js"
import { formDataProblems, memberIdProblem } from "../../Domain/Ecm/FormC.js"
import { AuditLog } from "../AuditLog.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { FormCSubmissionsRepo, type SubmissionRow } from "./FormCSubmissionsRepo.js"

export const formCAdminPageSize = 25

const submissionNotFound = () => ecmNotFound("Form C submission")
const patientNotFound = () => ecmNotFound("Patient")

const recordOf = (row: SubmissionRow) => ({
  id: row.id,
  patient_id: row.patient_id,
  user_id: row.user_id,
  form_data: row.form_data,
  created_at: row.created_at,
  updated_at: row.updated_at
})

export class FormCSubmissions extends Effect.Service<FormCSubmissions>()("app/FormCSubmissions", {
  effect: Effect.gen(function*() {
    const repo = yield* FormCSubmissionsRepo
    const audit = yield* AuditLog
    const transaction = yield* makeTransaction

    const patientMemberId = (patientId: number) =>
      Effect.flatMap(repo.memberIdOf(patientId), Option.match({ onNone: () => Effect.fail(patientNotFound()), onSome: Effect.succeed }))

    const create = Effect.fn("FormCSubmissions.create")(function*(actorId: number, patientId: number, formData: unknown) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const memberId = yield* patientMemberId(patientId)
      const problems = formDataProblems(formData)
      if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
      const document = formData as Record<string, unknown>
      const mismatch = memberIdProblem(document, memberId)
      if (mismatch !== undefined) return yield* Effect.fail(ecmInvalid([mismatch]))
      const at = yield* now
      const row = yield* transaction(Effect.gen(function*() {
        // The patient row is locked against deletion between the check above and the insert:
        // none found means it went meanwhile.
        const inserted = yield* repo.insert({ patientId, actorId, formData: document, at })
        if (Option.isNone(inserted)) return undefined
        yield* audit.record({ actorId, action: "form_c_submission.create", targetType: "form_c_submission", targetId: inserted.value.id })
        return inserted.value
      }))
      if (row === undefined) return yield* Effect.fail(patientNotFound())
      yield* Effect.annotateCurrentSpan("form_c_submission.id", row.id)
      return FormCSubmissionResponse.make({ form_c_submission: FormCSubmission.make(recordOf(row), true) }, true)
    })

    const listForPatient = Effect.fn("FormCSubmissions.listForPatient")(function*(patientId: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      yield* patientMemberId(patientId)
      const rows = yield* repo.ofPatient(patientId)
      yield* Effect.annotateCurrentSpan("form_c_submissions.count", rows.length)
      return ClinicFormCList.make({ form_c_submissions: rows.map((r) => ClinicFormCListItem.make(r, true)) }, true)
    })

    const showForPatient = Effect.fn("FormCSubmissions.showForPatient")(function*(patientId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "form_c_submission.id": id })
      yield* patientMemberId(patientId)
      const found = yield* repo.detail(id, patientId)
      if (Option.isNone(found)) return yield* Effect.fail(submissionNotFound())
      const row = found.value
      return ClinicFormCSubmissionResponse.make({
        form_c_submission: ClinicFormCSubmission.make({ ...recordOf(row), user_name: row.user_name }, true)
      }, true)
    })

    const list = Effect.fn("FormCSubmissions.list")(function*(patientId: number | undefined, request: PageRequest) {
      const { pagination, rows } = yield* repo.list(patientId, request)
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
        pagination
      }, true)
    })

    const show = Effect.fn("FormCSubmissions.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "form_c_submission.id": id })
      const found = yield* repo.detail(id)
      if (Option.isNone(found)) return yield* Effect.fail(submissionNotFound())
      const row = found.value
      return AdminFormCSubmissionResponse.make({
        form_c_submission: AdminFormCSubmission.make({ ...recordOf(row), patient_name: row.patient_name, user_name: row.user_name }, true)
      }, true)
    })

    /**
     * The latest submission time of each of `patientIds`: what the PRTF report's assessment
     * column reads (one index probe per patient on form_c_submissions_patient_idx).
     */
    const latestSubmittedAt = Effect.fn("FormCSubmissions.latestSubmittedAt")(function*(patientIds: ReadonlyArray<number>) {
      yield* Effect.annotateCurrentSpan({ "patients.count": patientIds.length })
      const rows = yield* repo.latestSubmittedAt(patientIds)
      return new Map(rows.map((r) => [r.patient_id, r.submitted_at]))
    })

    return { create, listForPatient, showForPatient, list, show, latestSubmittedAt } as const
  }),
  dependencies: [FormCSubmissionsRepo.Default]
}) {}
