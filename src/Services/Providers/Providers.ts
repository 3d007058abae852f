/**
 * Admin providers and supervisors (general §4.9, §4.15): lists, one profile, and updates with the
 * supervision rules. Profiles of deleted users are hidden (404), like the users themselves.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { invalid, notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { ProviderList, type ProviderSortColumn, type UpdateProviderRequest } from "../../Api/Providers/Providers.js"
import { SupervisorList } from "../../Api/Providers/Supervisors.js"
import type { ProviderId, UserId } from "../../Domain/Ids.js"
import { isProfileRole, type ProviderRole, Supervisee, Supervisor } from "../../Domain/Providers/Provider.js"
import { AuditLog } from "../AuditLog.js"
import { likePattern } from "../SqlSearch.js"
import { blankToNull, providerColumns, type ProviderRow, toProvider } from "./ProvidersRepo.js"
import { isUniqueViolation } from "../SqlErrors.js"

export const providerMessages = {
  supervisorMissing: "must exist",
  supervisorInactive: "must be an active supervisor",
  supervisorSelf: "can't be the provider themself",
  supervisorCycle: "would create a supervision cycle",
  supervisorBlank: "can't be blank",
  supervisorWithoutFlag: "must be blank when has_supervisor is false",
  licenseBlank: "can't be blank",
  npiTaken: "has already been taken",
  activeWithoutRole: "can't be true while the user's role is not provider or supervisor"
} as const

/**
 * Serialises the transactions that give a provider a supervisor. A cycle is a property of the
 * whole chain, not of one row: two concurrent updates (A's supervisor := B, B's supervisor := A)
 * each see an acyclic graph and together make a cycle. Row locks on the chain would need the
 * chains locked in one order (deadlocks and retries otherwise), SERIALIZABLE would need retries
 * of whole requests; supervisor assignments are rare admin edits, so one transaction-scoped
 * advisory lock makes them take turns, and each one's recursive check then reads every earlier
 * assignment committed (READ COMMITTED takes a new snapshot per statement, after the lock).
 * Removing a supervisor and creating a profile (no one supervised by it yet) cannot close a
 * cycle, so they do not take it.
 */
const supervisionLockKey = 0x5355_5056

export interface ProviderCriteria {
  readonly search?: string | null | undefined
  readonly sortBy?: ProviderSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
}

export interface SupervisorCriteria {
  readonly active?: boolean | undefined
  readonly specialty?: string | undefined
}

type Changes = UpdateProviderRequest["provider"]

export class Providers extends Effect.Service<Providers>()("app/Providers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const columns = sql.literal(providerColumns)
    const live = sql`u.deleted_at IS NULL`

    const sortColumns: Record<ProviderSortColumn, Statement.Fragment> = {
      id: sql`p.id`,
      first_name: sql`lower(u.first_name)`,
      last_name: sql`lower(u.last_name)`,
      email: sql`lower(u.email)`,
      specialty: sql`p.specialty`,
      license_number: sql`p.license_number`,
      npi: sql`p.npi`,
      active: sql`p.active`,
      created_at: sql`p.created_at`,
      updated_at: sql`p.updated_at`
    }
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const

    const orderBy = (criteria: ProviderCriteria) => {
      const dir = directions[criteria.sortDir ?? "ASC"]
      return criteria.sortBy === undefined
        ? sql`ORDER BY lower(u.last_name) ${dir}, lower(u.first_name) ${dir}, p.id ${dir}`
        : sql`ORDER BY ${sortColumns[criteria.sortBy]} ${dir} NULLS LAST, p.id ${dir}`
    }

    const list = (criteria: ProviderCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [live]
        const search = blankToNull(criteria.search)
        if (search !== null) {
          const pattern = likePattern(search)
          clauses.push(sql`(u.email ILIKE ${pattern} ESCAPE '\\' OR u.first_name ILIKE ${pattern} ESCAPE '\\'
            OR u.last_name ILIKE ${pattern} ESCAPE '\\' OR (u.first_name || ' ' || u.last_name) ILIKE ${pattern} ESCAPE '\\'
            OR p.specialty ILIKE ${pattern} ESCAPE '\\' OR p.license_number ILIKE ${pattern} ESCAPE '\\'
            OR p.npi ILIKE ${pattern} ESCAPE '\\')`)
        }
        const where = sql.and(clauses)
        const rows = yield* sql<ProviderRow>`SELECT ${columns} FROM providers p JOIN users u ON u.id = p.user_id
          WHERE ${where} ${orderBy(criteria)} LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count
          FROM providers p JOIN users u ON u.id = p.user_id WHERE ${where}`
        const total = counted?.count ?? 0
        yield* Effect.annotateCurrentSpan({ "providers.count": rows.length, "providers.total_count": total })
        return ProviderList.make({ providers: rows.map(toProvider), pagination: paginationOf(request, total) })
      }).pipe(Effect.orDie, Effect.withSpan("Providers.list"))

    const find = (id: number, lock: boolean) =>
      sql<ProviderRow>`SELECT ${columns} FROM providers p JOIN users u ON u.id = p.user_id
        WHERE p.id = ${id} AND ${live} ${lock ? sql`FOR UPDATE OF p` : sql``}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Provider")) : Effect.succeed(rows[0]))
      )

    const show = (id: number) =>
      Effect.map(find(id, false), toProvider).pipe(Effect.withSpan("Providers.show", { attributes: { "provider.id": id } }))

    /**
     * What is wrong with `supervisorId` as the supervisor of `providerId`, if anything. Run under
     * the supervision lock; the supervisor's row is share-locked so its roles and active flag
     * cannot change before this transaction commits.
     */
    const supervisorProblem = (providerId: number, supervisorId: number) =>
      Effect.gen(function*() {
        if (supervisorId === providerId) return providerMessages.supervisorSelf
        const [supervisor] = yield* sql<{ active: boolean; supervises: boolean }>`
          SELECT p.active, 'supervisor' = ANY(p.roles) AS supervises FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.id = ${supervisorId} AND ${live} FOR SHARE OF p`
        if (supervisor === undefined || !supervisor.supervises) return providerMessages.supervisorMissing
        if (!supervisor.active) return providerMessages.supervisorInactive
        // Walk up from the new supervisor: meeting the provider means the new link closes a cycle.
        const cycle = yield* sql`WITH RECURSIVE chain (id) AS (
            SELECT ${supervisorId}::integer
            UNION
            SELECT p.supervisor_id FROM providers p JOIN chain c ON p.id = c.id WHERE p.supervisor_id IS NOT NULL
          ) SELECT 1 FROM chain WHERE id = ${providerId}`
        return cycle.length > 0 ? providerMessages.supervisorCycle : undefined
      })

    const update = (actorId: number, id: number, changes: Changes) =>
      Effect.gen(function*() {
        if (changes.has_supervisor === false && changes.supervisor_id !== undefined && changes.supervisor_id !== null) {
          return yield* Effect.fail(invalid({ supervisor_id: [providerMessages.supervisorWithoutFlag] }))
        }
        const assigns = changes.supervisor_id !== undefined && changes.supervisor_id !== null
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          if (assigns) yield* sql`SELECT pg_advisory_xact_lock(${supervisionLockKey})`
          const current = yield* find(id, true)
          const errors: Record<string, Array<string>> = {}
          const supervisorId = changes.supervisor_id !== undefined
            ? changes.supervisor_id
            : changes.has_supervisor === false ? null : current.supervisor_id
          if (changes.has_supervisor === true && supervisorId === null) errors.supervisor_id = [providerMessages.supervisorBlank]
          // An unchanged supervisor is not checked again (it may have become inactive since).
          if (supervisorId !== null && supervisorId !== current.supervisor_id) {
            const problem = yield* supervisorProblem(id, supervisorId)
            if (problem !== undefined) errors.supervisor_id = [problem]
          }
          const license = changes.license_number === undefined ? current.license_number : blankToNull(changes.license_number)
          if (current.clinical && license === null) errors.license_number = [providerMessages.licenseBlank]
          const active = changes.active ?? current.active
          if (active && !current.active && !isProfileRole(current.user_role)) errors.active = [providerMessages.activeWithoutRole]
          if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
          const roles: ReadonlyArray<ProviderRole> = changes.roles === undefined
            ? current.roles
            : [...new Set(changes.roles as ReadonlyArray<ProviderRole>)]
          const [updated] = yield* sql<{ id: number }>`UPDATE providers SET
              roles = ${roles as Array<string>}::text[],
              specialty = ${changes.specialty === undefined ? current.specialty : blankToNull(changes.specialty)},
              license_number = ${license},
              npi = ${changes.npi === undefined ? current.npi : blankToNull(changes.npi)},
              department = ${changes.department === undefined ? current.department : blankToNull(changes.department)},
              supervisor_id = ${supervisorId},
              active = ${active},
              updated_at = now()
            WHERE id = ${id} RETURNING id`
          const record = (action: string) => audit.record({ actorId, action, targetType: "provider", targetId: updated!.id })
          yield* record("provider.update")
          if (supervisorId !== current.supervisor_id) yield* record("provider.supervisor_change")
          if (active !== current.active) yield* record(active ? "provider.reactivate" : "provider.deactivate")
          return yield* find(id, false)
        })).pipe(
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "providers_npi_key") ? Effect.fail(invalid({ npi: [providerMessages.npiTaken] })) : Effect.die(error))
        )
        return toProvider(row)
      }).pipe(Effect.withSpan("Providers.update", { attributes: { "provider.id": id, "actor.id": actorId } }))

    /** Providers holding the supervisor role, with their supervisees, by name. */
    const supervisors = (criteria: SupervisorCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [live, sql`p.roles @> ARRAY['supervisor']::text[]`]
        if (criteria.active !== undefined) clauses.push(sql`p.active = ${criteria.active}`)
        if (criteria.specialty !== undefined) clauses.push(sql`p.specialty = ${criteria.specialty.trim()}`)
        const where = sql.and(clauses)
        const rows = yield* sql<ProviderRow>`SELECT ${columns} FROM providers p JOIN users u ON u.id = p.user_id
          WHERE ${where} ORDER BY lower(u.last_name), lower(u.first_name), p.id
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count
          FROM providers p JOIN users u ON u.id = p.user_id WHERE ${where}`
        const ids = rows.map((r) => r.id)
        const supervisees = ids.length === 0 ? [] : yield* sql<{ id: number; supervisor_id: number; first_name: string; last_name: string }>`
          SELECT p.id, p.supervisor_id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.supervisor_id IN ${sql.in(ids)} AND ${live}
          ORDER BY lower(u.last_name), lower(u.first_name), p.id`
        const total = counted?.count ?? 0
        yield* Effect.annotateCurrentSpan({ "supervisors.count": rows.length, "supervisors.total_count": total })
        return SupervisorList.make({
          supervisors: rows.map((row) => Supervisor.make({
            id: row.id as ProviderId,
            user_id: row.user_id as UserId,
            first_name: row.first_name,
            last_name: row.last_name,
            email: row.email,
            specialty: row.specialty,
            license_number: row.license_number,
            active: row.active,
            supervisees: supervisees.filter((s) => s.supervisor_id === row.id).map((s) =>
              Supervisee.make({ id: s.id as ProviderId, first_name: s.first_name, last_name: s.last_name }, true)),
            created_at: row.created_at,
            updated_at: row.updated_at
          }, true)),
          pagination: paginationOf(request, total)
        })
      }).pipe(Effect.orDie, Effect.withSpan("Providers.supervisors"))

    return { list, show, update, supervisors } as const
  }),
  dependencies: [AuditLog.Default]
}) {}
