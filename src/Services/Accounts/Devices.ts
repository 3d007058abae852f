/** Push devices of user accounts (issue 17). A token belongs to one account: registering it again moves it. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { forbidden, messages, notFound } from "../../Api/Errors.js"
import type { Caller } from "../../Api/Security.js"
import { Device, type DevicePlatform } from "../../Domain/Accounts/Device.js"
import type { DeviceId, UserId } from "../../Domain/Ids.js"
import { canManageAccount } from "../Access/Viewer.js"
import { AuditLog } from "../AuditLog.js"

interface DeviceRow {
  readonly id: number
  readonly user_id: number
  readonly platform: DevicePlatform
  readonly token: string
  readonly created_at: Date
  readonly updated_at: Date
}

const toDevice = (row: DeviceRow) =>
  Device.make({
    id: row.id as DeviceId,
    user_id: row.user_id as UserId,
    platform: row.platform,
    token_suffix: row.token.slice(-8),
    created_at: row.created_at,
    updated_at: row.updated_at
  })

export class Devices extends Effect.Service<Devices>()("app/Devices", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    /** Self or admin; then the user must exist (and not be deleted). */
    const ownerFor = (caller: Caller, userId: number) =>
      Effect.gen(function*() {
        if (!canManageAccount(caller, userId)) return yield* Effect.fail(forbidden(messages.unauthorized))
        const [user] = yield* sql`SELECT 1 FROM users WHERE id = ${userId} AND deleted_at IS NULL`.pipe(Effect.orDie)
        if (user === undefined) return yield* Effect.fail(notFound("User"))
      })

    const register = (caller: Caller, userId: number, token: string, platform: DevicePlatform) =>
      Effect.gen(function*() {
        yield* ownerFor(caller, userId)
        // One statement: two registrations of a token at once both land on the one row.
        const [row] = yield* sql<DeviceRow>`INSERT INTO user_devices (user_id, token, platform) VALUES (${userId}, ${token}, ${platform})
          ON CONFLICT (token) DO UPDATE SET user_id = EXCLUDED.user_id, platform = EXCLUDED.platform, updated_at = now()
          RETURNING *`.pipe(Effect.orDie)
        yield* audit.record({ actorId: caller.id, action: "device.register", targetType: "device", targetId: row!.id })
        return toDevice(row!)
      }).pipe(Effect.withSpan("Devices.register", { attributes: { "user.id": userId } }))

    const remove = (caller: Caller, userId: number, deviceId: number) =>
      Effect.gen(function*() {
        yield* ownerFor(caller, userId)
        const deleted = yield* sql`DELETE FROM user_devices WHERE id = ${deviceId} AND user_id = ${userId} RETURNING id`.pipe(Effect.orDie)
        if (deleted.length === 0) return yield* Effect.fail(notFound("Device"))
        yield* audit.record({ actorId: caller.id, action: "device.remove", targetType: "device", targetId: deviceId })
      }).pipe(Effect.withSpan("Devices.remove", { attributes: { "user.id": userId, "device.id": deviceId } }))

    return { register, remove } as const
  })
}) {}
