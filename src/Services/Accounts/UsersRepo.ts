/** SQL for the `users` table; rows become domain `User`s here and nowhere else. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { UserId } from "../../Domain/Ids.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { type Role, User, type UserStatus } from "../../Domain/Accounts/User.js"

export interface UserRow {
  readonly id: number
  readonly email: string
  readonly password_hash: string
  readonly first_name: string
  readonly last_name: string
  readonly phone: string | null
  readonly date_of_birth: string | null
  readonly language: string
  readonly role: Role
  readonly status: UserStatus
  readonly clinical: boolean
  readonly confirmed: boolean
  readonly last_login: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** Columns of a `UserRow`; `date_of_birth` as text so no time zone can shift the day. */
export const userColumns = `id, email, password_hash, first_name, last_name, phone,
  to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth, language, role, status, clinical, confirmed,
  last_login, created_at, updated_at`

/** The representation's fields of a row (shared by the user and admin views). */
export const userFields = (row: UserRow) => ({
    id: row.id as UserId,
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
 * Rows are trusted here (their columns are typed and checked by the database), so the constructor
 * skips validation; the response encoder still checks every field on the way out.
 */
export const toUser = (row: UserRow): User => User.make(userFields(row), true)

export interface NewUser {
  readonly email: string
  readonly passwordHash: string
  readonly firstName: string
  readonly lastName: string
  readonly role: Role
  readonly confirmed: boolean
}

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

export class UsersRepo extends Effect.Service<UsersRepo>()("app/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(userColumns)

    const findById = (id: number) =>
      sql<UserRow>`SELECT ${columns} FROM users WHERE id = ${id} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie,
        Effect.withSpan("UsersRepo.findById", { attributes: { "user.id": id } })
      )

    const findByEmail = (email: string) =>
      sql<UserRow>`SELECT ${columns} FROM users WHERE lower(email) = ${normalizeEmail(email)} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie,
        Effect.withSpan("UsersRepo.findByEmail")
      )

    /** Inserts unless the email is taken (whatever its case); None when it was. */
    const insertIfAbsent = (user: NewUser) =>
      sql<UserRow>`INSERT INTO users ${
        sql.insert({
          email: normalizeEmail(user.email),
          password_hash: user.passwordHash,
          first_name: user.firstName,
          last_name: user.lastName,
          role: user.role,
          confirmed: user.confirmed
        })
      } ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${columns}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie,
        Effect.withSpan("UsersRepo.insertIfAbsent")
      )

    /** Whether any account, deleted ones included, has this email (whatever its case). */
    const emailTaken = (email: string) =>
      sql`SELECT 1 FROM users WHERE lower(email) = ${normalizeEmail(email)}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /**
     * Inserts the confirmed, active account of an accepted provider invite, signed in at
     * `lastLogin`, unless the email is taken (whatever its case); None when it was.
     */
    const insertInvited = (user: Omit<NewUser, "confirmed"> & { readonly phone: string | null; readonly lastLogin: Date }) =>
      sql<UserRow>`INSERT INTO users ${
        sql.insert({
          email: user.email,
          password_hash: user.passwordHash,
          first_name: user.firstName,
          last_name: user.lastName,
          phone: user.phone,
          role: user.role,
          status: "active",
          confirmed: true,
          last_login: user.lastLogin
        })
      } ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${columns}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /**
     * Creates the system account when there is none (instances starting together: the unique
     * index lets one insert) and returns its id.
     */
    const ensureSystemAccount = Effect.gen(function*() {
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* sql`INSERT INTO users ${
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
      const [row] = yield* sql<{ id: number }>`SELECT id FROM users WHERE system`
      if (row === undefined) return yield* Effect.dieMessage("the system account could not be created: its email is taken")
      return row.id
    }).pipe(Effect.orDie, Effect.withSpan("UsersRepo.ensureSystemAccount"))

    return { findById, findByEmail, insertIfAbsent, emailTaken, insertInvited, ensureSystemAccount } as const
  })
}) {}
