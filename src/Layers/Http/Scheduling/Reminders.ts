/** Appointment reminders (general §4.16): decode, take the caller, call `Reminders`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { remindersPageSize } from "../../../Api/Scheduling/Reminders.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Reminders } from "../../../Services/Scheduling/Reminders.js"

export const HttpRemindersLive = HttpApiBuilder.group(Api, "reminders", (handlers) =>
  Effect.gen(function*() {
    const reminders = yield* Reminders
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => reminders.create(caller, payload.appointment_reminder)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          reminders.list(caller, urlParams.appointment_id, pageRequest(urlParams, remindersPageSize))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => reminders.show(caller, path.id)).pipe(
          Effect.map((appointment_reminder) => ({ appointment_reminder }))
        ))
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => reminders.cancel(caller, path.id)).pipe(
          Effect.map((appointment_reminder) => ({ appointment_reminder }))
        ))
  }))
