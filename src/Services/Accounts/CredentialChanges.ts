/**
 * Changing the credentials of an account: a token alone must not be enough to take the account
 * over. Changing one's own email or password needs the current password; a new email takes
 * effect only when the code sent to it comes back, and the old address is told.
 */
import { Duration, Effect, Option } from "effect"
import { randomInt } from "node:crypto"
import { hashToken } from "../Tokens.js"
import { invalidField } from "../../Api/Errors.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { RateLimiter } from "../RateLimiter.js"
import { makeTransaction } from "../Repository.js"
import * as Time from "../Time.js"
import { EmailChangesRepo } from "./EmailChangesRepo.js"
import { verifyPassword } from "./Passwords.js"
import { type UserRow, UsersRepo } from "./UsersRepo.js"

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
  tooManyAttempts: "Too many changes of email or password; try again later"
} as const

const codeHash = (userId: number, code: string) => hashToken(`email-change:${userId}:${code}`)

type ConfirmOutcome =
  | { readonly changed: UserRow }
  | { readonly refused: { readonly field: string; readonly message: string } }

const refused = (field: string, message: string): ConfirmOutcome => ({ refused: { field, message } })

export class CredentialChanges extends Effect.Service<CredentialChanges>()("app/CredentialChanges", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const emailChanges = yield* EmailChangesRepo
    const audit = yield* AuditLog
    const limiter = yield* RateLimiter
    const mailer = yield* Mailer
    const transaction = yield* makeTransaction

    /** A mail that does not go out is logged (user id only); the change itself stands. */
    const sendQuietly = (userId: number, what: string, mail: Parameters<typeof mailer.send>[0]) =>
      mailer.send(mail).pipe(Effect.catchAll((error) =>
        Effect.logWarning(`${what} not delivered`).pipe(Effect.annotateLogs({ "user.id": userId, reason: error._tag }))))

    /**
     * The caller proves they know the password of their own account. Attempts are counted first
     * (an atomic upsert), so a stolen token cannot guess the password faster than the limit.
     */
    const checkCurrentPassword = Effect.fn("CredentialChanges.checkCurrentPassword")(function*(user: UserRow, currentPassword: string | undefined) {
      yield* Effect.annotateCurrentSpan({ "user.id": user.id })
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
    })

    /**
     * Records the wanted email (replacing any earlier request and its code), sends the code to
     * the new address and tells the old one, which can then change the password: that cancels
     * the pending change.
     */
    const requestEmailChange = Effect.fn("CredentialChanges.requestEmailChange")(function*(user: UserRow, newEmail: string) {
      yield* Effect.annotateCurrentSpan({ "user.id": user.id })
      const code = String(randomInt(0, 1_000_000)).padStart(6, "0")
      const requestedAt = yield* Time.now
      const expiresAt = new Date(requestedAt.getTime() + Duration.toMillis(emailChangeRules.lifetime))
      yield* emailChanges.upsert({ userId: user.id, newEmail, codeHash: codeHash(user.id, code), expiresAt, createdAt: requestedAt })
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
    })

    /**
     * The code consumes the pending change in one `DELETE … RETURNING` (so it works once, even
     * under concurrent requests); a wrong code is counted by a conditional UPDATE that stops at
     * the limit. The transaction commits either way; the failure is raised after it.
     */
    const confirmEmailChange = Effect.fn("CredentialChanges.confirmEmailChange")(function*(userId: number, code: string) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const attempt = { userId, maxWrongAttempts: emailChangeRules.maxWrongAttempts, at: yield* Time.now }
      // A taken address (someone else took it meanwhile) fails the transaction, which rolls
      // back: the request stays.
      const outcome = yield* transaction(Effect.gen(function*() {
        const claimed = yield* emailChanges.claim(attempt, codeHash(userId, code.trim()))
        if (Option.isSome(claimed)) {
          const row = yield* users.changeEmail(userId, claimed.value)
          if (Option.isNone(row)) return refused("email", credentialMessages.noPendingChange)
          yield* audit.record({ actorId: userId, action: "user.email_change", targetType: "user", targetId: userId })
          return { changed: row.value } as ConfirmOutcome
        }
        if (yield* emailChanges.countWrong(attempt)) {
          yield* audit.record({ actorId: userId, action: "user.email_change_failed", targetType: "user", targetId: userId })
          return refused("confirmation_code", credentialMessages.codeInvalid)
        }
        // Nothing to count: say why (no write depends on this read).
        const failedAttempts = yield* emailChanges.failedAttempts(userId)
        if (Option.isNone(failedAttempts)) return refused("email", credentialMessages.noPendingChange)
        return failedAttempts.value >= emailChangeRules.maxWrongAttempts
          ? refused("confirmation_code", credentialMessages.codeExhausted)
          : refused("confirmation_code", credentialMessages.codeExpired)
      }))
      if ("refused" in outcome) return yield* Effect.fail(invalidField(outcome.refused.field, outcome.refused.message))
      return outcome.changed
    })

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
  dependencies: [AuditLog.Default, RateLimiter.Default, UsersRepo.Default, EmailChangesRepo.Default]
}) {}
