/** The only SQL on `user_devices` (ARCHITECTURE "Persistence"): a push token belongs to one account. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { DevicePlatform } from "../../Domain/Accounts/Device.js"
import { DeviceId, UserId } from "../../Domain/Ids.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const DeviceRow = Schema.Struct({
  id: DeviceId,
  user_id: UserId,
  platform: DevicePlatform,
  token: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type DeviceRow = typeof DeviceRow.Type

export class UserDevicesRepo extends Effect.Service<UserDevicesRepo>()("app/UserDevicesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = SqlSchema.single({
      Request: Schema.Struct({ userId: Schema.Number, token: Schema.String, platform: DevicePlatform, at: Schema.DateFromSelf }),
      Result: DeviceRow,
      execute: ({ at, platform, token, userId }) =>
        sql`INSERT INTO user_devices (user_id, token, platform) VALUES (${userId}, ${token}, ${platform})
          ON CONFLICT (token) DO UPDATE SET user_id = EXCLUDED.user_id, platform = EXCLUDED.platform, updated_at = ${at}
          RETURNING id, user_id, platform, token, created_at, updated_at`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, userId: Schema.Number }),
      Result: Schema.Struct({ id: Schema.Number }),
      execute: ({ id, userId }) => sql`DELETE FROM user_devices WHERE id = ${id} AND user_id = ${userId} RETURNING id`
    })

    return {
      /**
       * Registers the token for the user, in one statement: two registrations of a token at once
       * both land on the one row, which moves to the latest account (`updated_at` = `at`).
       */
      register: (userId: number, token: string, platform: DevicePlatform, at: Date) => orDefect(upsert({ userId, token, platform, at })),
      /** Deletes the user's device; whether there was one. */
      delete: (userId: number, id: number) => Effect.map(orDefect(deleteOne({ id, userId })), Option.isSome)
    } as const
  })
}) {}
