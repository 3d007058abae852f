/**
 * Who may see which patient (general §4.2, ARCHITECTURE "People"): clinic staff see every patient;
 * a `parent` sees only the patients linked to their own account (`patients.user_id`). A patient
 * the caller may not see answers exactly like one that does not exist — 404
 * `{"errors":"Patient not found"}` — so ids never leak.
 *
 * Every patient-scoped record (help requests, treatment plans, spots, documents, appointments …)
 * goes through `visiblePatient` or `defaultPatientFor` before it reads or writes anything.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { invalidField, notFound, type NotFound, type ValidationFailed } from "../../Api/Errors.js"
import { isStaff, type Role } from "../../Domain/Accounts/User.js"
import type { PatientId } from "../../Domain/Ids.js"

/** The part of the signed-in caller the rule reads (`Caller` from src/Api/Security.ts fits). */
export interface PatientViewer {
  readonly id: number
  readonly role: Role
}

export const patientNotFound = () => notFound("Patient")

export class PatientAccess extends Effect.Service<PatientAccess>()("app/PatientAccess", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The patient id when the caller may see that patient, else 404 "Patient not found" (also for
     * ids that do not exist). One indexed statement: the primary key, plus `user_id` for parents.
     */
    const visiblePatient = (viewer: PatientViewer, patientId: number): Effect.Effect<PatientId, NotFound> =>
      Effect.gen(function*() {
        const rows = isStaff(viewer.role)
          ? yield* sql<{ id: number }>`SELECT id FROM patients WHERE id = ${patientId}`
          : yield* sql<{ id: number }>`SELECT id FROM patients WHERE id = ${patientId} AND user_id = ${viewer.id}`
        if (rows.length === 0) return yield* Effect.fail(patientNotFound())
        return rows[0]!.id as PatientId
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("PatientAccess.visiblePatient", { attributes: { "patient.id": patientId } })
      )

    /** The ids of the patients linked to a parent's account, oldest first (at most `limit`). */
    const linkedPatients = (userId: number, limit = 2): Effect.Effect<ReadonlyArray<PatientId>> =>
      sql<{ id: number }>`SELECT id FROM patients WHERE user_id = ${userId} ORDER BY id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id as PatientId)),
        Effect.orDie
      )

    /**
     * The patient a request about "a patient's records" is about, for paths that carry no patient
     * id (`/v1/clinic/patients/help_requests?patient_id=…`): the given `patient_id` through
     * `visiblePatient`; without one, a parent with exactly one linked patient gets that patient.
     * Anyone else without one gets 422 `{"errors":{"patient_id":["can't be blank"]}}` (staff must
     * say which patient; a parent with none or several must choose).
     */
    const defaultPatientFor = (
      viewer: PatientViewer,
      patientId: number | undefined
    ): Effect.Effect<PatientId, NotFound | ValidationFailed> =>
      Effect.gen(function*() {
        if (patientId !== undefined) return yield* visiblePatient(viewer, patientId)
        if (isStaff(viewer.role)) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
        const linked = yield* linkedPatients(viewer.id)
        if (linked.length !== 1) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
        return linked[0]!
      }).pipe(Effect.withSpan("PatientAccess.defaultPatientFor"))

    return { visiblePatient, defaultPatientFor, linkedPatients } as const
  })
}) {}
