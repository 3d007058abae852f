/**
 * Lead care managers (ECM §4.8): the oLCM and iLCM of each patient's case load (`case_loads`,
 * one row per patient). Assign, update and bulk assign share one set-based path (`apply`), so a
 * request of 1,000 assignments costs the same handful of statements as a request of one:
 * look up and lock every patient and user named, judge each assignment on its own
 * (src/Domain/Ecm/LeadCareManagers.ts), then write the accepted ones with one statement per step.
 * Every role change is kept in `case_load_changes` (from whom to whom, by whom, through which
 * operation) and audited.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
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
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
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
import { likePattern } from "../SqlSearch.js"

export const leadCareManagersPageSize = 25

/** How a change was made: recorded on each `case_load_changes` row. */
export type ChangeVia = "assign" | "update" | "remove" | "bulk_assign"

export interface LeadCareManagerCriteria {
  readonly search?: string | undefined
  readonly role?: LeadCareManagerRole | undefined
}

/** One role of one case load going from one user (or nobody) to another (or nobody). */
interface RoleChange {
  readonly case_load_id: number
  readonly patient_id: number
  readonly role: LeadCareManagerRole
  readonly from_user_id: number | null
  readonly to_user_id: number | null
}

/** The outcome of one assignment of a request, in the order sent. */
type Outcome = { readonly patientId: number; readonly problems: ReadonlyArray<string> }

interface CaseLoadRow {
  readonly id: number
  readonly patient_id: number
  readonly patient_name: string
  readonly provider_id: number | null
  readonly provider_name: string | null
  readonly olcm_user_id: number | null
  readonly olcm_name: string | null
  readonly olcm_email: string | null
  readonly olcm_assigned_at: Date | null
  readonly ilcm_user_id: number | null
  readonly ilcm_name: string | null
  readonly ilcm_email: string | null
  readonly ilcm_assigned_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}


/** A list of values as one bound parameter: read with `jsonb_to_recordset` / `jsonb_array_elements_text`. */
const json = (value: unknown): string => JSON.stringify(value)

const assignedOf = (userId: number | null, name: string | null, email: string | null, at: Date | null) =>
  userId === null ? null : AssignedLeadCareManager.make({ user_id: userId, name: name ?? "", email: email ?? "", assigned_at: at }, true)

export class LeadCareManagers extends Effect.Service<LeadCareManagers>()("app/LeadCareManagers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const caseLoadSelect = (where: Statement.Fragment) =>
      sql<CaseLoadRow>`SELECT c.id, c.patient_id, p.first_name || ' ' || p.last_name AS patient_name,
          c.provider_id, coalesce(c.provider_name, pu.first_name || ' ' || pu.last_name) AS provider_name,
          c.olcm_user_id, o.first_name || ' ' || o.last_name AS olcm_name, o.email AS olcm_email, c.olcm_assigned_at,
          c.ilcm_user_id, i.first_name || ' ' || i.last_name AS ilcm_name, i.email AS ilcm_email, c.ilcm_assigned_at,
          c.created_at, c.updated_at
        FROM case_loads c
        JOIN patients p ON p.id = c.patient_id
        LEFT JOIN providers pr ON pr.id = c.provider_id
        LEFT JOIN users pu ON pu.id = pr.user_id
        LEFT JOIN users o ON o.id = c.olcm_user_id
        LEFT JOIN users i ON i.id = c.ilcm_user_id
        WHERE ${where}`

    /** The audit trail and the change history of `changes`, in one statement. */
    const recordChanges = (actorId: number, via: ChangeVia, changes: ReadonlyArray<RoleChange>, now: Date) =>
      Effect.gen(function*() {
        if (changes.length === 0) return
        const traceId = Option.getOrNull(Option.map(yield* Effect.option(Effect.currentSpan), (s) => s.traceId))
        yield* sql`WITH changed AS (
            INSERT INTO case_load_changes (case_load_id, patient_id, role, from_user_id, to_user_id, actor_id, via, created_at)
            SELECT v.case_load_id, v.patient_id, v.role, v.from_user_id, v.to_user_id, ${actorId}, ${via}, ${now}
            FROM jsonb_to_recordset(${json(changes)}::jsonb)
              AS v(case_load_id int, patient_id int, role text, from_user_id int, to_user_id int)
            RETURNING case_load_id, role, to_user_id)
          INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
          SELECT ${actorId}, 'case_load.' || role || CASE WHEN to_user_id IS NULL THEN '.remove' ELSE '.assign' END,
            'case_load', case_load_id, ${traceId}, ${now}
          FROM changed`
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
        const patients = yield* sql<{ id: number }>`SELECT id FROM patients
          WHERE id IN (SELECT value::int FROM jsonb_array_elements_text(${json(patientIds)}::jsonb))
          ORDER BY id FOR KEY SHARE`
        const users = userIds.length === 0 ? [] : yield* sql<{ id: number; role: string; status: string; deleted: boolean }>`
          SELECT id, role, status, deleted_at IS NOT NULL AS deleted FROM users
          WHERE id IN (SELECT value::int FROM jsonb_array_elements_text(${json(userIds)}::jsonb))
          ORDER BY id FOR SHARE`
        const existing = new Set(patients.map((p) => p.id))
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

        const now = new Date(yield* Clock.currentTimeMillis)
        const acceptedIds = accepted.map((a) => a.patient_id).sort((a, b) => a - b)
        // Every accepted patient gets a case load (in id order); then the rows are locked and read
        // as they are now, so the change history names who held each role just before.
        yield* sql`INSERT INTO case_loads (patient_id, created_at, updated_at)
          SELECT value::int, ${now}, ${now} FROM jsonb_array_elements_text(${json(acceptedIds)}::jsonb) ORDER BY 1
          ON CONFLICT (patient_id) DO NOTHING`
        const current = yield* sql<{ id: number; patient_id: number; olcm_user_id: number | null; ilcm_user_id: number | null }>`
          SELECT id, patient_id, olcm_user_id, ilcm_user_id FROM case_loads
          WHERE patient_id IN (SELECT value::int FROM jsonb_array_elements_text(${json(acceptedIds)}::jsonb))
          ORDER BY patient_id FOR UPDATE`
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
          yield* sql`UPDATE case_loads c SET
              olcm_user_id = coalesce(v.olcm, c.olcm_user_id),
              olcm_assigned_at = CASE WHEN v.olcm IS DISTINCT FROM c.olcm_user_id AND v.olcm IS NOT NULL THEN ${now} ELSE c.olcm_assigned_at END,
              ilcm_user_id = coalesce(v.ilcm, c.ilcm_user_id),
              ilcm_assigned_at = CASE WHEN v.ilcm IS DISTINCT FROM c.ilcm_user_id AND v.ilcm IS NOT NULL THEN ${now} ELSE c.ilcm_assigned_at END,
              updated_at = ${now}
            FROM jsonb_to_recordset(${json(updates)}::jsonb) AS v(patient_id int, olcm int, ilcm int)
            WHERE c.patient_id = v.patient_id`
          yield* recordChanges(actorId, via, changes, now)
        }
        yield* Effect.annotateCurrentSpan({ "assignments.count": assignments.length, "assignments.accepted": accepted.length, "case_load.changes": changes.length })
        return outcomes
      })

    const caseLoadOf = (patientId: number) =>
      Effect.map(caseLoadSelect(sql`c.patient_id = ${patientId}`), ([row]) => row)

    /** Assign (POST) and update (PUT): one assignment, 404 for an unknown patient, 422 for the rest. */
    const assign = (actorId: number, assignment: Assignment, via: "assign" | "update") =>
      Effect.gen(function*() {
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const [outcome] = yield* apply(actorId, [assignment], via)
          if (outcome!.problems.includes(messages.patientNotFound)) return { problem: ecmNotFound("Patient") } as const
          if (outcome!.problems.length > 0) return { problem: ecmInvalid(outcome!.problems) } as const
          return { row: (yield* caseLoadOf(assignment.patient_id))! } as const
        })).pipe(Effect.orDie)
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

    const bulkAssign = (actorId: number, assignments: ReadonlyArray<Assignment>) =>
      Effect.gen(function*() {
        const outcomes = yield* sql.withTransaction(apply(actorId, assignments, "bulk_assign")).pipe(Effect.orDie)
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
      }).pipe(Effect.withSpan("LeadCareManagers.bulkAssign", { attributes: { "assignments.count": assignments.length } }))

    /** Takes one role off a patient's case load; a role nobody holds is already removed. */
    const remove = (actorId: number, patientId: number, role: LeadCareManagerRole) =>
      Effect.gen(function*() {
        const found = yield* sql.withTransaction(Effect.gen(function*() {
          const [patient] = yield* sql<{ id: number }>`SELECT id FROM patients WHERE id = ${patientId} FOR KEY SHARE`
          if (patient === undefined) return false
          const [row] = yield* sql<{ id: number; olcm_user_id: number | null; ilcm_user_id: number | null }>`
            SELECT id, olcm_user_id, ilcm_user_id FROM case_loads WHERE patient_id = ${patientId} FOR UPDATE`
          const from = row === undefined ? null : role === "olcm" ? row.olcm_user_id : row.ilcm_user_id
          if (row === undefined || from === null) return true
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* role === "olcm"
            ? sql`UPDATE case_loads SET olcm_user_id = NULL, olcm_assigned_at = NULL, updated_at = ${now} WHERE id = ${row.id}`
            : sql`UPDATE case_loads SET ilcm_user_id = NULL, ilcm_assigned_at = NULL, updated_at = ${now} WHERE id = ${row.id}`
          yield* recordChanges(actorId, "remove", [{ case_load_id: row.id, patient_id: patientId, role, from_user_id: from, to_user_id: null }], now)
          return true
        })).pipe(Effect.orDie)
        if (!found) return yield* Effect.fail(ecmNotFound("Patient"))
        return LeadCareManagerMessage.make({ message: "Lead care manager removed successfully" }, true)
      }).pipe(Effect.withSpan("LeadCareManagers.remove", { attributes: { "patient.id": patientId, "case_load.role": role } }))

    const forPatient = (patientId: number) =>
      Effect.gen(function*() {
        const [patient] = yield* sql<{ id: number; name: string }>`
          SELECT id, first_name || ' ' || last_name AS name FROM patients WHERE id = ${patientId}`.pipe(Effect.orDie)
        if (patient === undefined) return yield* Effect.fail(ecmNotFound("Patient"))
        const c = yield* caseLoadOf(patientId).pipe(Effect.orDie)
        return PatientLeadCareManagersResponse.make({
          patient_id: patient.id,
          patient_name: patient.name,
          case_load: c === undefined ? null : PatientCaseLoadManagers.make({
            id: c.id,
            provider_id: c.provider_id,
            provider_name: c.provider_name,
            olcm: assignedOf(c.olcm_user_id, c.olcm_name, c.olcm_email, c.olcm_assigned_at),
            ilcm: assignedOf(c.ilcm_user_id, c.ilcm_name, c.ilcm_email, c.ilcm_assigned_at)
          }, true)
        }, true)
      }).pipe(Effect.withSpan("LeadCareManagers.forPatient", { attributes: { "patient.id": patientId } }))

    /**
     * Users who can hold a role (active staff) and users who hold one (whatever their status now,
     * so an admin can find and replace them), with their counts.
     */
    const list = (criteria: LeadCareManagerCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [
          sql`((u.role <> 'parent' AND u.status = 'active' AND u.deleted_at IS NULL) OR n.patients > 0)`
        ]
        const search = criteria.search?.trim() ?? ""
        if (search !== "") clauses.push(sql`(u.first_name || ' ' || u.last_name) ILIKE ${likePattern(search)} ESCAPE '\\'`)
        if (criteria.role === "olcm") clauses.push(sql`n.olcm > 0`)
        if (criteria.role === "ilcm") clauses.push(sql`n.ilcm > 0`)
        const from = sql`users u CROSS JOIN LATERAL (
            SELECT count(*)::int AS patients,
              count(*) FILTER (WHERE c.olcm_user_id = u.id)::int AS olcm,
              count(*) FILTER (WHERE c.ilcm_user_id = u.id)::int AS ilcm
            FROM case_loads c WHERE c.olcm_user_id = u.id OR c.ilcm_user_id = u.id) n`
        const where = sql.and(clauses)
        const rows = yield* sql<{ id: number; first_name: string; last_name: string; email: string; patients: number; olcm: number; ilcm: number }>`
          SELECT u.id, u.first_name, u.last_name, u.email, n.patients, n.olcm, n.ilcm FROM ${from} WHERE ${where}
          ORDER BY lower(u.last_name), lower(u.first_name), u.id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${from} WHERE ${where}`
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
          pagination: paginationOf(request, counted?.count ?? 0)
        }, true)
      }).pipe(Effect.orDie, Effect.withSpan("LeadCareManagers.list"))

    /**
     * Who an inbound SMS or call about the patient goes to (communications issue): the oLCM and
     * iLCM user ids, null where the role is empty or the patient has no case load.
     */
    const assigneesOf = (patientId: number) =>
      sql<{ olcm_user_id: number | null; ilcm_user_id: number | null }>`
        SELECT olcm_user_id, ilcm_user_id FROM case_loads WHERE patient_id = ${patientId}`.pipe(
        Effect.orDie,
        Effect.map(([row]) => ({ olcm: row?.olcm_user_id ?? null, ilcm: row?.ilcm_user_id ?? null })),
        Effect.withSpan("LeadCareManagers.assigneesOf", { attributes: { "patient.id": patientId } })
      )

    return { list, assign, bulkAssign, remove, forPatient, assigneesOf } as const
  })
}) {}
