/**
 * Admin users (general §4.7): lists, filters, the admin view of one user, admin updates, status
 * moves and the dashboard. Status moves and erasure go through `UserLifecycle`; every change is
 * written to the audit trail. Deleted users (`deleted_at` set) are invisible here.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import {
  AdminUser,
  AdminUserList,
  Dashboard,
  UserFilterOptions,
  type UserSortColumn
} from "../../Api/Accounts/AdminUsers.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { Role, UserStatus } from "../../Domain/Accounts/User.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { AuditLog } from "../AuditLog.js"
import { ProviderProfiles } from "../Providers/Profiles.js"
import { CredentialChanges } from "./CredentialChanges.js"
import { UserLifecycle } from "./UserLifecycle.js"
import { userColumns, userFields, type UserRow } from "./UsersRepo.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern, nameMatches } from "../SqlSearch.js"

/** Default page size of the admin user lists: as GET /v1/users (general §8). */
export const adminUsersPageSize = 50

/** No live user has this id. */
export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", { userId: Schema.Number }) {}

/** The request is well formed but not allowed; `field` and `message` become a 422 body. */
export class UserRejected extends Schema.TaggedError<UserRejected>()("UserRejected", {
  field: Schema.String,
  message: Schema.String
}) {}

export const rejectionMessages = {
  emailTaken: "has already been taken",
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

/** The patient linked to an account (`patients.user_id`), as the admin view shows it. */
export interface LinkedPatient {
  readonly id: number
  readonly active: boolean
}

/** The admin view of a user row and the patient linked to it (null when none is). */
export const toAdminUser = (row: UserRow, patient: LinkedPatient | null): AdminUser =>
  AdminUser.make({ ...userFields(row), status: row.status, last_login: row.last_login, patient }, true)

/** What a list shows: the live (neither deleted nor archived) users, or the archived ones. */
export interface UserCriteria {
  readonly scope: "live" | "archived"
  readonly search?: string | null | undefined
  readonly sortBy?: UserSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
  readonly active?: boolean | null | undefined
  readonly roles?: ReadonlyArray<Role> | undefined
  /** Inclusive calendar days (YYYY-MM-DD, UTC) on `created_at`. */
  readonly createdFrom?: string | null | undefined
  readonly createdTo?: string | null | undefined
  /** Accounts linked to a patient whose first name, last name or "first last" contains this. */
  readonly patientName?: string | null | undefined
}

export interface UserChanges {
  readonly first_name?: string | undefined
  readonly last_name?: string | undefined
  readonly email?: string | undefined
  readonly phone?: string | null | undefined
  readonly role?: Role | undefined
  readonly active?: boolean | undefined
  readonly clinical?: boolean | undefined
}


const startOfDay = (day: string) => new Date(`${day}T00:00:00.000Z`)
const startOfNextDay = (day: string) => new Date(startOfDay(day).getTime() + 24 * 60 * 60 * 1000)

/** Phone as E.164 (as registration stores it); blank clears it; undefined leaves it. */
const phoneOf = (input: string | null | undefined): Effect.Effect<string | null | undefined, UserRejected> => {
  if (input === undefined) return Effect.succeed(undefined)
  const trimmed = input?.trim() ?? ""
  if (trimmed === "") return Effect.succeed(null)
  return Option.match(normalizePhone(trimmed), {
    onNone: () => Effect.fail(new UserRejected({ field: "phone", message: rejectionMessages.phone })),
    onSome: Effect.succeed
  })
}

const blankToNull = (s: string | null | undefined): string | null => {
  const trimmed = s?.trim() ?? ""
  return trimmed.length === 0 ? null : trimmed
}

export class AdminUsers extends Effect.Service<AdminUsers>()("app/AdminUsers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const lifecycle = yield* UserLifecycle
    const credentials = yield* CredentialChanges
    const profiles = yield* ProviderProfiles
    const columns = sql.literal(userColumns)

    /** Sort keys: the only SQL a request can choose, from this fixed record. */
    const sortColumns: Record<UserSortColumn, Statement.Fragment> = {
      id: sql`id`,
      email: sql`lower(email)`,
      first_name: sql`lower(first_name)`,
      last_name: sql`lower(last_name)`,
      role: sql`role`,
      status: sql`status`,
      created_at: sql`created_at`,
      updated_at: sql`updated_at`,
      last_login: sql`last_login`
    }
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const

    /**
     * The patient linked to each account; of several (a guardian's children), the first by id: the
     * earliest link, which stays the same when another child is added or one is deactivated.
     */
    const linkedPatients = (userIds: ReadonlyArray<number>) =>
      userIds.length === 0
        ? Effect.succeed(new Map<number, LinkedPatient>())
        : sql<LinkedPatient & { user_id: number }>`SELECT DISTINCT ON (user_id) user_id, id, active FROM patients
            WHERE user_id IN ${sql.in(userIds)} ORDER BY user_id, id`.pipe(
            Effect.orDie,
            Effect.map((rows) => new Map(rows.map((r) => [r.user_id, { id: r.id, active: r.active }])))
          )

    /** Admin views of user rows, each with its linked patient. */
    const adminViews = (rows: ReadonlyArray<UserRow>) =>
      Effect.map(linkedPatients(rows.map((r) => r.id)), (patients) => rows.map((r) => toAdminUser(r, patients.get(r.id) ?? null)))
    const adminView = (row: UserRow) => Effect.map(adminViews([row]), (views) => views[0]!)

    const orderBy = (criteria: UserCriteria) => {
      const column = sortColumns[criteria.sortBy ?? "created_at"]
      const dir = directions[criteria.sortDir ?? (criteria.sortBy === undefined ? "DESC" : "ASC")]
      return sql`ORDER BY ${column} ${dir} NULLS LAST, id ${dir}`
    }

    const whereOf = (criteria: UserCriteria) => {
      const clauses: Array<Statement.Fragment> = [sql`deleted_at IS NULL`]
      clauses.push(criteria.scope === "archived" ? sql`status = 'archived'` : sql`status <> 'archived'`)
      const search = blankToNull(criteria.search)
      if (search !== null) {
        const pattern = likePattern(search)
        clauses.push(sql`(email ILIKE ${pattern} ESCAPE '\\' OR first_name ILIKE ${pattern} ESCAPE '\\'
          OR last_name ILIKE ${pattern} ESCAPE '\\' OR (first_name || ' ' || last_name) ILIKE ${pattern} ESCAPE '\\')`)
      }
      if (criteria.active === true) clauses.push(sql`status = 'active'`)
      if (criteria.active === false) clauses.push(sql`status <> 'active'`)
      if (criteria.roles !== undefined && criteria.roles.length > 0) clauses.push(sql`role IN ${sql.in(criteria.roles)}`)
      if (criteria.createdFrom) clauses.push(sql`created_at >= ${startOfDay(criteria.createdFrom)}`)
      if (criteria.createdTo) clauses.push(sql`created_at < ${startOfNextDay(criteria.createdTo)}`)
      const patientName = blankToNull(criteria.patientName)
      if (patientName !== null) {
        clauses.push(sql`EXISTS (SELECT 1 FROM patients p WHERE p.user_id = users.id
          AND ${nameMatches(sql, "p.first_name", "p.last_name", patientName)})`)
      }
      return sql.and(clauses)
    }

    /** One page of users and the total count under the same conditions. */
    const page = (criteria: UserCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        if (criteria.createdFrom && criteria.createdTo && criteria.createdFrom > criteria.createdTo) {
          return yield* new UserRejected({ field: "date", message: rejectionMessages.dateRange })
        }
        const where = whereOf(criteria)
        const rows = yield* sql<UserRow>`SELECT ${columns} FROM users WHERE ${where} ${orderBy(criteria)}
          LIMIT ${request.perPage} OFFSET ${request.offset}`.pipe(Effect.orDie)
        const counted = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM users WHERE ${where}`.pipe(Effect.orDie)
        const total = counted[0]?.count ?? 0
        yield* Effect.annotateCurrentSpan({ "users.count": rows.length, "users.total_count": total, "page": request.page })
        return AdminUserList.make({ users: yield* adminViews(rows), pagination: paginationOf(request, total) })
      })

    const list = (criteria: Omit<UserCriteria, "scope">, request: PageRequest) =>
      page({ ...criteria, scope: "live" }, request).pipe(Effect.withSpan("AdminUsers.list"))

    const filter = (criteria: Omit<UserCriteria, "scope">, request: PageRequest) =>
      page({ ...criteria, scope: "live" }, request).pipe(
        Effect.withSpan("AdminUsers.filter", { attributes: { "filter.roles.count": criteria.roles?.length ?? 0 } })
      )

    const archived = (request: PageRequest) => page({ scope: "archived" }, request).pipe(Effect.withSpan("AdminUsers.archived"))

    const filters = sql<{ min: string | null; max: string | null }>`
      SELECT to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS min,
        to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS max
      FROM users WHERE deleted_at IS NULL`.pipe(
      Effect.orDie,
      Effect.map((rows) =>
        UserFilterOptions.make({
          roles: Role.literals,
          statuses: UserStatus.literals,
          sort_by: Object.keys(sortColumns) as Array<UserSortColumn>,
          date: { min: rows[0]?.min ?? null, max: rows[0]?.max ?? null }
        })
      ),
      Effect.withSpan("AdminUsers.filters")
    )

    const findLive = (id: number, lock = false) =>
      sql<UserRow>`SELECT ${columns} FROM users WHERE id = ${id} AND deleted_at IS NULL ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new UserNotFound({ userId: id })),
          onSome: Effect.succeed
        }))
      )

    const show = (id: number) =>
      findLive(id).pipe(
        Effect.flatMap(adminView),
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("AdminUsers.show", { attributes: { "user.id": id }, captureStackTrace: false })
      )

    /** Admin update; `actorId` is the caller, who may not demote or deactivate themselves. */
    const update = (actorId: number, id: number, changes: UserChanges) =>
      Effect.gen(function*() {
        if (actorId === id && changes.active === false) {
          return yield* new UserRejected({ field: "active", message: rejectionMessages.ownActive })
        }
        const email = changes.email === undefined ? undefined : normalizeEmail(changes.email)
        const phone = yield* phoneOf(changes.phone)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findLive(id, true)
          if (actorId === id && changes.role !== undefined && changes.role !== current.role) {
            return yield* new UserRejected({ field: "role", message: rejectionMessages.ownRole })
          }
          const wasActive = current.status === "active"
          const activeChanged = changes.active !== undefined && changes.active !== wasActive
          if (activeChanged && current.status === "archived") {
            return yield* new UserRejected({ field: "active", message: rejectionMessages.archivedActive })
          }
          const emailChanged = email !== undefined && email.toLowerCase() !== current.email.toLowerCase()
          // Here no current password is asked for: one's own address changes through the self-service path.
          if (emailChanged && actorId === id) {
            return yield* new UserRejected({ field: "email", message: rejectionMessages.ownEmail })
          }
          if (emailChanged) {
            const taken = yield* sql`SELECT 1 FROM users WHERE lower(email) = lower(${email}) AND id <> ${id}`
            if (taken.length > 0) return yield* new UserRejected({ field: "email", message: rejectionMessages.emailTaken })
          }
          const role = changes.role ?? current.role
          const status = activeChanged ? (changes.active ? "active" : "inactive") : current.status
          const updated = yield* sql<UserRow>`UPDATE users SET
              first_name = ${changes.first_name?.trim() ?? current.first_name},
              last_name = ${changes.last_name?.trim() ?? current.last_name},
              email = ${email ?? current.email}, phone = ${phone === undefined ? current.phone : phone}, role = ${role}, status = ${status},
              clinical = ${changes.clinical ?? current.clinical}, updated_at = now()
            WHERE id = ${id} RETURNING ${columns}`
          // A role change ends the user's sessions: new rights start with a fresh sign-in.
          if ((activeChanged && !changes.active) || role !== current.role) yield* lifecycle.revokeSessions(id)
          // The provider profile follows the role in this transaction (created, reactivated or deactivated).
          if (changes.role !== undefined) yield* profiles.followRole(actorId, id, role)
          const record = (action: string) => audit.record({ actorId, action, targetType: "user", targetId: id })
          yield* record("user.update")
          if (role !== current.role) yield* record("user.role_change")
          if (activeChanged) yield* record("user.active_change")
          return { row: updated[0]!, previousEmail: emailChanged ? current.email : undefined }
        }))
        if (row.previousEmail !== undefined) yield* credentials.announceEmailChanged(id, row.previousEmail)
        return yield* adminView(row.row)
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new UserRejected({ field: "email", message: rejectionMessages.emailTaken }))
            : Effect.die(error)),
        Effect.withSpan("AdminUsers.update", { attributes: { "user.id": id, "actor.id": actorId } })
      )

    /** Permanent deletion (personal data erased); see `UserLifecycle.erase`. */
    const remove = (actorId: number, id: number) =>
      Effect.gen(function*() {
        if (actorId === id) return yield* new UserRejected({ field: "id", message: rejectionMessages.ownDelete })
        const erased = yield* lifecycle.erase(actorId, id)
        if (!erased) return yield* new UserNotFound({ userId: id })
      }).pipe(Effect.withSpan("AdminUsers.delete", { attributes: { "user.id": id, "actor.id": actorId } }))

    /** Soft delete; archiving an archived user changes nothing and returns it. */
    const archive = (actorId: number, id: number) =>
      Effect.gen(function*() {
        if (actorId === id) return yield* new UserRejected({ field: "id", message: rejectionMessages.ownArchive })
        return yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findLive(id, true)
          if (current.status === "archived") return yield* adminView(current)
          const moved = yield* lifecycle.archive(actorId, id)
          return yield* adminView(Option.getOrElse(moved, () => current))
        }))
      }).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("AdminUsers.archive", { attributes: { "user.id": id, "actor.id": actorId } })
      )

    /** Back to the status held before archiving. */
    const unarchive = (actorId: number, id: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* findLive(id, true)
        if (current.status !== "archived") {
          return yield* new UserRejected({ field: "status", message: rejectionMessages.notArchived })
        }
        const moved = yield* lifecycle.unarchive(actorId, id)
        return yield* adminView(Option.getOrElse(moved, () => current))
      })).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("AdminUsers.unarchive", { attributes: { "user.id": id, "actor.id": actorId } })
      )

    const dashboard = Effect.gen(function*() {
      const monthStart = DateTime.toDate(DateTime.startOf(yield* DateTime.now, "month"))
      const counts = yield* sql<Omit<Dashboard, "recent_activity">>`SELECT
          count(*)::int AS total_users,
          (count(*) FILTER (WHERE status = 'active'))::int AS active_users,
          (count(*) FILTER (WHERE created_at >= ${monthStart}))::int AS new_users_this_month,
          (count(*) FILTER (WHERE clinical))::int AS clinical_users,
          (count(*) FILTER (WHERE role = 'provider'))::int AS provider_users
        FROM users WHERE deleted_at IS NULL`.pipe(Effect.orDie)
      const activity = yield* audit.recent(20)
      const totals = counts[0] ?? { total_users: 0, active_users: 0, new_users_this_month: 0, clinical_users: 0, provider_users: 0 }
      return Dashboard.make({ ...totals, recent_activity: activity })
    }).pipe(Effect.withSpan("AdminUsers.dashboard"))

    return { list, filter, archived, filters, show, update, remove, archive, unarchive, dashboard } as const
  }),
  dependencies: [UserLifecycle.Default, AuditLog.Default, CredentialChanges.Default, ProviderProfiles.Default]
}) {}
