/**
 * Record-level access (ARCHITECTURE "Access"): the one place that decides which records a caller
 * may see or change. Role checks per group or endpoint stay in the Api's security middlewares;
 * everything finer is here — `Viewer.ts` (the caller and the checks over one record), `AccessRepo.ts`
 * (the same rules as SQL conditions for lists) and this service (the rules that read the database).
 *
 * Patients (docs/spec-decisions.md "Who sees which patient"): admins see every patient; front
 * desk (`support`) and `billing` every patient's demographics, scheduling and billing but no
 * clinical content; providers and supervisors the patients of their care relationships (primary
 * provider, an appointment in the past or the next 90 days, a case-load role, supervision of the
 * provider); a `parent` the patients linked to their own account (`patients.user_id`). A staff
 * member may open a patient outside their care relationships by giving a reason (`X-Access-Reason`:
 * break-glass): allowed, written to the audit trail with the reason, listed for admins. A patient
 * the caller may not see answers exactly like one that does not exist — 404
 * `{"errors":"Patient not found"}` — so ids never leak. Every patient-scoped record (help requests,
 * treatment plans, spots, documents, appointments …) goes through `visiblePatient` or
 * `defaultPatientFor` before it reads or writes.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { invalidField, notFound, type NotFound } from "../../Api/Errors.js"
import type { PatientId } from "../../Domain/Ids.js"
import { now } from "../Time.js"
import { AccessRepo } from "./AccessRepo.js"
import { BreakGlassRepo } from "./BreakGlassRepo.js"
import { scope } from "./AccessRepo.js"
import { followsCareRelationships, isParent, isStaff, type ProviderViewer, type Purpose, type Viewer } from "./Viewer.js"
import { currentTraceId } from "../Spans.js"

export * from "./Viewer.js"
export { scope } from "./AccessRepo.js"

export const patientNotFound = () => notFound("Patient")

export class Access extends Effect.Service<Access>()("app/Access", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const breakGlass = yield* BreakGlassRepo
    const repo = yield* AccessRepo

    /**
     * The patient id when the caller may see that patient for the purpose, else 404 "Patient not
     * found" (also for ids that do not exist). One indexed statement (the primary key and the care
     * relationship of `scope.patientsOf`). A provider or supervisor outside their care
     * relationships who gave a reason (`viewer.breakGlass`) is let in, and the access is recorded
     * (audit entry `patient.break_glass` and the reason). Front desk and billing never see
     * clinical content, reason or not: break-glass widens whose records, not which.
     */
    const visiblePatient = Effect.fn("Access.visiblePatient")(function*(viewer: Viewer, patientId: number, purpose: Purpose = "general") {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "access.purpose": purpose })
      const at = yield* now
      const row = yield* repo.related(viewer, patientId, purpose, at)
      if (Option.isNone(row)) return yield* Effect.fail(patientNotFound())
      if (row.value.related || (yield* openedWithGlass(viewer, row.value.id, at))) return row.value.id
      return yield* Effect.fail(patientNotFound())
    })

    /** Whether a provider or supervisor breaks the glass for an existing patient; if so the access is recorded. */
    const openedWithGlass = (viewer: Viewer, patientId: number, at: Date): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const glass = viewer.breakGlass
        if (glass === undefined || glass === null || !followsCareRelationships(viewer)) return false
        const traceId = yield* currentTraceId
        yield* breakGlass.insert({
          user_id: viewer.id,
          patient_id: patientId,
          reason: glass.reason,
          request_method: glass.method,
          request_path: glass.path,
          trace_id: traceId,
          created_at: at
        })
        yield* Effect.annotateCurrentSpan("access.break_glass", true)
        return true
      })

    /**
     * Which of these patients the caller may see for the purpose (`visiblePatient`'s rule, break-glass
     * included: each patient opened is recorded), in one statement for the ones in the caller's
     * relationships. Unknown ids are simply not among them.
     */
    const visiblePatients: (viewer: Viewer, patientIds: ReadonlyArray<number>, purpose?: Purpose) => Effect.Effect<ReadonlyArray<PatientId>> =
      Effect.fn("Access.visiblePatients")(function*(viewer: Viewer, patientIds: ReadonlyArray<number>, purpose: Purpose = "general") {
        yield* Effect.annotateCurrentSpan({ "patients.count": patientIds.length, "access.purpose": purpose })
        if (patientIds.length === 0) return []
        const at = yield* now
        const rows = yield* repo.relatedAll(viewer, patientIds, purpose, at)
        const visible: Array<PatientId> = []
        for (const row of rows) if (row.related || (yield* openedWithGlass(viewer, row.id, at))) visible.push(row.id)
        return visible
      })

    /**
     * The appointment's patient when the caller may see that patient (scheduling: a `general`
     * purpose; break-glass applies), else 404 "Appointment not found", also for unknown ids.
     */
    const visibleAppointment = (viewer: Viewer, appointmentId: number): Effect.Effect<PatientId, NotFound> =>
      Effect.gen(function*() {
        const patientId = yield* repo.appointmentPatient(appointmentId)
        if (Option.isNone(patientId)) return yield* Effect.fail(notFound("Appointment"))
        return yield* Effect.mapError(visiblePatient(viewer, patientId.value), () => notFound("Appointment"))
      })

    /**
     * Whether the caller may see a record they loaded by id with `visible` = its list scope
     * computed beside it: in scope, or a patient's record a provider or supervisor opens through
     * `visiblePatient` (their care relationships, or break-glass). Else `notVisible`.
     */
    const visibleRecord = <E>(
      viewer: Viewer,
      row: { readonly visible: boolean; readonly patient_id: number | null },
      notVisible: () => E,
      purpose: Purpose = "general"
    ): Effect.Effect<void, E> =>
      row.visible
        ? Effect.void
        : row.patient_id !== null && followsCareRelationships(viewer)
        ? Effect.mapError(Effect.asVoid(visiblePatient(viewer, row.patient_id, purpose)), notVisible)
        : Effect.fail(notVisible())

    /** A content assignment (user piece or collection) with `visible` = `scope.contentAssignments`: `visibleRecord`. */
    const visibleAssignment = <E>(
      viewer: Viewer,
      row: { readonly visible: boolean; readonly patient_id: number | null },
      notVisible: () => E
    ): Effect.Effect<void, E> => visibleRecord(viewer, row, notVisible)

    /**
     * Whether the viewer sees a patient for a purpose without breaking the glass (no audit entry):
     * for rules that narrow a list or a field, never to open a record.
     */
    const relatedTo = (viewer: Viewer, patientId: number, purpose: Purpose = "general"): Effect.Effect<boolean> =>
      Effect.flatMap(now, (at) => repo.related(viewer, patientId, purpose, at)).pipe(
        Effect.map(Option.exists((row) => row.related))
      )

    /** The ids of the patients linked to a parent's account, oldest first (at most `limit`). */
    const linkedPatients = (userId: number, limit = 2): Effect.Effect<ReadonlyArray<PatientId>> =>
      repo.linkedPatients(userId, limit)

    /**
     * The patient a request about "a patient's records" is about, for paths that carry no patient
     * id (`/v1/clinic/patients/help_requests?patient_id=…`): the given `patient_id` through
     * `visiblePatient`; without one, a parent with exactly one linked patient gets that patient.
     * Anyone else without one gets 422 `{"errors":{"patient_id":["can't be blank"]}}` (staff must
     * say which patient; a parent with none or several must choose).
     */
    const defaultPatientFor = Effect.fn("Access.defaultPatientFor")(function*(
      viewer: Viewer,
      patientId: number | undefined,
      purpose: Purpose = "general"
    ) {
      if (patientId !== undefined) return yield* visiblePatient(viewer, patientId, purpose)
      if (isStaff(viewer.role)) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
      const linked = yield* linkedPatients(viewer.id)
      if (linked.length !== 1) return yield* Effect.fail(invalidField("patient_id", "can't be blank"))
      return linked[0]!
    })

    /**
     * The viewer with their active provider profile (the video rules): parents have none; anyone
     * else their active one, if any.
     */
    const withActiveProvider = (viewer: Viewer): Effect.Effect<ProviderViewer> =>
      Effect.gen(function*() {
        if (isParent(viewer)) return { id: viewer.id, role: viewer.role, providerId: null }
        const profile = yield* repo.providerProfile(viewer.id, true)
        return { id: viewer.id, role: viewer.role, breakGlass: viewer.breakGlass, providerId: Option.getOrNull(profile) }
      })

    /**
     * The viewer with their provider profile as prescriber (the prescription rules): providers and
     * supervisors their profile, active or not (a deactivated prescriber still answers for what
     * they wrote); other roles none.
     */
    const withPrescriberProfile = (viewer: Viewer): Effect.Effect<ProviderViewer> =>
      Effect.gen(function*() {
        if (viewer.role !== "provider" && viewer.role !== "supervisor") return { ...viewer, providerId: null }
        const profile = yield* repo.providerProfile(viewer.id, false)
        return { ...viewer, providerId: Option.getOrNull(profile) }
      })

    /** A list scope over the patient aliased `p` at the current time: `scope.patients`. */
    const patientsScope = (viewer: Viewer, purpose: Purpose = "general") => Effect.map(now, (at) => scope.patients(sql, viewer, at, purpose))

    return { visiblePatient, visiblePatients, visibleAppointment, visibleRecord, visibleAssignment, relatedTo, defaultPatientFor, linkedPatients, withActiveProvider, withPrescriberProfile, patientsScope } as const
  }),
  dependencies: [AccessRepo.Default, BreakGlassRepo.Default]
}) {
  /** List scopes, e.g. `Access.scope.appointments(sql, viewer)`: see `AccessRepo.ts`. */
  static readonly scope = scope
}
