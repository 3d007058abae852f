/**
 * Status moves shared by the self-service and admin endpoints: cancel, archive, unarchive and
 * permanent deletion. Each revokes sessions where it must and writes the audit trail.
 */
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { UserStatus } from "../../Domain/Accounts/User.js"
import { AuditLog } from "../AuditLog.js"
import { ProviderProfiles } from "../Providers/ProviderProfiles.js"
import { hashPassword } from "./Passwords.js"
import { makeTransaction } from "../Repository.js"
import { ConfirmationCodesRepo } from "./ConfirmationCodesRepo.js"
import { EmailChangesRepo } from "./EmailChangesRepo.js"
import { PasswordResetTokensRepo } from "./PasswordResetTokensRepo.js"
import { Sessions } from "./Sessions.js"
import { UsersRepo } from "./UsersRepo.js"
import { annotatedOutside } from "../Spans.js"

/** What a deleted user's authored records show as their name (docs/spec-decisions.md). */
export const deletedUserName = { firstName: "Deleted", lastName: "user" } as const

export class UserLifecycle extends Effect.Service<UserLifecycle>()("app/UserLifecycle", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const resetTokens = yield* PasswordResetTokensRepo
    const emailChanges = yield* EmailChangesRepo
    const codes = yield* ConfirmationCodesRepo
    const audit = yield* AuditLog
    const sessions = yield* Sessions
    const profiles = yield* ProviderProfiles
    const transaction = yield* makeTransaction

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
        yield* resetTokens.deleteOf(userId, { unusedOnly: true })
        yield* emailChanges.deleteOf(userId)
      })

    const transition = (actorId: number, userId: number, action: string, status: UserStatus, remember = false) =>
      transaction(Effect.gen(function*() {
        const row = yield* users.setStatus(userId, status, remember)
        if (Option.isSome(row)) {
          if (status !== "active") yield* revokeSessions(userId)
          yield* audit.record({ actorId, action, targetType: "user", targetId: userId })
        }
        return row
      })).pipe(Effect.withSpan(`UserLifecycle.${action.split(".")[1]}`, { attributes: { "user.id": userId } }))

    /**
     * Status inactive, data kept, sessions revoked. An archived user is refused (`archived`)
     * rather than silently losing the status unarchive would restore; the condition sits in the
     * UPDATE, so a concurrent archive cannot slip between a check and the write.
     */
    const cancel = Effect.fn("UserLifecycle.cancel")(function*(actorId: number, userId: number) {
      const row = yield* users.cancel(userId)
      if (Option.isSome(row)) {
        yield* revokeSessions(userId)
        yield* audit.record({ actorId, action: "user.cancel", targetType: "user", targetId: userId })
        return { cancelled: row.value } as const
      }
      // Nothing changed: say why (no write depends on this read).
      return (yield* users.exists(userId)) ? { refused: "archived" } as const : { refused: "missing" } as const
    },
      transaction,
      annotatedOutside((_actorId: number, userId: number) => ({ "user.id": userId }))
    )

    /** Soft delete: status archived, sign-in refused, reversible. */
    const archive = (actorId: number, userId: number) => transition(actorId, userId, "user.archive", "archived", true)

    /** Back to the status held before archiving (active when unknown); None unless archived. */
    const unarchive = Effect.fn("UserLifecycle.unarchive")(function*(actorId: number, userId: number) {
      const row = yield* users.unarchive(userId)
      if (Option.isSome(row)) yield* audit.record({ actorId, action: "user.unarchive", targetType: "user", targetId: userId })
      return row
    },
      transaction,
      annotatedOutside((_actorId: number, userId: number) => ({ "user.id": userId }))
    )

    /**
     * Permanent deletion: personal data and credentials are erased and cannot be restored. The
     * row itself stays so that records the user authored keep a valid author id, now shown as
     * "Deleted user".
     */
    const erase = Effect.fn("UserLifecycle.erase")(function*(actorId: number, userId: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const unusable = yield* hashPassword(randomBytes(32).toString("hex"))
      return yield* transaction(Effect.gen(function*() {
        if (!(yield* users.erase(userId, unusable, deletedUserName))) return false
        yield* revokeSessions(userId)
        yield* codes.deleteOf(userId)
        yield* resetTokens.deleteOf(userId, { unusedOnly: false })
        yield* emailChanges.deleteOf(userId)
        // The profile stays for the records that name the provider, inactive (and hidden with the user).
        yield* profiles.deactivate(actorId, userId)
        yield* audit.record({ actorId, action: "user.delete", targetType: "user", targetId: userId })
        return true
      }))
    })

    return { revokeSessions, revokeCredentials, cancel, archive, unarchive, erase } as const
  }),
  dependencies: [
    AuditLog.Default, Sessions.Default, ProviderProfiles.Default, UsersRepo.Default, PasswordResetTokensRepo.Default,
    EmailChangesRepo.Default, ConfirmationCodesRepo.Default
  ]
}) {}
