/**
 * Admin users (general §4.7): lists, filters, the admin view of one user, admin updates, status
 * moves and the dashboard. Status moves and erasure go through `UserLifecycle`; every change is
 * written to the audit trail. Deleted users (`deleted_at` set) are invisible here.
 */
import { DateTime, Effect, Option } from "effect"
import {
  AdminUser,
  AdminUserList,
  Dashboard,
  UserFilterOptions
} from "../../Api/Accounts/AdminUsers.js"
import { invalidField, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { Role, UserStatus } from "../../Domain/Accounts/User.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { AuditLog } from "../AuditLog.js"
import { ProviderProfiles } from "../Providers/ProviderProfiles.js"
import { makeTransaction } from "../Repository.js"
import { CredentialChanges } from "./CredentialChanges.js"
import { UserLifecycle } from "./UserLifecycle.js"
import { emailTaken, type UserCriteria, userFields, type UserRow, UsersRepo, userSortColumns } from "./UsersRepo.js"
import { annotatedOutside } from "../Spans.js"

/** Default page size of the admin user lists: as GET /v1/users (general §8). */
export const adminUsersPageSize = 50

export const rejectionMessages = {
  ownRole: "cannot be changed on your own account",
  ownEmail: "of your own account can only be changed with PUT /v1/users/{id} and your current password",
  ownActive: "cannot be changed on your own account",
  ownArchive: "cannot archive your own account",
  ownDelete: "cannot delete your own account",
  archivedActive: "cannot be changed while the user is archived",
  phone: "is invalid",
  notArchived: "is not archived",
  dateRange: "start_date must not be after end_date"
} as const

/** No live user has this id: 404 `User not found`. */
const userNotFound = () => notFound("User")

/** The patient linked to an account (`patients.user_id`), as the admin view shows it. */
export interface LinkedPatient {
  readonly id: number
  readonly active: boolean
}

/** The admin view of a user row and the patient linked to it (null when none is). */
export const toAdminUser = (row: UserRow, patient: LinkedPatient | null): AdminUser =>
  AdminUser.make({ ...userFields(row), status: row.status, last_login: row.last_login, patient }, true)

export type { UserCriteria }

export interface UserChanges {
  readonly first_name?: string | undefined
  readonly last_name?: string | undefined
  readonly email?: string | undefined
  readonly phone?: string | null | undefined
  readonly role?: Role | undefined
  readonly active?: boolean | undefined
  readonly clinical?: boolean | undefined
}

/** Phone as E.164 (as registration stores it); blank clears it; undefined leaves it. */
const phoneOf = (input: string | null | undefined) => {
  if (input === undefined) return Effect.succeed(undefined)
  const trimmed = input?.trim() ?? ""
  if (trimmed === "") return Effect.succeed(null)
  return Option.match(normalizePhone(trimmed), {
    onNone: () => Effect.fail(invalidField("phone", rejectionMessages.phone)),
    onSome: (e164) => Effect.succeed<string | null>(e164)
  })
}

export class AdminUsers extends Effect.Service<AdminUsers>()("app/AdminUsers", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const audit = yield* AuditLog
    const lifecycle = yield* UserLifecycle
    const credentials = yield* CredentialChanges
    const profiles = yield* ProviderProfiles
    const transaction = yield* makeTransaction

    /** Admin views of user rows, each with its linked patient. */
    const adminViews = (rows: ReadonlyArray<UserRow>) =>
      Effect.map(users.linkedPatients(rows.map((r) => r.id)), (patients) => rows.map((r) => toAdminUser(r, patients.get(r.id) ?? null)))
    const adminView = (row: UserRow) => Effect.map(adminViews([row]), (views) => views[0]!)

    /** One page of users and the total count under the same conditions. */
    const page = (criteria: UserCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        if (criteria.createdFrom && criteria.createdTo && criteria.createdFrom > criteria.createdTo) {
          return yield* Effect.fail(invalidField("date", rejectionMessages.dateRange))
        }
        const { pagination, rows } = yield* users.adminList(criteria, request)
        yield* Effect.annotateCurrentSpan({ "users.count": rows.length, "users.total_count": pagination.total_count, "page": request.page })
        return AdminUserList.make({ users: yield* adminViews(rows), pagination })
      })

    const list = Effect.fn("AdminUsers.list")((criteria: Omit<UserCriteria, "scope">, request: PageRequest) =>
      page({ ...criteria, scope: "live" }, request)
    )

    const filter = Effect.fn("AdminUsers.filter")(function*(criteria: Omit<UserCriteria, "scope">, request: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "filter.roles.count": criteria.roles?.length ?? 0 })
      return yield* page({ ...criteria, scope: "live" }, request)
    })

    const archived = Effect.fn("AdminUsers.archived")((request: PageRequest) => page({ scope: "archived" }, request))

    const filters = users.createdRange.pipe(
      Effect.map((range) =>
        UserFilterOptions.make({
          roles: Role.literals,
          statuses: UserStatus.literals,
          sort_by: userSortColumns,
          date: { min: range.min, max: range.max }
        })
      ),
      Effect.withSpan("AdminUsers.filters")
    )

    const findLive = (id: number, lock = false) =>
      Effect.flatMap(lock ? users.findByIdForUpdate(id) : users.findById(id), Option.match({
        onNone: () => Effect.fail(userNotFound()),
        onSome: Effect.succeed
      }))

    const show = Effect.fn("AdminUsers.show", { captureStackTrace: false })(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": id })
      return yield* adminView(yield* findLive(id))
    })

    /** Admin update; `actorId` is the caller, who may not demote or deactivate themselves. */
    const update = Effect.fn("AdminUsers.update")(function*(actorId: number, id: number, changes: UserChanges) {
      yield* Effect.annotateCurrentSpan({ "user.id": id, "actor.id": actorId })
      if (actorId === id && changes.active === false) {
        return yield* Effect.fail(invalidField("active", rejectionMessages.ownActive))
      }
      const email = changes.email === undefined ? undefined : normalizeEmail(changes.email)
      const phone = yield* phoneOf(changes.phone)
      const row = yield* transaction(Effect.gen(function*() {
        const current = yield* findLive(id, true)
        if (actorId === id && changes.role !== undefined && changes.role !== current.role) {
          return yield* Effect.fail(invalidField("role", rejectionMessages.ownRole))
        }
        const wasActive = current.status === "active"
        const activeChanged = changes.active !== undefined && changes.active !== wasActive
        if (activeChanged && current.status === "archived") {
          return yield* Effect.fail(invalidField("active", rejectionMessages.archivedActive))
        }
        const emailChanged = email !== undefined && email.toLowerCase() !== current.email.toLowerCase()
        // Here no current password is asked for: one's own address changes through the self-service path.
        if (emailChanged && actorId === id) {
          return yield* Effect.fail(invalidField("email", rejectionMessages.ownEmail))
        }
        if (emailChanged && (yield* users.emailTakenByAnother(email, id))) {
          return yield* Effect.fail(emailTaken())
        }
        const role = changes.role ?? current.role
        const status = activeChanged ? (changes.active ? "active" : "inactive") : current.status
        // Every column is written (`updated_at` moves even when nothing else does); a
        // concurrent change that took the email fails with the repository's 422.
        const updated = yield* users.update(id, {
          first_name: changes.first_name?.trim() ?? current.first_name,
          last_name: changes.last_name?.trim() ?? current.last_name,
          email: email ?? current.email,
          phone: phone === undefined ? current.phone : phone,
          role,
          status,
          clinical: changes.clinical ?? current.clinical
        })
        // A role change ends the user's sessions: new rights start with a fresh sign-in.
        if ((activeChanged && !changes.active) || role !== current.role) yield* lifecycle.revokeSessions(id)
        // The provider profile follows the role in this transaction (created, reactivated or deactivated).
        if (changes.role !== undefined) yield* profiles.followRole(actorId, id, role)
        const record = (action: string) => audit.record({ actorId, action, targetType: "user", targetId: id })
        yield* record("user.update")
        if (role !== current.role) yield* record("user.role_change")
        if (activeChanged) yield* record("user.active_change")
        return { row: updated, previousEmail: emailChanged ? current.email : undefined }
      }))
      if (row.previousEmail !== undefined) yield* credentials.announceEmailChanged(id, row.previousEmail)
      return yield* adminView(row.row)
    })

    /** Permanent deletion (personal data erased); see `UserLifecycle.erase`. */
    const remove = Effect.fn("AdminUsers.delete")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": id, "actor.id": actorId })
      if (actorId === id) return yield* Effect.fail(invalidField("id", rejectionMessages.ownDelete))
      const erased = yield* lifecycle.erase(actorId, id)
      if (!erased) return yield* Effect.fail(userNotFound())
    })

    /** Soft delete; archiving an archived user changes nothing and returns it. */
    const archive = Effect.fn("AdminUsers.archive")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": id, "actor.id": actorId })
      if (actorId === id) return yield* Effect.fail(invalidField("id", rejectionMessages.ownArchive))
      return yield* transaction(Effect.gen(function*() {
        const current = yield* findLive(id, true)
        if (current.status === "archived") return yield* adminView(current)
        const moved = yield* lifecycle.archive(actorId, id)
        return yield* adminView(Option.getOrElse(moved, () => current))
      }))
    })

    /** Back to the status held before archiving. */
    const unarchive = Effect.fn("AdminUsers.unarchive")(function*(actorId: number, id: number) {
      const current = yield* findLive(id, true)
      if (current.status !== "archived") {
        return yield* Effect.fail(invalidField("status", rejectionMessages.notArchived))
      }
      const moved = yield* lifecycle.unarchive(actorId, id)
      return yield* adminView(Option.getOrElse(moved, () => current))
    },
      transaction,
      annotatedOutside((actorId: number, id: number) => ({ "user.id": id, "actor.id": actorId }))
    )

    const dashboard = Effect.gen(function*() {
      const monthStart = DateTime.toDate(DateTime.startOf(yield* DateTime.now, "month"))
      const counts = yield* users.counts(monthStart)
      const activity = yield* audit.recent(20)
      return Dashboard.make({ ...counts, recent_activity: activity })
    }).pipe(Effect.withSpan("AdminUsers.dashboard"))

    return { list, filter, archived, filters, show, update, remove, archive, unarchive, dashboard } as const
  }),
  dependencies: [UsersRepo.Default, UserLifecycle.Default, AuditLog.Default, CredentialChanges.Default, ProviderProfiles.Default]
}) {}
