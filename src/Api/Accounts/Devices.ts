/**
 * Push devices of a user (not in the spec, needed for push reminders): the app registers
 * its FCM registration token after sign-in and removes it on sign-out.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Device, DevicePlatform } from "../../Domain/Accounts/Device.js"
import { DeviceIdFromText, UserIdFromText } from "../../Domain/Ids.js"
import { groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"

/** FCM registration tokens are about 160 characters; APNs and web push ones are shorter. */
export const maxDeviceTokenLength = 4096

export class RegisterDeviceRequest extends Schema.Class<RegisterDeviceRequest>("RegisterDeviceRequest")({
  device: Schema.Struct({
    token: RequiredString(maxDeviceTokenLength).annotations({ description: "The push registration token (FCM)" }),
    platform: DevicePlatform
  })
}, requestBody({ device: { token: "fcm-registration-token-from-the-app", platform: "ios" } })) {}

export class DeviceResponse extends Schema.Class<DeviceResponse>("DeviceResponse")({ device: Device }) {}

const access = "The user themself, or an admin; anyone else gets 403."

export class DevicesApi extends HttpApiGroup.make("devices")
  .add(
    HttpApiEndpoint.post("register", "/users/:id/devices")
      .setPath(Schema.Struct({ id: UserIdFromText }))
      .setPayload(RegisterDeviceRequest)
      .addSuccess(DeviceResponse, { status: 201 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Register a push device",
        description: "Records the app's push registration token for the user, so push reminders reach it. A token " +
          "belongs to one account: registering it again (on this or another account) moves it and answers the " +
          "same device id. The token is never returned, only its last 8 characters.",
        access,
        spec: "general §4.16 (push reminders need a device; not in the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/users/:id/devices/:device_id")
      .setPath(Schema.Struct({ id: UserIdFromText, device_id: DeviceIdFromText }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Remove a push device",
        description: "Forgets the device: no more push notifications to it. 404 `Device not found` for a device the user does not have.",
        access,
        spec: "general §4.16 (push reminders need a device; not in the spec)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Users · Devices",
    description: "The push devices of a user account, where push appointment reminders go."
  }))
{}
