/**
 * Changing the credentials of an account (issue 8 point 6): a token alone must not be enough to
 * take the account over. Changing one's own email or password needs the current password; a new
 * email takes effect only when the code sent to it comes back, and the old address is told.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { randomInt } from "node:crypto"
import { hashToken } from "../Tokens.js"
import { invalidField } from "../../Api/Errors.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { RateLimiter } from "../RateLimiter.js"
import { verifyPassword } from "./Passwords.js"
import { userColumns, type UserRow } from "./UsersRepo.js"
import { isUniqueViolation } from "../SqlErrors.js"

/** docs/spec-decisions.md "Credential changes". */
export const emailChangeRules = {
  lifetime: Duration.minutes(30),
  maxWrongAttempts: 5,
  /** Changes of email or password (each checks the current password) per user and window. */
  attemptsPerWindow: 10,
  attemptWindow: Duration.minutes(15)
} as const

export const credentialMessages = {
  currentPasswordInvalid: "is invalid",
  currentPasswordMissing: "can't be blank",
  codeInvalid: "is invalid",
  codeExpired: "has expired; request the change again",
  codeExhausted: "was tried too many times; request the change again",
  noPendingChange: "has no pending change to confirm",
  emailTaken: "has already been taken",
  tooManyAttempts: "Too many changes of email or password; try again later"
} as const

const codeHash = (userId: number, code: string) => hashToken(`email-change:${userId}:${code}`)

type ConfirmOutcome =
  | { readonly changed: UserRow }
  | { readonly refused: { readonly field: string; readonly message: string } }

const refused = (field: string, message: string): ConfirmOutcome => ({ refused: { field, message } })

export class CredentialChanges extends Effect.Service<CredentialChanges>()("app/CredentialChanges", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const limiter = yield* RateLimiter
    const mailer = yield* Mailer
    const columns = sql.literal(userColumns)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** A mail that does not go out is logged (user id only); the change itself stands. */
    const sendQuietly = (userId: number, what: string, mail: Parameters<typeof mailer.send>[0]) =>
      mailer.send(mail).pipe(Effect.catchAll((error) =>
        Effect.logWarning(`${what} not delivered`).pipe(Effect.annotateLogs({ "user.id": userId, reason: error._tag }))))

    /**
     * The caller proves they know the password of their own account. Attempts are counted first
     * (an atomic upsert), so a stolen token cannot guess the password faster than the limit.
     */
    const checkCurrentPassword = (user: UserRow, currentPassword: string | undefined) =>
      Effect.gen(function*() {
        if (currentPassword === undefined) {
          return yield* Effect.fail(invalidField("current_password", credentialMessages.currentPasswordMissing))
        }
        yield* limiter.enforce(
          `credential_change:${user.id}`,
          { limit: emailChangeRules.attemptsPerWindow, window: emailChangeRules.attemptWindow },
          credentialMessages.tooManyAttempts
        )
        if (!(yield* verifyPassword(currentPassword, user.password_hash))) {
          yield* audit.record({ actorId: user.id, action: "user.current_password_failed", targetType: "user", targetId: user.id })
          return yield* Effect.fail(invalidField("current_password", credentialMessages.currentPasswordInvalid))
        }
      }).pipe(Effect.withSpan("CredentialChanges.checkCurrentPassword", { attributes: { "user.id": user.id } }))

    /**
     * Records the wanted email (replacing any earlier request and its code), sends the code to
     * the new address and tells the old one, which can then change the password: that cancels
     * the pending change.
     */
    const requestEmailChange = (user: UserRow, newEmail: string) =>
      Effect.gen(function*() {
        const code = String(randomInt(0, 1_000_000)).padStart(6, "0")
        const requestedAt = yield* now
        const expiresAt = new Date(requestedAt.getTime() + Duration.toMillis(emailChangeRules.lifetime))
        yield* sql`INSERT INTO email_changes (user_id, new_email, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${user.id}, ${newEmail}, ${codeHash(user.id, code)}, ${expiresAt}, 0, ${requestedAt})
          ON CONFLICT (user_id) DO UPDATE SET new_email = EXCLUDED.new_email, code_hash = EXCLUDED.code_hash,
            expires_at = EXCLUDED.expires_at, failed_attempts = 0, created_at = EXCLUDED.created_at`.pipe(Effect.orDie)
        yield* audit.record({ actorId: user.id, action: "user.email_change_requested", targetType: "user", targetId: user.id })
        yield* sendQuietly(user.id, "email change code", {
          to: [newEmail],
          subject: "Confirm your new email address",
          text: [
            `Your Care Coordination email change code is ${code}. It expires in 30 minutes.`,
            "Enter it in the app (POST /v1/users/email_confirmation) to start using this address.",
            "If you did not ask for this, ignore this email: nothing changes without the code."
          ].join("\n\n")
        })
        yield* sendQuietly(user.id, "email change notice", {
          to: [user.email],
          subject: "Your account's email address is being changed",
          text: [
            `Someone signed in to your Care Coordination account asked to change its email address to ${newEmail}.`,
            "The change takes effect only when the code sent to the new address is entered.",
            "If this was not you, change your password now: that cancels the change and signs out every other session."
          ].join("\n\n")
        })
      }).pipe(Effect.withSpan("CredentialChanges.requestEmailChange", { attributes: { "user.id": user.id } }))

    /**
     * The code consumes the pending change in one `DELETE … RETURNING` (so it works once, even
     * under concurrent requests); a wrong code is counted by a conditional UPDATE that stops at
     * the limit. The transaction commits either way; the failure is raised after it.
     */
    const confirmEmailChange = (userId: number, code: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const outcome = yield* sql.withTransaction(Effect.gen(function*() {
          const [claimed] = yield* sql<{ new_email: string }>`DELETE FROM email_changes
            WHERE user_id = ${userId} AND code_hash = ${codeHash(userId, code.trim())}
              AND failed_attempts < ${emailChangeRules.maxWrongAttempts} AND expires_at > ${at}
            RETURNING new_email`
          if (claimed !== undefined) {
            const [row] = yield* sql<UserRow>`UPDATE users SET email = ${claimed.new_email}, updated_at = now()
              WHERE id = ${userId} AND deleted_at IS NULL RETURNING ${columns}`
            if (row === undefined) return refused("email", credentialMessages.noPendingChange)
            yield* audit.record({ actorId: userId, action: "user.email_change", targetType: "user", targetId: userId })
            return { changed: row } as ConfirmOutcome
          }
          const counted = yield* sql`UPDATE email_changes SET failed_attempts = failed_attempts + 1
            WHERE user_id = ${userId} AND failed_attempts < ${emailChangeRules.maxWrongAttempts} AND expires_at > ${at}
            RETURNING user_id`
          if (counted.length > 0) {
            yield* audit.record({ actorId: userId, action: "user.email_change_failed", targetType: "user", targetId: userId })
            return refused("confirmation_code", credentialMessages.codeInvalid)
          }
          // Nothing to count: say why (no write depends on this read).
          const [pending] = yield* sql<{ failed_attempts: number }>`SELECT failed_attempts FROM email_changes WHERE user_id = ${userId}`
          if (pending === undefined) return refused("email", credentialMessages.noPendingChange)
          return pending.failed_attempts >= emailChangeRules.maxWrongAttempts
            ? refused("confirmation_code", credentialMessages.codeExhausted)
            : refused("confirmation_code", credentialMessages.codeExpired)
        })).pipe(
          // Someone else took the address meanwhile: the transaction rolled back, the request stays.
          Effect.catchIf((error) => isUniqueViolation(error), () => Effect.succeed(refused("email", credentialMessages.emailTaken))),
          Effect.orDie
        )
        if ("refused" in outcome) return yield* Effect.fail(invalidField(outcome.refused.field, outcome.refused.message))
        return outcome.changed
      }).pipe(Effect.withSpan("CredentialChanges.confirmEmailChange", { attributes: { "user.id": userId } }))

    /** An admin changed the email directly: the old address hears about it. */
    const announceEmailChanged = (userId: number, oldEmail: string) =>
      sendQuietly(userId, "email change notice", {
        to: [oldEmail],
        subject: "Your account's email address was changed",
        text: [
          "An administrator changed the email address of your Care Coordination account; this address no longer signs in.",
          "If you did not expect this, contact your clinic."
        ].join("\n\n")
      })

    return { checkCurrentPassword, requestEmailChange, confirmEmailChange, announceEmailChanged } as const
  }),
  dependencies: [AuditLog.Default, RateLimiter.Default]
}) {}
