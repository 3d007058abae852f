/**
 * A user whose role is `provider` or `supervisor` has exactly one provider profile:
 * created when the role is given (admin user updates, invite acceptance), kept but inactive when
 * it is taken away or the user is deleted. The account services call `followRole` inside the
 * transaction that changes the role, so the role and the profile commit together; the user row's
 * lock, taken by that UPDATE, orders concurrent role changes, and `followRole` reads nothing but
 * the role it is given, so the last role committed is the one the profile follows.
 */
import { Effect, Option } from "effect"
import type { Role } from "../../Domain/Accounts/User.js"
import { isProfileRole } from "../../Domain/Providers/Provider.js"
import { AuditLog } from "../AuditLog.js"
import { ProvidersRepo } from "./ProvidersRepo.js"

export class ProviderProfiles extends Effect.Service<ProviderProfiles>()("app/ProviderProfiles", {
  effect: Effect.gen(function*() {
    const providers = yield* ProvidersRepo
    const audit = yield* AuditLog

    const record = (actorId: number | null, action: string, providerId: number) =>
      audit.record({ actorId, action, targetType: "provider", targetId: providerId })

    /**
     * After the user's role became `role`: a provider or supervisor gets an active profile listing
     * that role (created, or reactivated with the role added); any other role leaves the profile,
     * if any, inactive. Idempotent: nothing is written or audited when nothing changes.
     */
    const followRole = Effect.fn("ProviderProfiles.followRole")(function*(actorId: number | null, userId: number, role: Role) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      if (isProfileRole(role)) {
        const row = Option.getOrUndefined(yield* providers.upsertForRole(userId, role))
        if (row === undefined) return
        yield* record(actorId, row.inserted ? "provider.create" : row.reactivated ? "provider.reactivate" : "provider.update", row.id)
        return
      }
      yield* deactivate(actorId, userId)
    })

    /** The user's profile, if any, becomes inactive (role taken away, user deleted). */
    const deactivate = (actorId: number | null, userId: number) =>
      Effect.gen(function*() {
        const ids = yield* providers.deactivateOf(userId)
        for (const id of ids) yield* record(actorId, "provider.deactivate", id)
      })

    /**
     * The profile of a user created by accepting an invite, with the invite's supervisor when that
     * is still an active provider holding the supervisor role (share-locked until commit, so it
     * cannot lose the role in between); otherwise without one. A new profile supervises no one, so
     * no cycle can form.
     */
    const createForInvite = Effect.fn("ProviderProfiles.createForInvite")(function*(userId: number, role: Role, supervisorId: number | null) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const supervisor = supervisorId === null ? null : Option.getOrNull(yield* providers.lockActiveSupervisor(supervisorId))
      const id = yield* providers.insert(userId, role, supervisor)
      yield* record(userId, "provider.create", id)
      return id
    })

    return { followRole, deactivate, createForInvite } as const
  }),
  dependencies: [AuditLog.Default, ProvidersRepo.Default]
}) {}
