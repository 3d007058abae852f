/**
 * Record-level access (ARCHITECTURE "Access"): the one place that decides which records a caller
 * may see or change. Role checks per group or endpoint stay in the Api's security middlewares;
 * everything finer is here — `Viewer.ts` (the caller and the checks over one record), `Scopes.ts`
 * (the same rules as SQL conditions for lists) and this service (the rules that read the database).
 *
 * Patients (general §4.2, ARCHITECTURE "People"): clinic staff see every patient; a `parent` sees
 * only the patients linked to their own account (`patients.user_id`). A patient the caller may not
 * see answers exactly like one that does not exist — 404 `{"errors":"Patient not found"}` — so ids
 * never leak. Every patient-scoped record (help requests, treatment plans, spots, documents,
 * appointments …) goes through `visiblePatient` or `defaultPatientFor` before it reads or writes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { invalidField, notFound, type NotFound, type ValidationFailed } from "../../Api/Errors.js"
import type { PatientId } from "../../Domain/Ids.js"
import { scope } from "./Scopes.js"
import { isParent, isStaff, type ProviderViewer, type Viewer } from "./Viewer.js"

export * from "./Viewer.js"
export { scope } from "./Scopes.js"

export const patientNotFound = () => notFound("Patient")

export class Access extends Effect.Service<Access>()("app/Access", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The patient id when the caller may see that patient, else 404 "Patient not found" (also for
     * ids that do not exist). One indexed statement: the primary key, plus `user_id` for parents.
     */
    const visiblePatient = (viewer: Viewer, patientId: number): Effect.Effect<PatientId, NotFound> =>
      Effect.gen(function*() {
        const rows = isStaff(viewer.role)
          ? yield* sql<{ id: number }>`SELECT id FROM patients WHERE id = ${patientId}`
          : yield* sql<{ id: number }>`SELECT id FROM patients WHERE id = ${patientId} AND user_id = ${viewer.id}`
        if (rows.length === 0) return yield* Effect.fail(patientNotFound())
        return rows[0]!.id as PatientId
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("Access.visiblePatient", { attributes: { "patient.id": patientId } })
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
      viewer: Viewer,
      patientId: number | undefined
    ): Effect.Effect<PatientId, NotFound | ValidationFailed> =>
      Effect.gen(function*() {
        if (patientId !== undefined) return yield* visiblePatient(viewer, patientId)
        if (isStaff(viewer.role)) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
        const linked = yield* linkedPatients(viewer.id)
        if (linked.length !== 1) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
        return linked[0]!
      }).pipe(Effect.withSpan("Access.defaultPatientFor"))

    /**
     * The viewer with their active provider profile (the video rules): parents have none; anyone
     * else their active one, if any.
     */
    const withActiveProvider = (viewer: Viewer): Effect.Effect<ProviderViewer> =>
      Effect.gen(function*() {
        if (isParent(viewer)) return { id: viewer.id, role: viewer.role, providerId: null }
        const rows = yield* sql<{ id: number }>`SELECT id FROM providers WHERE user_id = ${viewer.id} AND active`.pipe(Effect.orDie)
        return { id: viewer.id, role: viewer.role, providerId: rows[0]?.id ?? null }
      })

    /**
     * The viewer with their provider profile as prescriber (the prescription rules): providers and
     * supervisors their profile, active or not (a deactivated prescriber still answers for what
     * they wrote); other roles none.
     */
    const withPrescriberProfile = (viewer: Viewer): Effect.Effect<ProviderViewer> =>
      Effect.gen(function*() {
        if (viewer.role !== "provider" && viewer.role !== "supervisor") return { ...viewer, providerId: null }
        const [profile] = yield* sql<{ id: number }>`SELECT id FROM providers WHERE user_id = ${viewer.id}`
        return { ...viewer, providerId: profile?.id ?? null }
      }).pipe(Effect.orDie)

    return { visiblePatient, defaultPatientFor, linkedPatients, withActiveProvider, withPrescriberProfile } as const
  })
}) {
  /** List scopes, e.g. `Access.scope.appointments(sql, viewer)`: see `Scopes.ts`. */
  static readonly scope = scope
}
