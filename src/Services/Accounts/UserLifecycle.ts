/**
 * Status moves shared by the self-service and admin endpoints: cancel, archive, unarchive and
 * permanent deletion. Each revokes sessions where it must and writes the audit trail.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { UserStatus } from "../../Domain/Accounts/User.js"
import { AuditLog } from "../AuditLog.js"
import { ProviderProfiles } from "../Providers/Profiles.js"
import { hashPassword } from "./Passwords.js"
import { Sessions } from "./Sessions.js"
import { userColumns, type UserRow } from "./UsersRepo.js"

/** What a deleted user's authored records show as their name (docs/spec-decisions.md). */
export const deletedUserName = { firstName: "Deleted", lastName: "user" } as const

export class UserLifecycle extends Effect.Service<UserLifecycle>()("app/UserLifecycle", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const sessions = yield* Sessions
    const profiles = yield* ProviderProfiles
    const columns = sql.literal(userColumns)

    /** Ends every session of the user (deactivation, archive, role change, deletion …). */
    const revokeSessions = (userId: number) => sessions.endAll(userId)

    /**
     * After a password change or reset: every session but `keep` (the one that made the change),
     * every outstanding reset token and any pending email change stop working, so whoever held
     * the old credentials keeps nothing they obtained with them.
     */
    const revokeCredentials = (userId: number, keep?: Buffer) =>
      Effect.gen(function*() {
        yield* sessions.endAll(userId, keep)
        yield* sql`DELETE FROM password_reset_tokens WHERE user_id = ${userId} AND used_at IS NULL`
        yield* sql`DELETE FROM email_changes WHERE user_id = ${userId}`
      }).pipe(Effect.orDie)

    /** Sets the status of a live (not deleted) user; None when there is no such user. */
    const setStatus = (userId: number, status: UserStatus, extra: { readonly rememberForUnarchive?: boolean } = {}) =>
      sql<UserRow>`UPDATE users SET status = ${status}, updated_at = now(),
          status_before_archive = ${extra.rememberForUnarchive
            ? sql`CASE WHEN status = 'archived' THEN status_before_archive ELSE status END`
            : sql`status_before_archive`}
        WHERE id = ${userId} AND deleted_at IS NULL RETURNING ${columns}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    const transition = (actorId: number, userId: number, action: string, status: UserStatus, remember = false) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* setStatus(userId, status, { rememberForUnarchive: remember })
        if (Option.isSome(row)) {
          if (status !== "active") yield* revokeSessions(userId)
          yield* audit.record({ actorId, action, targetType: "user", targetId: userId })
        }
        return row
      })).pipe(Effect.orDie, Effect.withSpan(`UserLifecycle.${action.split(".")[1]}`, { attributes: { "user.id": userId } }))

    /**
     * Status inactive, data kept, sessions revoked. An archived user is refused (`archived`)
     * rather than silently losing the status unarchive would restore; the condition sits in the
     * UPDATE, so a concurrent archive cannot slip between a check and the write.
     */
    const cancel = (actorId: number, userId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<UserRow>`UPDATE users SET status = 'inactive', updated_at = now()
          WHERE id = ${userId} AND deleted_at IS NULL AND status <> 'archived' RETURNING ${columns}`
        const row = rows[0]
        if (row !== undefined) {
          yield* revokeSessions(userId)
          yield* audit.record({ actorId, action: "user.cancel", targetType: "user", targetId: userId })
          return { cancelled: row } as const
        }
        // Nothing changed: say why (no write depends on this read).
        const found = yield* sql`SELECT 1 FROM users WHERE id = ${userId} AND deleted_at IS NULL`
        return found.length > 0 ? { refused: "archived" } as const : { refused: "missing" } as const
      })).pipe(Effect.orDie, Effect.withSpan("UserLifecycle.cancel", { attributes: { "user.id": userId } }))

    /** Soft delete: status archived, sign-in refused, reversible. */
    const archive = (actorId: number, userId: number) => transition(actorId, userId, "user.archive", "archived", true)

    /** Back to the status held before archiving (active when unknown); None unless archived. */
    const unarchive = (actorId: number, userId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<UserRow>`UPDATE users SET status = COALESCE(status_before_archive, 'active'),
            status_before_archive = NULL, updated_at = now()
          WHERE id = ${userId} AND deleted_at IS NULL AND status = 'archived' RETURNING ${columns}`
        const row = Option.fromNullable(rows[0])
        if (Option.isSome(row)) yield* audit.record({ actorId, action: "user.unarchive", targetType: "user", targetId: userId })
        return row
      })).pipe(Effect.orDie, Effect.withSpan("UserLifecycle.unarchive", { attributes: { "user.id": userId } }))

    /**
     * Permanent deletion: personal data and credentials are erased and cannot be restored. The
     * row itself stays so that records the user authored keep a valid author id, now shown as
     * "Deleted user".
     */
    const erase = (actorId: number, userId: number) =>
      Effect.gen(function*() {
        const unusable = yield* hashPassword(randomBytes(32).toString("hex"))
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ id: number }>`UPDATE users SET
              email = ${"deleted-user-"} || id || '@deleted.invalid',
              password_hash = ${unusable},
              first_name = ${deletedUserName.firstName}, last_name = ${deletedUserName.lastName},
              phone = NULL, date_of_birth = NULL, status = 'inactive', confirmed = false,
              last_login = NULL, status_before_archive = NULL, deleted_at = now(), updated_at = now()
            WHERE id = ${userId} AND deleted_at IS NULL RETURNING id`
          if (rows.length === 0) return false
          yield* revokeSessions(userId)
          yield* sql`DELETE FROM confirmation_codes WHERE user_id = ${userId}`
          yield* sql`DELETE FROM password_reset_tokens WHERE user_id = ${userId}`
          yield* sql`DELETE FROM email_changes WHERE user_id = ${userId}`
          // The profile stays for the records that name the provider, inactive (and hidden with the user).
          yield* profiles.deactivate(actorId, userId)
          yield* audit.record({ actorId, action: "user.delete", targetType: "user", targetId: userId })
          return true
        }))
      }).pipe(Effect.orDie, Effect.withSpan("UserLifecycle.erase", { attributes: { "user.id": userId } }))

    return { revokeSessions, revokeCredentials, cancel, archive, unarchive, erase } as const
  }),
  dependencies: [AuditLog.Default, Sessions.Default, ProviderProfiles.Default]
}) {}
