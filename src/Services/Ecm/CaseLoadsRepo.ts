/**
 * The only SQL on `case_loads` and `case_load_changes` (ARCHITECTURE "Persistence"): rows decoded,
 * SQL errors defects. Statements are set-based — a list of values is one bound jsonb parameter read
 * with `jsonb_to_recordset` / `jsonb_array_elements_text` — so a bulk request of 1,000 assignments
 * costs the same handful of statements as one. Recording changes writes their audit entries in the
 * same statement (one round trip), so that statement names `audit_events` too; the locks and
 * look-ups of the patients and users named stay here until those tables have repositories.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { LeadCareManagerRole } from "../../Domain/Ecm/LeadCareManagers.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { likePattern } from "../SqlFilters.js"

const NullText = Schema.NullOr(Schema.String)
const NullId = Schema.NullOr(Schema.Int)
const Ids = Schema.Array(Schema.Int)

/** How a change was made: recorded on each `case_load_changes` row. */
export const ChangeVia = Schema.Literal("assign", "update", "remove", "bulk_assign")
export type ChangeVia = typeof ChangeVia.Type

/** A case load with its patient's, provider's and lead care managers' names. */
export const CaseLoadRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  provider_id: NullId,
  provider_name: NullText,
  olcm_user_id: NullId,
  olcm_name: NullText,
  olcm_email: NullText,
  olcm_assigned_at: Schema.NullOr(Schema.DateFromSelf),
  ilcm_user_id: NullId,
  ilcm_name: NullText,
  ilcm_email: NullText,
  ilcm_assigned_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type CaseLoadRow = typeof CaseLoadRow.Type

/** Who holds each role of a case load now. */
export const HoldersRow = Schema.Struct({ id: Schema.Int, patient_id: Schema.Int, olcm_user_id: NullId, ilcm_user_id: NullId })
export type HoldersRow = typeof HoldersRow.Type

/** What decides whether a user can lead care (src/Domain/Ecm/LeadCareManagers.ts `canLeadCare`). */
export const CandidateRow = Schema.Struct({ id: Schema.Int, role: Schema.String, status: Schema.String, deleted: Schema.Boolean })
export type CandidateRow = typeof CandidateRow.Type

/** One role of one case load going from one user (or nobody) to another (or nobody). */
export const RoleChange = Schema.Struct({
  case_load_id: Schema.Int,
  patient_id: Schema.Int,
  role: LeadCareManagerRole,
  from_user_id: NullId,
  to_user_id: NullId
})
export type RoleChange = typeof RoleChange.Type

/** A patient's new holders; null keeps a role as it is. */
export const RoleUpdate = Schema.Struct({ patient_id: Schema.Int, olcm: NullId, ilcm: NullId })
export type RoleUpdate = typeof RoleUpdate.Type

const ChangeRecord = Schema.Struct({
  actorId: Schema.Int,
  via: ChangeVia,
  changes: Schema.Array(RoleChange),
  at: Schema.DateFromSelf,
  traceId: NullText
})
export type ChangeRecord = typeof ChangeRecord.Type

/** Which lead care managers a list shows. */
export const ManagerCriteria = Schema.Struct({ search: Schema.optional(Schema.String), role: Schema.optional(LeadCareManagerRole) })
export type ManagerCriteria = typeof ManagerCriteria.Type

export const ManagerRow = Schema.Struct({
  id: Schema.Int,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  patients: Schema.Int,
  olcm: Schema.Int,
  ilcm: Schema.Int
})
export type ManagerRow = typeof ManagerRow.Type

/** A list of values as one bound parameter: read with `jsonb_to_recordset` / `jsonb_array_elements_text`. */
const json = (value: unknown): string => JSON.stringify(value)

export class CaseLoadsRepo extends Effect.Service<CaseLoadsRepo>()("app/EcmCaseLoadsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const lockPatients = SqlSchema.findAll({
      Request: Ids,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (ids) =>
        sql`SELECT id FROM patients
          WHERE id IN (SELECT value::int FROM jsonb_array_elements_text(${json(ids)}::jsonb))
          ORDER BY id FOR KEY SHARE`
    })

    const lockUsers = SqlSchema.findAll({
      Request: Ids,
      Result: CandidateRow,
      execute: (ids) =>
        sql`SELECT id, role, status, deleted_at IS NOT NULL AS deleted FROM users
          WHERE id IN (SELECT value::int FROM jsonb_array_elements_text(${json(ids)}::jsonb))
          ORDER BY id FOR SHARE`
    })

    const ensure = SqlSchema.void({
      Request: Schema.Struct({ patientIds: Ids, at: Schema.DateFromSelf }),
      execute: ({ at, patientIds }) =>
        sql`INSERT INTO case_loads (patient_id, created_at, updated_at)
          SELECT value::int, ${at}, ${at} FROM jsonb_array_elements_text(${json(patientIds)}::jsonb) ORDER BY 1
          ON CONFLICT (patient_id) DO NOTHING`
    })

    const lockHolders = SqlSchema.findAll({
      Request: Ids,
      Result: HoldersRow,
      execute: (patientIds) =>
        sql`SELECT id, patient_id, olcm_user_id, ilcm_user_id FROM case_loads
          WHERE patient_id IN (SELECT value::int FROM jsonb_array_elements_text(${json(patientIds)}::jsonb))
          ORDER BY patient_id FOR UPDATE`
    })

    const assign = SqlSchema.void({
      Request: Schema.Struct({ updates: Schema.Array(RoleUpdate), at: Schema.DateFromSelf }),
      execute: ({ at, updates }) =>
        sql`UPDATE case_loads c SET
            olcm_user_id = coalesce(v.olcm, c.olcm_user_id),
            olcm_assigned_at = CASE WHEN v.olcm IS DISTINCT FROM c.olcm_user_id AND v.olcm IS NOT NULL THEN ${at} ELSE c.olcm_assigned_at END,
            ilcm_user_id = coalesce(v.ilcm, c.ilcm_user_id),
            ilcm_assigned_at = CASE WHEN v.ilcm IS DISTINCT FROM c.ilcm_user_id AND v.ilcm IS NOT NULL THEN ${at} ELSE c.ilcm_assigned_at END,
            updated_at = ${at}
          FROM jsonb_to_recordset(${json(updates)}::jsonb) AS v(patient_id int, olcm int, ilcm int)
          WHERE c.patient_id = v.patient_id`
    })

    const clearRole = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, role: LeadCareManagerRole, at: Schema.DateFromSelf }),
      execute: ({ at, id, role }) =>
        role === "olcm"
          ? sql`UPDATE case_loads SET olcm_user_id = NULL, olcm_assigned_at = NULL, updated_at = ${at} WHERE id = ${id}`
          : sql`UPDATE case_loads SET ilcm_user_id = NULL, ilcm_assigned_at = NULL, updated_at = ${at} WHERE id = ${id}`
    })

    /** The change history and the audit trail of the changes, in one statement. */
    const recordChanges = SqlSchema.void({
      Request: ChangeRecord,
      execute: ({ actorId, at, changes, traceId, via }) =>
        sql`WITH changed AS (
            INSERT INTO case_load_changes (case_load_id, patient_id, role, from_user_id, to_user_id, actor_id, via, created_at)
            SELECT v.case_load_id, v.patient_id, v.role, v.from_user_id, v.to_user_id, ${actorId}, ${via}, ${at}
            FROM jsonb_to_recordset(${json(changes)}::jsonb)
              AS v(case_load_id int, patient_id int, role text, from_user_id int, to_user_id int)
            RETURNING case_load_id, role, to_user_id)
          INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
          SELECT ${actorId}, 'case_load.' || role || CASE WHEN to_user_id IS NULL THEN '.remove' ELSE '.assign' END,
            'case_load', case_load_id, ${traceId}, ${at}
          FROM changed`
    })

    const caseLoadOf = SqlSchema.findOne({
      Request: Schema.Int,
      Result: CaseLoadRow,
      execute: (patientId) =>
        sql`SELECT c.id, c.patient_id, p.first_name || ' ' || p.last_name AS patient_name,
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
          WHERE c.patient_id = ${patientId}`
    })

    const patientName = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int, name: Schema.String }),
      execute: (patientId) => sql`SELECT id, first_name || ' ' || last_name AS name FROM patients WHERE id = ${patientId}`
    })

    const holdersOf = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ olcm_user_id: NullId, ilcm_user_id: NullId }),
      execute: (patientId) => sql`SELECT olcm_user_id, ilcm_user_id FROM case_loads WHERE patient_id = ${patientId}`
    })

    /**
     * Users who can hold a role (active staff) and users who hold one (whatever their status now,
     * so an admin can find and replace them), with their counts.
     */
    const managersFrom = sql`users u CROSS JOIN LATERAL (
        SELECT count(*)::int AS patients,
          count(*) FILTER (WHERE c.olcm_user_id = u.id)::int AS olcm,
          count(*) FILTER (WHERE c.ilcm_user_id = u.id)::int AS ilcm
        FROM case_loads c WHERE c.olcm_user_id = u.id OR c.ilcm_user_id = u.id) n`
    const managersFilters = (criteria: ManagerCriteria): Array<ListFilter> => {
      const search = criteria.search?.trim() ?? ""
      return [
        sql`((u.role <> 'parent' AND u.status = 'active' AND u.deleted_at IS NULL) OR n.patients > 0)`,
        search !== "" && sql`(u.first_name || ' ' || u.last_name) ILIKE ${likePattern(search)} ESCAPE '\\'`,
        criteria.role === "olcm" && sql`n.olcm > 0`,
        criteria.role === "ilcm" && sql`n.ilcm > 0`
      ]
    }
    // One fixed order, ascending: last name, then first name, any case.
    const byName = { name: sql`lower(u.last_name), lower(u.first_name)` }

    return {
      /** Locks the patients of `ids` that exist against deletion (in id order); their ids. */
      lockPatients: (ids: ReadonlyArray<number>) => Effect.map(orDefect(lockPatients(ids)), (rows) => rows.map((r) => r.id)),
      /** Locks the users of `ids` that exist against change (in id order); what decides whether each can lead care. */
      lockUsers: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.succeed([]) : orDefect(lockUsers(ids)),
      /** Gives each patient of `patientIds` a case load if it has none (in id order). */
      ensure: (patientIds: ReadonlyArray<number>, at: Date) => orDefect(ensure({ patientIds, at })),
      /** The patients' case loads as they are now, locked for update (in patient id order). */
      lockHolders: (patientIds: ReadonlyArray<number>) => orDefect(lockHolders(patientIds)),
      /** Sets the roles of `updates`; a role assigned to someone new records when. */
      assign: (updates: ReadonlyArray<RoleUpdate>, at: Date) => orDefect(assign({ updates, at })),
      /** Takes `role` off the case load. */
      clearRole: (id: number, role: LeadCareManagerRole, at: Date) => orDefect(clearRole({ id, role, at })),
      /** Keeps `changes` in the change history and the audit trail. */
      recordChanges: (record: ChangeRecord) => record.changes.length === 0 ? Effect.void : orDefect(recordChanges(record)),
      /** The patient's case load with its names. */
      caseLoadOf: (patientId: number) => orDefect(caseLoadOf(patientId)),
      /** The patient's id and name, if the patient exists. */
      patientName: (patientId: number) => orDefect(patientName(patientId)),
      /** The oLCM and iLCM user ids of the patient's case load; both null when it has none. */
      holdersOf: (patientId: number) =>
        Effect.map(orDefect(holdersOf(patientId)), (row) => ({
          olcm: Option.match(row, { onNone: () => null, onSome: (r) => r.olcm_user_id }),
          ilcm: Option.match(row, { onNone: () => null, onSome: (r) => r.ilcm_user_id })
        })),
      /** A page of lead care managers, by last name then first name, with the count of all that match. */
      managers: (criteria: ManagerCriteria, request: PageRequest) =>
        listPage({
          select: sql`u.id, u.first_name, u.last_name, u.email, n.patients, n.olcm, n.ilcm`,
          from: managersFrom,
          row: ManagerRow,
          filters: managersFilters(criteria),
          sort: { columns: byName, by: "name", dir: "ASC", id: sql`u.id` }
        }, request)
    } as const
  })
}) {}
