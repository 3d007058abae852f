/**
 * Provider invites (general §4.9): an admin invites an email; the invitee gets a link with a
 * single-use token (32 random bytes, stored as SHA-256, valid 7 days) and accepts it with a
 * password, which creates a confirmed, active account with the invited role and its provider
 * profile, and signs them in.
 *
 * Concurrency is settled by PostgreSQL: one pending invite per address is a partial unique index
 * and a new invite is an upsert on it (the old token is overwritten, so its link stops working);
 * acceptance claims the invite with one conditional `UPDATE … WHERE status = 'pending' AND
 * expires_at > now RETURNING`, so of two concurrent accepts the second finds nothing to claim.
 */
import { Duration, Effect, Option } from "effect"
import { invalidField, messages, notFound, ServiceUnavailable, unavailableRetryAfterSeconds } from "../../Api/Errors.js"
import type { CreateInviteRequest } from "../../Api/Providers/Invites.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { InviteSummary, ProviderInvite } from "../../Domain/Providers/Provider.js"
import { hashPassword } from "../Accounts/Passwords.js"
import { Sessions } from "../Accounts/Sessions.js"
import { toUser, UsersRepo } from "../Accounts/UsersRepo.js"
import { addressLimits } from "../AddressLimits.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { RateLimiter } from "../RateLimiter.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { hashToken, newToken } from "../Tokens.js"
import { ProviderProfiles } from "./ProviderProfiles.js"
import { type InviteRow, ProviderInvitesRepo } from "./ProviderInvitesRepo.js"
import { providerMessages } from "./Providers.js"
import { ProvidersRepo } from "./ProvidersRepo.js"

export const inviteLifetime = Duration.days(7)

/** The API's own page for a link when no frontend is configured. */
export const apiInvitePath = "/v1/admin/clinic/providers/invites/validate"

/** The link of an invite email: `base?token=…` (or `&token=…` when the base has a query). */
export const inviteLink = (base: string, token: string): string =>
  `${base}${base.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`

const toInvite = (row: InviteRow): ProviderInvite =>
  ProviderInvite.make({
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    role: row.role,
    supervisor_id: row.supervisor_id,
    status: row.status,
    expires_at: row.expires_at,
    created_at: row.created_at
  }, true)

const inviteNotFound = notFound("Invite")
const emailTaken = invalidField("email", "has already been taken")

export class ProviderInvites extends Effect.Service<ProviderInvites>()("app/ProviderInvites", {
  effect: Effect.gen(function*() {
    const invites = yield* ProviderInvitesRepo
    const providers = yield* ProvidersRepo
    const users = yield* UsersRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const perAddress = addressLimits(config.addressLimits)
    const limiter = yield* RateLimiter
    const sessions = yield* Sessions
    const profiles = yield* ProviderProfiles
    const linkBase = Option.getOrElse(config.inviteUrlBase, () => `${config.publicBaseUrl}${apiInvitePath}`)

    const create = Effect.fn("ProviderInvites.create")(function*(actorId: number, input: CreateInviteRequest["invite"]) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const email = normalizeEmail(input.email)
      const supervisorId = input.supervisor_id ?? null
      if (yield* users.emailInUse(email)) return yield* Effect.fail(emailTaken)
      if (supervisorId !== null) {
        const active = yield* providers.supervisorActiveOf(supervisorId)
        if (Option.isNone(active)) return yield* Effect.fail(invalidField("supervisor_id", providerMessages.supervisorMissing))
        if (!active.value) return yield* Effect.fail(invalidField("supervisor_id", providerMessages.supervisorInactive))
      }
      const token = newToken()
      const at = yield* now
      const expiresAt = new Date(at.getTime() + Duration.toMillis(inviteLifetime))
      return yield* transaction(Effect.gen(function*() {
        // Concurrent invites to one address queue on the pending row; the last one's token is the one that works.
        const row = yield* invites.upsertPending({
          email,
          firstName: input.first_name.trim(),
          lastName: input.last_name.trim(),
          role: input.role,
          supervisorId,
          tokenHash: hashToken(token),
          invitedBy: actorId,
          expiresAt,
          at
        })
        yield* audit.record({ actorId, action: row.inserted ? "provider_invite.create" : "provider_invite.replace", targetType: "provider_invite", targetId: row.id })
        // Sent before the commit: an invite whose email could not go out is not kept (the admin
        // gets a 503 and tries again), and a link that was mailed is the one stored.
        yield* mailer.send({
          to: [email],
          subject: "You're invited to Care Coordination",
          text: [
            `Hello ${input.first_name.trim()},`,
            `You have been invited to join Care Coordination as a ${input.role}.`,
            `Accept the invite and choose your password: ${inviteLink(linkBase, token)}`,
            "The link works once, within 7 days. If you did not expect this invite, ignore this email."
          ].join("\n\n")
        }).pipe(Effect.catchTag("MailError", (error) =>
          Effect.logWarning("provider invite email not delivered").pipe(
            Effect.annotateLogs({ "provider_invite.id": row.id, reason: error._tag }),
            Effect.zipRight(Effect.fail(new ServiceUnavailable({ errors: messages.unavailable, retryAfterSeconds: unavailableRetryAfterSeconds })))
          )))
        return toInvite(row)
      }))
    })

    const validate = Effect.fn("ProviderInvites.validate")(function*(clientAddress: string, token: string) {
      yield* limiter.enforce(`invite_validate:${clientAddress}`, perAddress.providerInvite)
      const found = yield* invites.findPending(hashToken(token), yield* now)
      if (Option.isNone(found)) return yield* Effect.fail(inviteNotFound)
      const row = found.value
      return InviteSummary.make({ email: row.email, first_name: row.first_name, last_name: row.last_name, role: row.role, expires_at: row.expires_at }, true)
    })

    const accept = Effect.fn("ProviderInvites.accept")(function*(
      clientAddress: string,
      input: { readonly token: string; readonly password: string; readonly phone?: string | null | undefined }
    ) {
      yield* limiter.enforce(`invite_accept:${clientAddress}`, perAddress.providerInvite)
      const phoneText = input.phone?.trim() ?? ""
      const phone = phoneText === "" ? null : Option.getOrNull(normalizePhone(phoneText))
      if (phoneText !== "" && phone === null) return yield* Effect.fail(invalidField("phone", "is invalid"))
      const passwordHash = yield* hashPassword(input.password)
      const sessionToken = newToken()
      const at = yield* now
      const user = yield* transaction(Effect.gen(function*() {
        // The claim: of concurrent accepts, one updates the row; the others wait for its commit,
        // re-check `status = 'pending'` and claim nothing.
        const claimed = yield* invites.claim(hashToken(input.token), at)
        if (Option.isNone(claimed)) return yield* Effect.fail(inviteNotFound)
        const invite: InviteRow = claimed.value
        // Registered meanwhile: the whole transaction (claim included) is undone.
        const inserted = yield* users.insertIfAbsent({
          email: invite.email,
          password_hash: passwordHash,
          first_name: invite.first_name,
          last_name: invite.last_name,
          phone,
          role: invite.role,
          status: "active",
          confirmed: true,
          last_login: at
        })
        if (Option.isNone(inserted)) return yield* Effect.fail(emailTaken)
        const created = inserted.value
        yield* invites.linkUser(invite.id, created.id)
        yield* profiles.createForInvite(created.id, invite.role, invite.supervisor_id)
        yield* sessions.start(hashToken(sessionToken), created.id)
        yield* audit.record({ actorId: created.id, action: "provider_invite.accept", targetType: "provider_invite", targetId: invite.id })
        yield* audit.record({ actorId: created.id, action: "user.sign_in", targetType: "user", targetId: created.id })
        return created
      }))
      return { token: sessionToken, user: toUser(user) }
    })

    return { create, validate, accept } as const
  }),
  dependencies: [
    AuditLog.Default, RateLimiter.Default, Sessions.Default, ProviderProfiles.Default, ProviderInvitesRepo.Default, ProvidersRepo.Default,
    UsersRepo.Default
  ]
}) {}
