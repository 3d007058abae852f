/**
 * Admin providers and supervisors (general §4.9, §4.15): lists, one profile, and updates with the
 * supervision rules. Profiles of deleted users are hidden (404), like the users themselves.
 * `ProvidersRepo` holds the SQL.
 */
import { Effect, Option } from "effect"
import { invalid, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { ProviderList, type UpdateProviderRequest } from "../../Api/Providers/Providers.js"
import { SupervisorList } from "../../Api/Providers/Supervisors.js"
import { isProfileRole, type ProviderRole, Supervisee, Supervisor } from "../../Domain/Providers/Provider.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { type ProviderCriteria, ProvidersRepo, type SupervisorCriteria, toProvider } from "./ProvidersRepo.js"

export type { ProviderCriteria, SupervisorCriteria } from "./ProvidersRepo.js"

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

type Changes = UpdateProviderRequest["provider"]

export class Providers extends Effect.Service<Providers>()("app/Providers", {
  effect: Effect.gen(function*() {
    const providers = yield* ProvidersRepo
    const audit = yield* AuditLog
    const transaction = yield* makeTransaction

    const list = Effect.fn("Providers.list")(function*(criteria: ProviderCriteria, request: PageRequest) {
      const { pagination, rows } = yield* providers.list(criteria, request)
      yield* Effect.annotateCurrentSpan({ "providers.count": rows.length, "providers.total_count": pagination.total_count })
      return ProviderList.make({ providers: rows.map(toProvider), pagination })
    })

    const find = (id: number, lock: boolean) =>
      Effect.flatMap(providers.findById(id, lock), Option.match({
        onNone: () => Effect.fail(notFound("Provider")),
        onSome: Effect.succeed
      }))

    const show = Effect.fn("Providers.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "provider.id": id })
      return toProvider(yield* find(id, false))
    })

    /**
     * What is wrong with `supervisorId` as the supervisor of `providerId`, if anything. Run under
     * the supervision lock; the supervisor's row is share-locked so its roles and active flag
     * cannot change before this transaction commits.
     */
    const supervisorProblem = (providerId: number, supervisorId: number) =>
      Effect.gen(function*() {
        if (supervisorId === providerId) return providerMessages.supervisorSelf
        const supervisor = Option.getOrUndefined(yield* providers.lockSupervisor(supervisorId))
        if (supervisor === undefined || !supervisor.supervises) return providerMessages.supervisorMissing
        if (!supervisor.active) return providerMessages.supervisorInactive
        // Walk up from the new supervisor: meeting the provider means the new link closes a cycle.
        return (yield* providers.supervises(providerId, supervisorId)) ? providerMessages.supervisorCycle : undefined
      })

    const update = Effect.fn("Providers.update")(function*(actorId: number, id: number, changes: Changes) {
      yield* Effect.annotateCurrentSpan({ "provider.id": id, "actor.id": actorId })
      if (changes.has_supervisor === false && changes.supervisor_id !== undefined && changes.supervisor_id !== null) {
        return yield* Effect.fail(invalid({ supervisor_id: [providerMessages.supervisorWithoutFlag] }))
      }
      const assigns = changes.supervisor_id !== undefined && changes.supervisor_id !== null
      const row = yield* transaction(Effect.gen(function*() {
        if (assigns) yield* providers.advisoryLock(supervisionLockKey)
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
        yield* providers.update(id, {
          roles,
          specialty: changes.specialty === undefined ? current.specialty : blankToNull(changes.specialty),
          license_number: license,
          npi: changes.npi === undefined ? current.npi : blankToNull(changes.npi),
          department: changes.department === undefined ? current.department : blankToNull(changes.department),
          supervisor_id: supervisorId,
          active
        })
        const record = (action: string) => audit.record({ actorId, action, targetType: "provider", targetId: id })
        yield* record("provider.update")
        if (supervisorId !== current.supervisor_id) yield* record("provider.supervisor_change")
        if (active !== current.active) yield* record(active ? "provider.reactivate" : "provider.deactivate")
        return yield* find(id, false)
      }))
      return toProvider(row)
    })

    /** Providers holding the supervisor role, with their supervisees, by name. */
    const supervisors = Effect.fn("Providers.supervisors")(function*(criteria: SupervisorCriteria, request: PageRequest) {
      const { pagination, rows } = yield* providers.supervisorsList(criteria, request)
      const supervisees = yield* providers.superviseesOf(rows.map((r) => r.id))
      yield* Effect.annotateCurrentSpan({ "supervisors.count": rows.length, "supervisors.total_count": pagination.total_count })
      return SupervisorList.make({
        supervisors: rows.map((row) => Supervisor.make({
          id: row.id,
          user_id: row.user_id,
          first_name: row.first_name,
          last_name: row.last_name,
          email: row.email,
          specialty: row.specialty,
          license_number: row.license_number,
          active: row.active,
          supervisees: supervisees.filter((s) => s.supervisor_id === row.id).map((s) =>
            Supervisee.make({ id: s.id, first_name: s.first_name, last_name: s.last_name }, true)),
          created_at: row.created_at,
          updated_at: row.updated_at
        }, true)),
        pagination
      })
    })

    return { list, show, update, supervisors } as const
  }),
  dependencies: [AuditLog.Default, ProvidersRepo.Default]
}) {}
