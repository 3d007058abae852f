/**
 * Self-service accounts (general §4.1): registration with a confirmation code, confirmation,
 * password resets, profile updates, and the sign-in rules (lockout, unconfirmed, archived).
 */
import { Duration, Effect, Either, Option } from "effect"
import {
  forbidden, invalid, invalidField, messages, notFound, tooManyRequests, unauthorized
} from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import type { RegisterRequest, UpdateUserRequest } from "../../Api/Accounts/Users.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { seesContactDetails, UserSummary } from "../../Domain/Accounts/User.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ProviderProfiles } from "../Providers/ProviderProfiles.js"
import { Mailer, type MailError } from "../Mailer.js"
import { dummyHash, hashPassword, verifyPassword } from "./Passwords.js"
import { addressLimits } from "../AddressLimits.js"
import { type Limit, RateLimiter } from "../RateLimiter.js"
import { Telephony, type TelephonyError } from "../Telephony.js"
import { hashToken, newToken } from "../Tokens.js"
import { ConfirmationCodes } from "./ConfirmationCodes.js"
import { CredentialChanges } from "./CredentialChanges.js"
import { Sessions } from "./Sessions.js"
import { accountLimits, SignInThrottle, waitText } from "./SignInThrottle.js"
import { UserLifecycle } from "./UserLifecycle.js"
import { canActForUser, canManageAccount, isAdmin } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import * as Time from "../Time.js"
import { PasswordResetTokensRepo } from "./PasswordResetTokensRepo.js"
import { emailTaken, toUser, type UserChange, UsersRepo, type UserRow } from "./UsersRepo.js"

export const passwordResetLifetime = Duration.hours(1)

export const accountMessages = {
  invalidCode: "Invalid confirmation code",
  expiredCode: "Confirmation code has expired; request a new one",
  tooManyCodeAttempts: (wait: string) => `Too many wrong confirmation codes; request a new one in ${wait}`,
  unconfirmed: "Please confirm your account with the code we sent you before signing in",
  archived: "This account has been archived",
  notActive: "This account is not active",
  lockedOut: (wait: string) => `Too many failed sign-in attempts; try again in ${wait}`,
  tooManyRequests: "Too many requests; try again later",
  resendTooSoon: "A code was sent less than a minute ago; wait before requesting another",
  codeSent: "Confirmation code sent",
  resetRequested: "If an account exists for that email, password reset instructions have been sent",
  passwordReset: "Password has been reset"
} as const

/** Phone as E.164, or a 422 naming the field. */
const phoneField = (phone: string | null | undefined) => {
  if (phone === undefined) return Effect.succeed(undefined)
  if (phone === null || phone.trim() === "") return Effect.succeed(null)
  return Option.match(normalizePhone(phone), {
    onNone: () => Effect.fail(invalidField("phone", "is invalid")),
    onSome: (e164) => Effect.succeed(e164)
  })
}

const toUserSummary = (row: UserRow): UserSummary =>
  UserSummary.make({ id: row.id, first_name: row.first_name, last_name: row.last_name, role: row.role, active: row.status === "active" }, true)

export class Accounts extends Effect.Service<Accounts>()("app/Accounts", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const resetTokens = yield* PasswordResetTokensRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const lifecycle = yield* UserLifecycle
    const limiter = yield* RateLimiter
    const telephony = yield* Telephony
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const perAddress = addressLimits(config.addressLimits)
    const sessions = yield* Sessions
    const credentials = yield* CredentialChanges
    const profiles = yield* ProviderProfiles
    const now = Time.now

    const codes = yield* ConfirmationCodes
    const signInThrottle = yield* SignInThrottle

    /** A per-address or per-phone limit: one hit counted, 429 (with Retry-After) beyond it. */
    const limit = (bucket: string, rule: Limit) =>
      Effect.asVoid(limiter.enforce(bucket, rule, accountMessages.tooManyRequests))

    /**
     * Counts a code about to be texted against the phone's limit. Called inside the transaction
     * that stores the code, so a refusal leaves the user's current code in place.
     */
    const limitTexts = (phone: string | null) => phone === null ? Effect.void : limit(`confirmation_sms:${phone}`, accountLimits.codesPerPhone)

    /** Sends a stored code: SMS when a phone is known, else email. */
    const deliverCode = Effect.fn("Accounts.deliverCode")(function*(user: UserRow, code: string) {
      yield* Effect.annotateCurrentSpan({ "user.id": user.id })
      const text = `Your Care Coordination confirmation code is ${code}. It expires in 15 minutes.`
      const delivery: Effect.Effect<void, MailError | TelephonyError> = user.phone
        ? telephony.sendSms({ to: user.phone, body: text }).pipe(Effect.asVoid)
        : mailer.send({ to: [user.email], subject: "Your confirmation code", text }).pipe(Effect.asVoid)
      // The account exists either way; a failed delivery is logged and the user can ask again.
      yield* delivery.pipe(Effect.catchAll((error) =>
        Effect.logWarning("confirmation code not delivered").pipe(
          Effect.annotateLogs({ "user.id": user.id, reason: error._tag })
        )))
    })

    const register = Effect.fn("Accounts.register")(function*(clientAddress: string, request: RegisterRequest) {
      yield* limit(`register:${clientAddress}`, perAddress.registration)
      const phone = yield* phoneField(request.user.phone)
      const email = normalizeEmail(request.user.email)
      if (Option.isSome(yield* users.findByEmail(email))) return yield* Effect.fail(emailTaken())
      const passwordHash = yield* hashPassword(request.user.password)
      const { code, row } = yield* transaction(Effect.gen(function*() {
        // Concurrent registrations of one email wait on the unique index; the losers get no row.
        const inserted = yield* users.insertIfAbsent({
          email,
          password_hash: passwordHash,
          first_name: request.user.first_name.trim(),
          last_name: request.user.last_name.trim(),
          phone: phone ?? null,
          date_of_birth: request.user.date_of_birth ?? null,
          language: request.user.language ?? "en",
          role: "parent",
          confirmed: false,
          template: request.template ?? false,
          clinical: request.clinical ?? false,
          native_signup: request.native_signup ?? false
        })
        if (Option.isNone(inserted)) return yield* Effect.fail(emailTaken())
        const created = inserted.value
        const code = yield* codes.create(created.id)
        yield* limitTexts(created.phone)
        yield* audit.record({ actorId: created.id, action: "user.register", targetType: "user", targetId: created.id })
        return { code, row: created }
      }))
      yield* deliverCode(row, code)
      return toUser(row)
    })

    /**
     * Checks a code. The transaction commits in every case, so a wrong attempt is counted even
     * though the request fails; the failure is raised after it.
     */
    const confirm = Effect.fn("Accounts.confirm")(function*(userId: number, code: string) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const outcome = yield* transaction(Effect.gen(function*() {
        const checked = yield* codes.check(userId, code)
        switch (checked._tag) {
          case "Confirmed": {
            const row = yield* users.confirm(userId)
            if (Option.isNone(row)) return { failure: accountMessages.invalidCode } as const
            yield* audit.record({ actorId: userId, action: "user.confirm", targetType: "user", targetId: userId })
            return { confirmed: { id: userId, email: row.value.email } } as const
          }
          case "Wrong":
            yield* audit.record({ actorId: null, action: "user.confirm_failed", targetType: "user", targetId: userId })
            return { failure: accountMessages.invalidCode } as const
          case "NoCode":
            return { failure: accountMessages.invalidCode } as const
          case "Expired":
            return { failure: accountMessages.expiredCode } as const
          case "TooManyTries":
            return { failure: accountMessages.tooManyCodeAttempts(waitText(checked.retryInMs)) } as const
        }
      }))
      if ("failure" in outcome) return yield* Effect.fail(unauthorized(outcome.failure))
      return outcome.confirmed
    })

    const resendConfirmation = Effect.fn("Accounts.resendConfirmation")(function*(
      clientAddress: string,
      caller: Option.Option<Caller>,
      body: { readonly user_id?: number | undefined; readonly email?: string | undefined }
    ) {
      const targetId = Option.match(caller, { onNone: () => body.user_id, onSome: (c) => body.user_id ?? c.id })
      if (targetId === undefined) return yield* Effect.fail(invalidField("user_id", "can't be blank"))
      if (Option.isSome(caller) && !canActForUser(caller.value, targetId)) {
        return yield* Effect.fail(forbidden(messages.unauthorized))
      }
      if (Option.isNone(caller)) yield* limit(`resend_confirmation:${clientAddress}`, perAddress.anonymousResend)
      const row = yield* users.findById(targetId)
      if (Option.isNone(caller)) {
        // Without a token the caller proves who they are with the email as well.
        const matches = Option.isSome(row) && body.email !== undefined &&
          normalizeEmail(row.value.email) === normalizeEmail(body.email)
        if (!matches) return yield* Effect.fail(unauthorized())
      }
      if (Option.isNone(row)) return yield* Effect.fail(notFound("User"))
      if (row.value.confirmed) return yield* Effect.fail(invalidField("user", "is already confirmed"))
      const code = yield* transaction(Effect.gen(function*() {
        // Only the request whose upsert returns a row sends: one code a minute, however many ask.
        const fresh = yield* codes.replace(targetId)
        if (Either.isLeft(fresh)) return yield* Effect.fail(tooManyRequests(accountMessages.resendTooSoon, fresh.left))
        yield* limitTexts(row.value.phone)
        yield* audit.record({
          actorId: Option.getOrNull(Option.map(caller, (c) => c.id)),
          action: "user.resend_confirmation",
          targetType: "user",
          targetId
        })
        return fresh.right
      }))
      yield* deliverCode(row.value, code)
      return accountMessages.codeSent
    })

    const emailHasAccount = Effect.fn("Accounts.emailHasAccount")(function*(clientAddress: string, email: string) {
      yield* limit(`email_has_account:${clientAddress}`, perAddress.emailCheck)
      return Option.isSome(yield* users.findByEmail(email.trim()))
    })

    /**
     * Sign-in rules: the per-address limit and the per-email back-off are decided (and the attempt
     * counted) before the password is checked; then password, then account state.
     */
    const signIn = Effect.fn("Accounts.signIn")(function*(clientAddress: string, email: string, password: string) {
      const throttled = (message: string, wait: Duration.Duration) =>
        audit.record({ actorId: null, action: "user.sign_in_locked", targetType: "user", targetId: null }).pipe(
          Effect.zipRight(Effect.fail(tooManyRequests(message, wait)))
        )
      const address = yield* limiter.take(`sign_in:${clientAddress}`, perAddress.signIn)
      if (!address.allowed) return yield* throttled(accountMessages.tooManyRequests, address.retryAfter)
      const wait = yield* signInThrottle.claim(email)
      if (Option.isSome(wait)) return yield* throttled(accountMessages.lockedOut(waitText(wait.value)), Duration.millis(wait.value))
      const row = yield* users.findByEmail(email)
      const matches = yield* verifyPassword(password, Option.match(row, { onNone: () => dummyHash, onSome: (r) => r.password_hash }))
      if (Option.isNone(row) || !matches) {
        // The attempt stays counted by the address limit and the back-off.
        yield* audit.record({
          actorId: null,
          action: "user.sign_in_failed",
          targetType: "user",
          targetId: Option.getOrNull(Option.map(row, (r) => r.id))
        })
        return yield* Effect.fail(unauthorized(messages.invalidCredentials))
      }
      // The right password: not a guess, so it neither slows the account nor uses up the address.
      yield* signInThrottle.succeeded(email)
      yield* address.giveBack
      const user = row.value
      if (user.status === "archived") return yield* Effect.fail(forbidden(accountMessages.archived))
      if (user.status !== "active") return yield* Effect.fail(forbidden(accountMessages.notActive))
      if (!user.confirmed) return yield* Effect.fail(forbidden(accountMessages.unconfirmed))
      const token = newToken()
      const signedInAt = yield* now
      const updated = yield* transaction(Effect.gen(function*() {
        yield* sessions.start(hashToken(token), user.id)
        const updatedRow = yield* users.recordSignIn(user.id, signedInAt)
        yield* audit.record({ actorId: user.id, action: "user.sign_in", targetType: "user", targetId: user.id })
        return updatedRow
      }))
      return { token, user: toUser(updated) }
    })

    /** Ends this session, or with `all` every session of the caller (a lost or shared device). */
    const signOut = Effect.fn("Accounts.signOut")(function*(caller: Caller, all = false) {
      yield* Effect.annotateCurrentSpan({ "sign_out.all": all })
      yield* all ? sessions.endAll(caller.id) : sessions.end(Buffer.from(caller.tokenHash, "hex"))
      yield* audit.record({ actorId: caller.id, action: all ? "user.sign_out_all" : "user.sign_out", targetType: "user", targetId: caller.id })
    })

    const requestPasswordReset = Effect.fn("Accounts.requestPasswordReset")(function*(clientAddress: string, email: string) {
      yield* limit(`password_reset:${clientAddress}`, perAddress.passwordReset)
      const row = yield* users.findByEmail(email.trim())
      if (Option.isNone(row)) return accountMessages.resetRequested
      const token = newToken()
      const expiresAt = new Date((yield* now).getTime() + Duration.toMillis(passwordResetLifetime))
      yield* resetTokens.insert(hashToken(token), row.value.id, expiresAt)
      yield* audit.record({ actorId: null, action: "user.password_reset_requested", targetType: "user", targetId: row.value.id })
      yield* mailer.send({
        to: [row.value.email],
        subject: "Reset your password",
        text: [
          "Someone asked to reset the password of your Care Coordination account.",
          `Your reset token: ${token}`,
          `Reset link: ${config.publicBaseUrl}/v1/users/passwords/validate?token=${encodeURIComponent(token)}`,
          "It can be used once, within 1 hour. If you did not ask for this, ignore this email."
        ].join("\n\n")
      }).pipe(Effect.catchAll((error) =>
        Effect.logWarning("password reset email not delivered").pipe(
          Effect.annotateLogs({ "user.id": row.value.id, reason: error._tag })
        )))
      return accountMessages.resetRequested
    })

    const liveResetToken = (token: string) => Effect.flatMap(now, (at) => resetTokens.findLive(hashToken(token), at))

    const validatePasswordReset = Effect.fn("Accounts.validatePasswordReset")((token: string) =>
      Effect.map(liveResetToken(token), Option.isSome)
    )

    const resetPassword = Effect.fn("Accounts.resetPassword")(function*(token: string, password: string) {
      const passwordHash = yield* hashPassword(password)
      const at = yield* now
      const userId = yield* transaction(Effect.gen(function*() {
        // Claiming the row first makes the token single-use even under concurrent requests.
        const claimed = yield* resetTokens.claim(hashToken(token), at)
        if (Option.isNone(claimed)) return claimed
        yield* users.setPassword(claimed.value, passwordHash)
        yield* lifecycle.revokeCredentials(claimed.value)
        yield* audit.record({ actorId: claimed.value, action: "user.password_reset", targetType: "user", targetId: claimed.value })
        return claimed
      }))
      if (Option.isNone(userId)) return yield* Effect.fail(invalidField("token", "is invalid or has expired"))
      return accountMessages.passwordReset
    })

    /**
     * Staff see every user; a parent sees only themself. Support and billing see others as
     * summaries (names and roles, no contact details or date of birth).
     */
    const list = Effect.fn("Accounts.list")(function*(caller: Caller, page: PageRequest) {
      const { pagination, rows } = yield* users.visibleList(caller, page)
      const shown = rows.map((row) => seesContactDetails(caller, row.id) ? toUser(row) : toUserSummary(row))
      return { users: shown, pagination }
    })

    /**
     * Self or admin; only an admin may change role, active or confirmed. Changing one's own email
     * or password needs the current password, and a new email of one's own waits for the code
     * sent to it (`pendingEmail`); an admin changes another user's directly (the old address is
     * told). A password change ends the user's other sessions, reset tokens and pending email
     * change; a role change or deactivation ends all their sessions.
     */
    const update = Effect.fn("Accounts.update")(function*(caller: Caller, userId: number, request: UpdateUserRequest) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      if (!canManageAccount(caller, userId)) return yield* Effect.fail(forbidden(messages.unauthorized))
      const fields = request.user
      const admin = isAdmin(caller)
      if (!admin && (fields.role !== undefined || fields.active !== undefined || fields.confirmed !== undefined)) {
        return yield* Effect.fail(forbidden("Only an admin can change role, active or confirmed"))
      }
      if (admin && caller.id === userId && ((fields.role !== undefined && fields.role !== caller.role) || fields.active === false)) {
        return yield* Effect.fail(invalid({ [fields.role !== undefined ? "role" : "active"]: ["cannot be changed on your own account"] }))
      }
      const current = yield* users.findById(userId)
      if (Option.isNone(current)) return yield* Effect.fail(notFound("User"))
      const wasActive = current.value.status === "active"
      const activeChanges = fields.active !== undefined && fields.active !== wasActive
      if (activeChanges && current.value.status === "archived") {
        return yield* Effect.fail(invalidField("active", "cannot be changed while the user is archived"))
      }
      const phone = yield* phoneField(fields.phone)
      const ownAccount = caller.id === userId
      const newEmail = fields.email === undefined ? undefined : normalizeEmail(fields.email)
      const emailChanges = newEmail !== undefined && newEmail !== normalizeEmail(current.value.email)
      // Before any other answer about the email, so a stolen token cannot even probe for accounts.
      if (ownAccount && (emailChanges || fields.password !== undefined)) {
        yield* credentials.checkCurrentPassword(current.value, fields.current_password)
      }
      if (fields.email !== undefined) {
        const owner = yield* users.findByEmail(fields.email)
        if (Option.isSome(owner) && owner.value.id !== userId) return yield* Effect.fail(emailTaken())
      }
      const passwordHash = fields.password === undefined ? undefined : yield* hashPassword(fields.password)
      // One's own new address waits for its code; a change of case only is applied at once.
      const pendingEmail = ownAccount && emailChanges ? newEmail : undefined
      const change: UserChange = {
        email: pendingEmail === undefined ? newEmail : undefined,
        password_hash: passwordHash,
        first_name: fields.first_name?.trim(),
        last_name: fields.last_name?.trim(),
        phone,
        date_of_birth: fields.date_of_birth,
        language: fields.language,
        role: fields.role,
        confirmed: fields.confirmed,
        template: request.template,
        clinical: request.clinical,
        native_signup: request.native_signup,
        // Only a change of the boolean moves the status, so pending or suspended users keep theirs.
        status: activeChanges ? (fields.active ? "active" : "inactive") : undefined
      }
      const unchanged = Object.values(change).every((value) => value === undefined)
      const row = yield* transaction(Effect.gen(function*() {
        // A concurrent change may take the email after the check above: still a 422 (the
        // repository's), not a defect.
        const updated = unchanged ? current.value : yield* users.update(userId, change)
        const roleChanges = fields.role !== undefined && fields.role !== current.value.role
        if (passwordHash !== undefined) {
          // One's own change keeps the session making it (role and active of one's own are
          // refused above); an admin's change of another user's password ends all of theirs.
          yield* lifecycle.revokeCredentials(userId, ownAccount ? Buffer.from(caller.tokenHash, "hex") : undefined)
          yield* audit.record({ actorId: caller.id, action: "user.password_change", targetType: "user", targetId: userId })
        } else if ((activeChanges && fields.active === false) || roleChanges) {
          yield* lifecycle.revokeSessions(userId)
        }
        // The provider profile follows the role in this transaction; idempotent, so a role read
        // before a concurrent change cannot leave the profile behind the committed role.
        if (fields.role !== undefined) yield* profiles.followRole(caller.id, userId, updated.role)
        yield* audit.record({ actorId: caller.id, action: "user.update", targetType: "user", targetId: userId })
        if (fields.role !== undefined && fields.role !== current.value.role) {
          yield* audit.record({ actorId: caller.id, action: "user.role_change", targetType: "user", targetId: userId })
        }
        if (activeChanges) {
          yield* audit.record({ actorId: caller.id, action: "user.active_change", targetType: "user", targetId: userId })
        }
        return updated
      }))
      if (pendingEmail !== undefined) yield* credentials.requestEmailChange(row, pendingEmail)
      if (!ownAccount && emailChanges) yield* credentials.announceEmailChanged(userId, current.value.email)
      return { user: toUser(row), pendingEmail: Option.fromNullable(pendingEmail) }
    })

    /**
     * Self or admin. An admin cannot cancel their own account (it could lock the last admin out,
     * as archive and delete already refuse), and an archived user is not cancelled.
     */
    const cancel = (caller: Caller, userId: number) =>
      Effect.gen(function*() {
        if (!canManageAccount(caller, userId)) return yield* Effect.fail(forbidden(messages.unauthorized))
        if (isAdmin(caller) && caller.id === userId) {
          return yield* Effect.fail(invalidField("id", "cannot cancel your own account"))
        }
        const outcome = yield* lifecycle.cancel(caller.id, userId)
        if ("cancelled" in outcome) return toUser(outcome.cancelled)
        return yield* Effect.fail(outcome.refused === "archived"
          ? invalidField("status", "cannot be cancelled while the user is archived")
          : notFound("User"))
      })

    const erase = (caller: Caller, userId: number) =>
      Effect.gen(function*() {
        if (caller.id === userId) return yield* Effect.fail(invalidField("id", "cannot delete your own account"))
        if (!(yield* lifecycle.erase(caller.id, userId))) return yield* Effect.fail(notFound("User"))
      })

    return {
      register, confirm, resendConfirmation, emailHasAccount, signIn, signOut,
      requestPasswordReset, validatePasswordReset, resetPassword, list, update, cancel, erase,
      confirmEmailChange: (caller: Caller, code: string) => Effect.map(credentials.confirmEmailChange(caller.id, code), toUser)
    } as const satisfies Record<string, unknown>
  }),
  dependencies: [
    UsersRepo.Default, PasswordResetTokensRepo.Default, AuditLog.Default, UserLifecycle.Default, RateLimiter.Default, Sessions.Default, CredentialChanges.Default,
    ConfirmationCodes.Default, SignInThrottle.Default, ProviderProfiles.Default
  ]
}) {}
