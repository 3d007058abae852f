/**
 * The only writer of the `users` table (ARCHITECTURE "Persistence"): rows are decoded with
 * schemas and become domain `User`s here; SQL errors are defects, except a taken email (the
 * unique index on `lower(email)`), which is the 422 a caller can act on. Status moves and
 * erasure are decided by `UserLifecycle`; this repository writes them. The patients linked to
 * accounts are read here for the admin views until the patients area owns that lookup.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { UserSortColumn } from "../../Api/Accounts/AdminUsers.js"
import { invalidField } from "../../Api/Errors.js"
import { UserId } from "../../Domain/Ids.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { Role, User, UserStatus } from "../../Domain/Accounts/User.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { scope } from "../Access/AccessRepo.js"
import { makeListPage } from "../Lists.js"
import { blankToNull, orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern, nameMatches } from "../SqlFilters.js"
import * as Time from "../Time.js"
import { dayMs } from "../../Domain/Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

/** A user as stored (credentials included); `date_of_birth` as `YYYY-MM-DD` text. */
export const UserRow = Schema.Struct({
  id: UserId,
  email: Text,
  password_hash: Text,
  first_name: Text,
  last_name: Text,
  phone: NullText,
  date_of_birth: NullText,
  language: Text,
  role: Role,
  status: UserStatus,
  clinical: Schema.Boolean,
  confirmed: Schema.Boolean,
  last_login: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type UserRow = typeof UserRow.Type

/** Columns of a `UserRow`; `date_of_birth` as text so no time zone can shift the day. */
export const userColumns = `id, email, password_hash, first_name, last_name, phone,
  to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth, language, role, status, clinical, confirmed,
  last_login, created_at, updated_at`

/** The representation's fields of a row (shared by the user and admin views). */
export const userFields = (row: UserRow) => ({
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    phone: row.phone,
    date_of_birth: row.date_of_birth,
    language: row.language,
    role: row.role,
    active: row.status === "active",
    clinical: row.clinical,
    confirmed: row.confirmed,
    created_at: row.created_at,
    updated_at: row.updated_at
  })

/**
 * Rows are decoded by the repository, so the constructor skips validation; the response encoder
 * still checks every field on the way out.
 */
export const toUser = (row: UserRow): User => User.make(userFields(row), true)

/** A new account; fields left out take the column defaults. The email is normalised here. */
export const NewUser = Schema.Struct({
  email: Text,
  password_hash: Text,
  first_name: Text,
  last_name: Text,
  role: Role,
  confirmed: Schema.Boolean,
  phone: Schema.optional(NullText),
  date_of_birth: Schema.optional(NullText),
  language: Schema.optional(Text),
  status: Schema.optional(UserStatus),
  template: Schema.optional(Schema.Boolean),
  clinical: Schema.optional(Schema.Boolean),
  native_signup: Schema.optional(Schema.Boolean),
  last_login: Schema.optional(Schema.DateFromSelf)
})
export type NewUser = typeof NewUser.Type

/** Columns an update may set; those left out keep their value. `updated_at` is always moved. */
export const UserChange = Schema.Struct({
  email: Schema.optional(Text),
  password_hash: Schema.optional(Text),
  first_name: Schema.optional(Text),
  last_name: Schema.optional(Text),
  phone: Schema.optional(NullText),
  date_of_birth: Schema.optional(NullText),
  language: Schema.optional(Text),
  role: Schema.optional(Role),
  status: Schema.optional(UserStatus),
  confirmed: Schema.optional(Schema.Boolean),
  template: Schema.optional(Schema.Boolean),
  clinical: Schema.optional(Schema.Boolean),
  native_signup: Schema.optional(Schema.Boolean)
})
export type UserChange = typeof UserChange.Type

/**
 * What an admin list shows: the live (neither deleted nor archived) users, or the archived ones,
 * narrowed and ordered as the request asks (general §4.7).
 */
export const UserCriteria = Schema.Struct({
  scope: Schema.Literal("live", "archived"),
  search: Schema.optional(NullText),
  sortBy: Schema.optional(UserSortColumn),
  sortDir: Schema.optional(Schema.Literal("ASC", "DESC")),
  active: Schema.optional(Schema.NullOr(Schema.Boolean)),
  roles: Schema.optional(Schema.Array(Role)),
  /** Inclusive calendar days (YYYY-MM-DD, UTC) on `created_at`. */
  createdFrom: Schema.optional(NullText),
  createdTo: Schema.optional(NullText),
  /** Accounts linked to a patient whose first name, last name or "first last" contains this. */
  patientName: Schema.optional(NullText)
})
export type UserCriteria = typeof UserCriteria.Type

/** Sort keys: the only SQL a request can choose, from this fixed record (in the order the filters list them). */
const sortSql: Record<UserSortColumn, string> = {
  id: "id",
  email: "lower(email)",
  first_name: "lower(first_name)",
  last_name: "lower(last_name)",
  role: "role",
  status: "status",
  created_at: "created_at",
  updated_at: "updated_at",
  last_login: "last_login"
}
export const userSortColumns = Object.keys(sortSql) as Array<UserSortColumn>

/** The patient linked to an account (`patients.user_id`), as the admin view shows it. */
export const LinkedPatient = Schema.Struct({ user_id: Schema.Number, id: Schema.Int, active: Schema.Boolean })

/** Counts of live users for the admin dashboard. */
export const UserCounts = Schema.Struct({
  total_users: Schema.Int,
  active_users: Schema.Int,
  new_users_this_month: Schema.Int,
  clinical_users: Schema.Int,
  provider_users: Schema.Int
})

/**
 * The system account (sql/0031_system_account.sql): performs what the service records by itself.
 * It can never sign in (no password matches `!`; inactive; hidden like a deleted account from
 * every user lookup, list and count), which a check constraint holds.
 */
export const systemAccount = {
  email: "system@care-coordination.invalid",
  firstName: "Care Coordination",
  lastName: "System"
} as const

/** The 422 of a taken email, whatever its case (general §4.1). */
export const emailTaken = () => invalidField("email", "has already been taken")

const startOfDay = (day: string) => new Date(`${day}T00:00:00.000Z`)
const startOfNextDay = (day: string) => new Date(startOfDay(day).getTime() + dayMs)

/** The fields of `record` that are set (undefined ones are left to the column's default or value). */
const definedFields = (record: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

const ById = Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf })
const Found = Schema.Struct({ id: Schema.Number })

export class UsersRepo extends Effect.Service<UsersRepo>()("app/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(userColumns)

    /** A taken email becomes its 422; other SQL errors stay for `orDefect`. */
    const emailTakenFails = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.catchIf(effect, (error) => isUniqueViolation(error, "users_email_key"), () => Effect.fail(emailTaken()))

    const findLive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: UserRow,
      execute: (id) => sql`SELECT ${columns} FROM users WHERE id = ${id} AND deleted_at IS NULL`
    })

    const findLiveForUpdate = SqlSchema.findOne({
      Request: Schema.Number,
      Result: UserRow,
      execute: (id) => sql`SELECT ${columns} FROM users WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`
    })

    const findByEmail = SqlSchema.findOne({
      Request: Text,
      Result: UserRow,
      execute: (email) => sql`SELECT ${columns} FROM users WHERE lower(email) = ${email} AND deleted_at IS NULL`
    })

    const findLiveId = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Found,
      execute: (id) => sql`SELECT id FROM users WHERE id = ${id} AND deleted_at IS NULL`
    })

    /** Any account but `id` holding the email, deleted ones included (the unique index spans them). */
    const findOtherWithEmail = SqlSchema.findOne({
      Request: Schema.Struct({ email: Text, id: Schema.Number }),
      Result: Found,
      execute: ({ email, id }) => sql`SELECT id FROM users WHERE lower(email) = lower(${email}) AND id <> ${id} LIMIT 1`
    })

    /** Any account holding the email, deleted ones included (the unique index spans them). */
    const findAnyWithEmail = SqlSchema.findOne({
      Request: Text,
      Result: Found,
      execute: (email) => sql`SELECT id FROM users WHERE lower(email) = lower(${email}) LIMIT 1`
    })

    const insertIfAbsent = SqlSchema.findOne({
      Request: NewUser,
      Result: UserRow,
      execute: (user) =>
        sql`INSERT INTO users ${sql.insert(definedFields(user))} ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${columns}`
    })

    const insertSystemAccount = SqlSchema.void({
      Request: Schema.DateFromSelf,
      execute: (at) =>
        sql`INSERT INTO users ${
          sql.insert({
            email: systemAccount.email,
            password_hash: "!",
            first_name: systemAccount.firstName,
            last_name: systemAccount.lastName,
            role: "support",
            status: "inactive",
            confirmed: true,
            deleted_at: at,
            system: true
          })
        } ON CONFLICT DO NOTHING`
    })

    const findSystemAccount = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Found,
      execute: () => sql`SELECT id FROM users WHERE system`
    })

    const confirmOne = SqlSchema.findOne({
      Request: ById,
      Result: Schema.Struct({ email: Text }),
      execute: ({ at, id }) =>
        sql`UPDATE users SET confirmed = true, updated_at = ${at} WHERE id = ${id} AND deleted_at IS NULL RETURNING email`
    })

    const recordSignIn = SqlSchema.single({
      Request: ById,
      Result: UserRow,
      execute: ({ at, id }) => sql`UPDATE users SET last_login = ${at} WHERE id = ${id} RETURNING ${columns}`
    })

    const setPassword = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, passwordHash: Text, at: Schema.DateFromSelf }),
      execute: ({ at, id, passwordHash }) => sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = ${at} WHERE id = ${id}`
    })

    const updateOne = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.Number, change: UserChange, at: Schema.DateFromSelf }),
      Result: UserRow,
      execute: ({ at, change, id }) =>
        sql`UPDATE users SET ${sql.update({ ...definedFields(change), updated_at: at })} WHERE id = ${id} RETURNING ${columns}`
    })

    const changeLiveEmail = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, email: Text, at: Schema.DateFromSelf }),
      Result: UserRow,
      execute: ({ at, email, id }) =>
        sql`UPDATE users SET email = ${email}, updated_at = ${at} WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`
    })

    const setStatus = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, status: UserStatus, remember: Schema.Boolean, at: Schema.DateFromSelf }),
      Result: UserRow,
      execute: ({ at, id, remember, status }) =>
        sql`UPDATE users SET status = ${status}, updated_at = ${at},
            status_before_archive = ${remember
              ? sql`CASE WHEN status = 'archived' THEN status_before_archive ELSE status END`
              : sql`status_before_archive`}
          WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`
    })

    const cancelOne = SqlSchema.findOne({
      Request: ById,
      Result: UserRow,
      execute: ({ at, id }) =>
        sql`UPDATE users SET status = 'inactive', updated_at = ${at}
          WHERE id = ${id} AND deleted_at IS NULL AND status <> 'archived' RETURNING ${columns}`
    })

    const unarchiveOne = SqlSchema.findOne({
      Request: ById,
      Result: UserRow,
      execute: ({ at, id }) =>
        sql`UPDATE users SET status = COALESCE(status_before_archive, 'active'), status_before_archive = NULL, updated_at = ${at}
          WHERE id = ${id} AND deleted_at IS NULL AND status = 'archived' RETURNING ${columns}`
    })

    const eraseOne = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.Number,
        passwordHash: Text,
        firstName: Text,
        lastName: Text,
        at: Schema.DateFromSelf
      }),
      Result: Found,
      execute: ({ at, firstName, id, lastName, passwordHash }) =>
        sql`UPDATE users SET
            email = ${"deleted-user-"} || id || '@deleted.invalid',
            password_hash = ${passwordHash},
            first_name = ${firstName}, last_name = ${lastName},
            phone = NULL, date_of_birth = NULL, status = 'inactive', confirmed = false,
            last_login = NULL, status_before_archive = NULL, deleted_at = ${at}, updated_at = ${at}
          WHERE id = ${id} AND deleted_at IS NULL RETURNING id`
    })

    const sortColumns = Object.fromEntries(userSortColumns.map((name) => [name, sql.literal(sortSql[name])])) as Record<UserSortColumn, Statement.Fragment>

    /** A page of the users `viewer` may see (Access's `scope.users`), by id. */
    const visibleList = (viewer: { readonly id: number; readonly role: Role }, page: PageRequest) =>
      listPage({
        select: columns,
        from: sql`users`,
        row: UserRow,
        scope: scope.users(sql, viewer),
        sort: { columns: sortColumns, by: "id", dir: "ASC", id: sortColumns.id }
      }, page)

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

    /** A page of an admin list: newest first unless `sortBy`/`sortDir` say otherwise, users without a value last. */
    const adminList = (criteria: UserCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from: sql`users`,
        row: UserRow,
        filters: [whereOf(criteria)],
        sort: {
          columns: sortColumns,
          by: criteria.sortBy ?? "created_at",
          dir: criteria.sortDir ?? (criteria.sortBy === undefined ? "DESC" : "ASC"),
          id: sortColumns.id,
          nulls: "LAST"
        }
      }, page)

    const createdRange = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ min: NullText, max: NullText }),
      execute: () =>
        sql`SELECT to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS min,
            to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS max
          FROM users WHERE deleted_at IS NULL`
    })

    const counts = SqlSchema.single({
      Request: Schema.DateFromSelf,
      Result: UserCounts,
      execute: (monthStart) =>
        sql`SELECT
            count(*)::int AS total_users,
            (count(*) FILTER (WHERE status = 'active'))::int AS active_users,
            (count(*) FILTER (WHERE created_at >= ${monthStart}))::int AS new_users_this_month,
            (count(*) FILTER (WHERE clinical))::int AS clinical_users,
            (count(*) FILTER (WHERE role = 'provider'))::int AS provider_users
          FROM users WHERE deleted_at IS NULL`
    })

    /**
     * The patient linked to each account; of several (a guardian's children), the first by id: the
     * earliest link, which stays the same when another child is added or one is deactivated.
     */
    const linkedPatients = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: LinkedPatient,
      execute: (userIds) =>
        sql`SELECT DISTINCT ON (user_id) user_id, id, active FROM patients WHERE user_id IN ${sql.in(userIds)} ORDER BY user_id, id`
    })

    return {
      /** The live (not deleted) user. */
      findById: Effect.fn("UsersRepo.findById")(function*(id: number) {
        yield* Effect.annotateCurrentSpan({ "user.id": id })
        return yield* orDefect(findLive(id))
      }),
      /** The live user, locked until the transaction ends. */
      findByIdForUpdate: (id: number) => orDefect(findLiveForUpdate(id)),
      findByEmail: Effect.fn("UsersRepo.findByEmail")((email: string) => orDefect(findByEmail(normalizeEmail(email)))),
      /** Whether a live (not deleted) user has this id. */
      exists: (id: number) => Effect.map(orDefect(findLiveId(id)), Option.isSome),
      /** Whether an account other than `id` holds the email (any case). */
      emailInUse: (email: string) => Effect.map(orDefect(findAnyWithEmail(email)), Option.isSome),
      emailTakenByAnother: (email: string, id: number) => Effect.map(orDefect(findOtherWithEmail({ email, id })), Option.isSome),
      /**
       * Inserts unless the email is taken (whatever its case); None when it was. Concurrent inserts
       * of one email wait on the unique index; the losers get no row.
       */
      insertIfAbsent: Effect.fn("UsersRepo.insertIfAbsent")((user: NewUser) =>
        orDefect(insertIfAbsent({ ...user, email: normalizeEmail(user.email) }))
      ),
      /**
       * Creates the system account when there is none (instances starting together: the unique
       * index lets one insert) and returns its id.
       */
      ensureSystemAccount: Effect.gen(function*() {
        yield* orDefect(insertSystemAccount(yield* Time.now))
        const row = yield* orDefect(findSystemAccount(undefined))
        if (Option.isNone(row)) return yield* Effect.dieMessage("the system account could not be created: its email is taken")
        return row.value.id
      }).pipe(Effect.withSpan("UsersRepo.ensureSystemAccount")),
      /** Marks the live user confirmed; their email, or None when there is no such user. */
      confirm: (id: number) => Effect.flatMap(Time.now, (at) => orDefect(confirmOne({ id, at }))),
      /** Records a sign-in at `at`; the row as it now is. */
      recordSignIn: (id: number, at: Date) => orDefect(recordSignIn({ id, at })),
      setPassword: (id: number, passwordHash: string) => Effect.flatMap(Time.now, (at) => orDefect(setPassword({ id, passwordHash, at }))),
      /** Sets the given columns; the row as it now is. A taken email fails with its 422. */
      update: (id: number, change: UserChange) =>
        Effect.flatMap(Time.now, (at) => orDefect(emailTakenFails(updateOne({ id, change, at })))),
      /** A confirmed email change of a live user; None when there is none. A taken email fails with its 422. */
      changeEmail: (id: number, email: string) =>
        Effect.flatMap(Time.now, (at) => orDefect(emailTakenFails(changeLiveEmail({ id, email, at })))),
      /**
       * Sets the status of a live user; None when there is none. `remember` keeps the status held
       * before (unless already archived) for unarchiving.
       */
      setStatus: (id: number, status: UserStatus, remember: boolean) =>
        Effect.flatMap(Time.now, (at) => orDefect(setStatus({ id, status, remember, at }))),
      /** Inactive unless archived (the condition sits in the UPDATE); None when nothing changed. */
      cancel: (id: number) => Effect.flatMap(Time.now, (at) => orDefect(cancelOne({ id, at }))),
      /** Back to the status held before archiving (active when unknown); None unless archived. */
      unarchive: (id: number) => Effect.flatMap(Time.now, (at) => orDefect(unarchiveOne({ id, at }))),
      /** Erases personal data and credentials of a live user; false when there is none. */
      erase: (id: number, passwordHash: string, name: { readonly firstName: string; readonly lastName: string }) =>
        Effect.flatMap(Time.now, (at) => Effect.map(orDefect(eraseOne({ id, passwordHash, ...name, at })), Option.isSome)),
      /** One page of the users `viewer` may see (Access's `scope.users`), by id, with its pagination. */
      visibleList,
      /** One page of an admin list with its pagination (counted under the same conditions). */
      adminList,
      /** The first and last day (UTC) a live user was created on. */
      createdRange: orDefect(createdRange(undefined)),
      /** Counts of live users; new ones since `monthStart`. */
      counts: (monthStart: Date) => orDefect(counts(monthStart)),
      /** The patient linked to each of these accounts, by user id. */
      linkedPatients: (userIds: ReadonlyArray<number>) =>
        userIds.length === 0
          ? Effect.succeed(new Map<number, { readonly id: number; readonly active: boolean }>())
          : Effect.map(orDefect(linkedPatients(userIds)), (rows) => new Map(rows.map((r) => [r.user_id, { id: r.id, active: r.active }])))
    } as const
  })
}) {}
