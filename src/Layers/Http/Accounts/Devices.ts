/** Push devices: decode, take the caller, call `Devices`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Devices } from "../../../Services/Accounts/Devices.js"

export const HttpDevicesLive = HttpApiBuilder.group(Api, "devices", (handlers) =>
  Effect.gen(function*() {
    const devices = yield* Devices
    return handlers
      .handle("register", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => devices.register(caller, path.id, payload.device.token, payload.device.platform)).pipe(
          Effect.map((device) => ({ device }))
        ))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentUser, (caller) => devices.remove(caller, path.id, path.device_id)))
  }))
