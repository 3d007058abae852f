/**
 * Lead care managers (ECM §4.8): the oLCM and iLCM of each patient's case load (`case_loads`,
 * one row per patient). Assign, update and bulk assign share one set-based path (`apply`), so a
 * request of 1,000 assignments costs the same handful of statements as a request of one:
 * look up and lock every patient and user named, judge each assignment on its own
 * (src/Domain/Ecm/LeadCareManagers.ts), then write the accepted ones with one statement per step.
 * Every role change is kept in `case_load_changes` (from whom to whom, by whom, through which
 * operation) and audited.
 */
import { Effect, Option } from "effect"
import {
  AssignedLeadCareManager,
  AssignLeadCareManagersResponse,
  BulkAssignFailure,
  BulkAssignResponse,
  BulkAssignSuccess,
  CaseLoad,
  LeadCareManager,
  LeadCareManagerList,
  LeadCareManagerMessage,
  PatientCaseLoadManagers,
  PatientLeadCareManagersResponse
} from "../../Api/Ecm/LeadCareManagers.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  type Assignment,
  assignmentProblems,
  type Candidate,
  canLeadCare,
  type LeadCareManagerRole,
  leadCareManagerRoles,
  messages,
  userIdOf
} from "../../Domain/Ecm/LeadCareManagers.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { CaseLoadsRepo, type ChangeVia, type RoleChange } from "./CaseLoadsRepo.js"
import { currentTraceId } from "../Spans.js"

export type { ChangeVia } from "./CaseLoadsRepo.js"

export const leadCareManagersPageSize = 25

export interface LeadCareManagerCriteria {
  readonly search?: string | undefined
  readonly role?: LeadCareManagerRole | undefined
}

/** The outcome of one assignment of a request, in the order sent. */
type Outcome = { readonly patientId: number; readonly problems: ReadonlyArray<string> }

const assignedOf = (userId: number | null, name: string | null, email: string | null, at: Date | null) =>
  userId === null ? null : AssignedLeadCareManager.make({ user_id: userId, name: name ?? "", email: email ?? "", assigned_at: at }, true)

export class LeadCareManagers extends Effect.Service<LeadCareManagers>()("app/LeadCareManagers", {
  effect: Effect.gen(function*() {
    const caseLoads = yield* CaseLoadsRepo
    const transaction = yield* makeTransaction

    /** The audit trail and the change history of `changes`, in one statement. */
    const recordChanges = (actorId: number, via: ChangeVia, changes: ReadonlyArray<RoleChange>, at: Date) =>
      Effect.gen(function*() {
        if (changes.length === 0) return
        const traceId = yield* currentTraceId
        yield* caseLoads.recordChanges({ actorId, via, changes, at, traceId })
      })

    /**
     * Judges and applies `assignments` in the current transaction; one outcome per assignment.
     * Patients and users are locked (in id order, so concurrent requests cannot deadlock) from
     * the check to the commit: no user is archived, and no patient deleted, in between.
     */
    const apply = (actorId: number, assignments: ReadonlyArray<Assignment>, via: ChangeVia) =>
      Effect.gen(function*() {
        const patientIds = [...new Set(assignments.map((a) => a.patient_id))]
        const userIds = [...new Set(assignments.flatMap((a) => leadCareManagerRoles.map((r) => userIdOf(a, r))))]
          .filter((id): id is number => id !== undefined)
        const patients = yield* caseLoads.lockPatients(patientIds)
        const users = yield* caseLoads.lockUsers(userIds)
        const existing = new Set(patients)
        const candidates = new Map<number, Candidate>(users.map((u) => [u.id, canLeadCare(u) ? "eligible" : "ineligible"]))
        const lookup = { patientExists: (id: number) => existing.has(id), candidate: (id: number) => candidates.get(id) ?? "unknown" }

        const seen = new Set<number>()
        const outcomes: Array<Outcome> = assignments.map((assignment) => {
          const problems = assignmentProblems(assignment, lookup, seen.has(assignment.patient_id))
          // A patient's first applied assignment wins; later ones would overwrite it silently.
          if (problems.length === 0) seen.add(assignment.patient_id)
          return { patientId: assignment.patient_id, problems }
        })
        const accepted = assignments.filter((_, i) => outcomes[i]!.problems.length === 0)
        if (accepted.length === 0) return outcomes

        const at = yield* now
        const acceptedIds = accepted.map((a) => a.patient_id).sort((a, b) => a - b)
        // Every accepted patient gets a case load (in id order); then the rows are locked and read
        // as they are now, so the change history names who held each role just before.
        yield* caseLoads.ensure(acceptedIds, at)
        const current = yield* caseLoads.lockHolders(acceptedIds)
        const byPatient = new Map(current.map((c) => [c.patient_id, c]))

        const changes: Array<RoleChange> = []
        for (const assignment of accepted) {
          const row = byPatient.get(assignment.patient_id)!
          for (const role of leadCareManagerRoles) {
            const to = userIdOf(assignment, role)
            const from = role === "olcm" ? row.olcm_user_id : row.ilcm_user_id
            if (to === undefined || to === from) continue
            changes.push({ case_load_id: row.id, patient_id: row.patient_id, role, from_user_id: from, to_user_id: to })
          }
        }
        if (changes.length > 0) {
          const changedPatients = new Set(changes.map((c) => c.patient_id))
          const updates = accepted.filter((a) => changedPatients.has(a.patient_id))
            .map((a) => ({ patient_id: a.patient_id, olcm: a.olcm_user_id ?? null, ilcm: a.ilcm_user_id ?? null }))
          yield* caseLoads.assign(updates, at)
          yield* recordChanges(actorId, via, changes, at)
        }
        yield* Effect.annotateCurrentSpan({ "assignments.count": assignments.length, "assignments.accepted": accepted.length, "case_load.changes": changes.length })
        return outcomes
      })

    /** Assign (POST) and update (PUT): one assignment, 404 for an unknown patient, 422 for the rest. */
    const assign = (actorId: number, assignment: Assignment, via: "assign" | "update") =>
      Effect.gen(function*() {
        const row = yield* transaction(Effect.gen(function*() {
          const [outcome] = yield* apply(actorId, [assignment], via)
          if (outcome!.problems.includes(messages.patientNotFound)) return { problem: ecmNotFound("Patient") } as const
          if (outcome!.problems.length > 0) return { problem: ecmInvalid(outcome!.problems) } as const
          return { row: Option.getOrThrow(yield* caseLoads.caseLoadOf(assignment.patient_id)) } as const
        }))
        if ("problem" in row) return yield* Effect.fail(row.problem)
        const c = row.row
        return AssignLeadCareManagersResponse.make({
          message: via === "assign" ? "Lead care managers assigned successfully" : "Lead care managers updated successfully",
          case_load: CaseLoad.make({
            id: c.id,
            patient_id: c.patient_id,
            patient_name: c.patient_name,
            provider_id: c.provider_id,
            provider_name: c.provider_name,
            olcm_user_id: c.olcm_user_id,
            olcm_name: c.olcm_name,
            ilcm_user_id: c.ilcm_user_id,
            ilcm_name: c.ilcm_name,
            created_at: c.created_at,
            updated_at: c.updated_at
          }, true)
        }, true)
      }).pipe(Effect.withSpan(`LeadCareManagers.${via}`, { attributes: { "patient.id": assignment.patient_id } }))

    const bulkAssign = Effect.fn("LeadCareManagers.bulkAssign")(function*(actorId: number, assignments: ReadonlyArray<Assignment>) {
      yield* Effect.annotateCurrentSpan({ "assignments.count": assignments.length })
      const outcomes = yield* transaction(apply(actorId, assignments, "bulk_assign"))
      const results = outcomes.map((o) =>
        o.problems.length === 0
          ? BulkAssignSuccess.make({ patient_id: o.patientId, status: "success" }, true)
          : BulkAssignFailure.make({ patient_id: o.patientId, status: "failed", errors: o.problems }, true))
      const failed = results.filter((r) => r.status === "failed").length
      const succeeded = results.length - failed
      return BulkAssignResponse.make({
        message: `Bulk assignment completed: ${succeeded} succeeded, ${failed} failed`,
        successful_count: succeeded,
        failed_count: failed,
        results
      }, true)
    })

    /** Takes one role off a patient's case load; a role nobody holds is already removed. */
    const remove = Effect.fn("LeadCareManagers.remove")(function*(actorId: number, patientId: number, role: LeadCareManagerRole) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "case_load.role": role })
      const found = yield* transaction(Effect.gen(function*() {
        const patients = yield* caseLoads.lockPatients([patientId])
        if (patients.length === 0) return false
        const [row] = yield* caseLoads.lockHolders([patientId])
        const from = row === undefined ? null : role === "olcm" ? row.olcm_user_id : row.ilcm_user_id
        if (row === undefined || from === null) return true
        const at = yield* now
        yield* caseLoads.clearRole(row.id, role, at)
        yield* recordChanges(actorId, "remove", [{ case_load_id: row.id, patient_id: patientId, role, from_user_id: from, to_user_id: null }], at)
        return true
      }))
      if (!found) return yield* Effect.fail(ecmNotFound("Patient"))
      return LeadCareManagerMessage.make({ message: "Lead care manager removed successfully" }, true)
    })

    const forPatient = Effect.fn("LeadCareManagers.forPatient")(function*(patientId: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const patient = yield* caseLoads.patientName(patientId)
      if (Option.isNone(patient)) return yield* Effect.fail(ecmNotFound("Patient"))
      const found = yield* caseLoads.caseLoadOf(patientId)
      return PatientLeadCareManagersResponse.make({
        patient_id: patient.value.id,
        patient_name: patient.value.name,
        case_load: Option.match(found, {
          onNone: () => null,
          onSome: (c) =>
            PatientCaseLoadManagers.make({
              id: c.id,
              provider_id: c.provider_id,
              provider_name: c.provider_name,
              olcm: assignedOf(c.olcm_user_id, c.olcm_name, c.olcm_email, c.olcm_assigned_at),
              ilcm: assignedOf(c.ilcm_user_id, c.ilcm_name, c.ilcm_email, c.ilcm_assigned_at)
            }, true)
        })
      }, true)
    })

    /**
     * Users who can hold a role (active staff) and users who hold one (whatever their status now,
     * so an admin can find and replace them), with their counts.
     */
    const list = Effect.fn("LeadCareManagers.list")(function*(criteria: LeadCareManagerCriteria, request: PageRequest) {
      const { pagination, rows } = yield* caseLoads.managers(criteria, request)
      yield* Effect.annotateCurrentSpan({ "lead_care_managers.count": rows.length })
      return LeadCareManagerList.make({
        lead_care_managers: rows.map((r) =>
          LeadCareManager.make({
            id: r.id,
            name: `${r.first_name} ${r.last_name}`,
            email: r.email,
            roles: leadCareManagerRoles.filter((role) => (role === "olcm" ? r.olcm : r.ilcm) > 0),
            assigned_patients_count: r.patients,
            olcm_assignments_count: r.olcm,
            ilcm_assignments_count: r.ilcm
          }, true)),
        pagination
      }, true)
    })

    /**
     * Who an inbound SMS or call about the patient goes to: the oLCM and
     * iLCM user ids, null where the role is empty or the patient has no case load.
     */
    const assigneesOf = Effect.fn("LeadCareManagers.assigneesOf")(function*(patientId: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      return yield* caseLoads.holdersOf(patientId)
    })

    return { list, assign, bulkAssign, remove, forPatient, assigneesOf } as const
  }),
  dependencies: [CaseLoadsRepo.Default]
}) {}
