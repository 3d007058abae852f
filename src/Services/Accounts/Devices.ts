/** Push devices of user accounts. A token belongs to one account: registering it again moves it. */
import { Effect } from "effect"
import { forbidden, messages, notFound } from "../../Api/Errors.js"
import type { Caller } from "../../Api/Security.js"
import { Device, type DevicePlatform } from "../../Domain/Accounts/Device.js"
import { canManageAccount } from "../Access/Viewer.js"
import { AuditLog } from "../AuditLog.js"
import * as Time from "../Time.js"
import { type DeviceRow, UserDevicesRepo } from "./UserDevicesRepo.js"
import { UsersRepo } from "./UsersRepo.js"

const toDevice = (row: DeviceRow) =>
  Device.make({
    id: row.id,
    user_id: row.user_id,
    platform: row.platform,
    token_suffix: row.token.slice(-8),
    created_at: row.created_at,
    updated_at: row.updated_at
  })

export class Devices extends Effect.Service<Devices>()("app/Devices", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const devices = yield* UserDevicesRepo
    const audit = yield* AuditLog

    /** Self or admin; then the user must exist (and not be deleted). */
    const ownerFor = (caller: Caller, userId: number) =>
      Effect.gen(function*() {
        if (!canManageAccount(caller, userId)) return yield* Effect.fail(forbidden(messages.unauthorized))
        if (!(yield* users.exists(userId))) return yield* Effect.fail(notFound("User"))
      })

    const register = Effect.fn("Devices.register")(function*(caller: Caller, userId: number, token: string, platform: DevicePlatform) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      yield* ownerFor(caller, userId)
      const row = yield* devices.register(userId, token, platform, yield* Time.now)
      yield* audit.record({ actorId: caller.id, action: "device.register", targetType: "device", targetId: row.id })
      return toDevice(row)
    })

    const remove = Effect.fn("Devices.remove")(function*(caller: Caller, userId: number, deviceId: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId, "device.id": deviceId })
      yield* ownerFor(caller, userId)
      if (!(yield* devices.delete(userId, deviceId))) return yield* Effect.fail(notFound("Device"))
      yield* audit.record({ actorId: caller.id, action: "device.remove", targetType: "device", targetId: deviceId })
    })

    return { register, remove } as const
  }),
  dependencies: [UsersRepo.Default, UserDevicesRepo.Default]
}) {}
