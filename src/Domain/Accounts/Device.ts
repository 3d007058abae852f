/** A push device of a user account (not in the spec): where push reminders go. */
import { Schema } from "effect"
import { DeviceId, UserId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

export const DevicePlatform = Schema.Literal("ios", "android", "web").annotations({ message: () => "is not included in the list" })
export type DevicePlatform = typeof DevicePlatform.Type

/** The token itself is never echoed: only its last characters, so a user can tell devices apart. */
export class Device extends Schema.Class<Device>("Device")({
  id: DeviceId,
  user_id: UserId,
  platform: DevicePlatform,
  token_suffix: Schema.String.annotations({ description: "The last 8 characters of the registration token" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}
