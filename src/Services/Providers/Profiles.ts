/**
 * A user whose role is `provider` or `supervisor` has exactly one provider profile (issue 10):
 * created when the role is given (admin user updates, invite acceptance), kept but inactive when
 * it is taken away or the user is deleted. The account services call `followRole` inside the
 * transaction that changes the role, so the role and the profile commit together; the user row's
 * lock, taken by that UPDATE, orders concurrent role changes, and `followRole` reads nothing but
 * the role it is given, so the last role committed is the one the profile follows.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Role } from "../../Domain/Accounts/User.js"
import { isProfileRole } from "../../Domain/Providers/Provider.js"
import { AuditLog } from "../AuditLog.js"

export class ProviderProfiles extends Effect.Service<ProviderProfiles>()("app/ProviderProfiles", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    const record = (actorId: number | null, action: string, providerId: number) =>
      audit.record({ actorId, action, targetType: "provider", targetId: providerId })

    /**
     * After the user's role became `role`: a provider or supervisor gets an active profile listing
     * that role (created, or reactivated with the role added); any other role leaves the profile,
     * if any, inactive. Idempotent: nothing is written or audited when nothing changes.
     */
    const followRole = (actorId: number | null, userId: number, role: Role) =>
      Effect.gen(function*() {
        if (isProfileRole(role)) {
          // xmax = 0 only for a row this statement inserted.
          const [row] = yield* sql<{ id: number; inserted: boolean; reactivated: boolean }>`
            WITH before AS (SELECT active FROM providers WHERE user_id = ${userId})
            INSERT INTO providers AS p (user_id, roles, active) VALUES (${userId}, ARRAY[${role}]::text[], true)
            ON CONFLICT (user_id) DO UPDATE SET
              active = true,
              roles = CASE WHEN ${role} = ANY(p.roles) THEN p.roles ELSE p.roles || ARRAY[${role}]::text[] END,
              updated_at = now()
            WHERE NOT p.active OR NOT ${role} = ANY(p.roles)
            RETURNING p.id, (xmax = 0) AS inserted, NOT COALESCE((SELECT active FROM before), true) AS reactivated`
          if (row === undefined) return
          yield* record(actorId, row.inserted ? "provider.create" : row.reactivated ? "provider.reactivate" : "provider.update", row.id)
          return
        }
        yield* deactivate(actorId, userId)
      }).pipe(Effect.orDie, Effect.withSpan("ProviderProfiles.followRole", { attributes: { "user.id": userId } }))

    /** The user's profile, if any, becomes inactive (role taken away, user deleted). */
    const deactivate = (actorId: number | null, userId: number) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: number }>`UPDATE providers SET active = false, updated_at = now()
          WHERE user_id = ${userId} AND active RETURNING id`
        for (const row of rows) yield* record(actorId, "provider.deactivate", row.id)
      }).pipe(Effect.orDie)

    /**
     * The profile of a user created by accepting an invite, with the invite's supervisor when that
     * is still an active provider holding the supervisor role (share-locked until commit, so it
     * cannot lose the role in between); otherwise without one. A new profile supervises no one, so
     * no cycle can form.
     */
    const createForInvite = (userId: number, role: Role, supervisorId: number | null) =>
      Effect.gen(function*() {
        const [supervisor] = supervisorId === null ? [] : yield* sql<{ id: number }>`
          SELECT p.id FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.id = ${supervisorId} AND p.active AND 'supervisor' = ANY(p.roles) AND u.deleted_at IS NULL
          FOR SHARE OF p`
        const [row] = yield* sql<{ id: number }>`INSERT INTO providers (user_id, roles, active, supervisor_id)
          VALUES (${userId}, ARRAY[${role}]::text[], true, ${supervisor?.id ?? null}) RETURNING id`
        yield* record(userId, "provider.create", row!.id)
        return row!.id
      }).pipe(Effect.orDie, Effect.withSpan("ProviderProfiles.createForInvite", { attributes: { "user.id": userId } }))

    return { followRole, deactivate, createForInvite } as const
  }),
  dependencies: [AuditLog.Default]
}) {}
