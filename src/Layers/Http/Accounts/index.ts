/** Accounts: users, admin user management, sessions, push devices, and the accounts made at start-up. */
import { Effect, Layer } from "effect"
import { Accounts } from "../../../Services/Accounts/Accounts.js"
import { AdminUsers } from "../../../Services/Accounts/AdminUsers.js"
import { ensureBootstrapAdmin, ensureSystemAccount } from "../../../Services/Accounts/Bootstrap.js"
import { Devices } from "../../../Services/Accounts/Devices.js"
import { Sessions } from "../../../Services/Accounts/Sessions.js"
import { sweepExpiredSessions } from "../../../Services/Accounts/SessionTasks.js"
import { UserLifecycle } from "../../../Services/Accounts/UserLifecycle.js"
import { UsersRepo } from "../../../Services/Accounts/UsersRepo.js"
import { AppConfig } from "../../../Services/AppConfig.js"
import { defineArea } from "../../Area.js"
import { HttpAdminUsersLive } from "./AdminUsers.js"
import { HttpDevicesLive } from "./Devices.js"
import { HttpUsersLive } from "./Users.js"

/** The first admin (from `BOOTSTRAP_ADMIN_*`) and the system account, before any request is served. */
const BootstrapLive = Layer.effectDiscard(
  Effect.flatMap(AppConfig, (config) => ensureBootstrapAdmin(config.bootstrapAdminEmail, config.bootstrapAdminPassword)).pipe(
    Effect.zipRight(ensureSystemAccount)
  )
).pipe(Layer.provide(UsersRepo.Default))

export const AccountsArea = defineArea({
  handlers: Layer.mergeAll(HttpUsersLive, HttpAdminUsersLive, HttpDevicesLive),
  services: Layer.mergeAll(
    UsersRepo.Default, Accounts.Default, UserLifecycle.Default, AdminUsers.Default, Sessions.Default, Devices.Default, BootstrapLive
  ),
  tasks: [sweepExpiredSessions],
  schedules: [{ task: sweepExpiredSessions, pattern: "17 * * * *" }]
})
