/** Admin users (general §4.7): decode, take the caller, call `AdminUsers`, map its errors. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { invalidField, notFound } from "../../../Api/Errors.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { AdminUsers, adminUsersPageSize, UserNotFound, UserRejected } from "../../../Services/Accounts/AdminUsers.js"

/** The service's errors in the general area's bodies: 422 field messages, 404 `User not found`. */
const rejected = <A, E, R>(effect: Effect.Effect<A, E | UserRejected, R>) =>
  Effect.catchIf(
    effect,
    (error): error is UserRejected => error instanceof UserRejected,
    (error) => Effect.fail(invalidField(error.field, error.message))
  )
const toApiError = <A, R>(effect: Effect.Effect<A, UserNotFound | UserRejected, R>) =>
  rejected(Effect.catchIf(effect, (error): error is UserNotFound => error instanceof UserNotFound, () => Effect.fail(notFound("User"))))

export const HttpAdminUsersLive = HttpApiBuilder.group(Api, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const admin = yield* AdminUsers
    return handlers
      .handle("list", ({ urlParams }) =>
        rejected(admin.list({
          search: urlParams.search,
          sortBy: urlParams.sort_by,
          sortDir: urlParams.sort_dir
        }, pageRequest(urlParams, adminUsersPageSize))))
      .handle("filter", ({ payload }) =>
        rejected(admin.filter({
          search: payload.search,
          sortBy: payload.sort_by,
          sortDir: payload.sort_dir,
          active: payload.filters?.active,
          roles: payload.filters?.roles,
          createdFrom: payload.filters?.date?.start_date,
          createdTo: payload.filters?.date?.end_date,
          patientName: payload.filters?.patient_name
        }, pageRequest(payload, adminUsersPageSize))))
      .handle("archived", ({ urlParams }) => rejected(admin.archived(pageRequest(urlParams, adminUsersPageSize))))
      .handle("filters", () => admin.filters)
      .handle("show", ({ path }) => toApiError(Effect.map(admin.show(path.id), (user) => ({ user }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          toApiError(Effect.map(admin.update(caller.id, path.id, payload.user), (user) => ({ user })))))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => toApiError(admin.remove(caller.id, path.id))))
      .handle("archive", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => toApiError(Effect.map(admin.archive(caller.id, path.id), (user) => ({ user })))))
      .handle("unarchive", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => toApiError(Effect.map(admin.unarchive(caller.id, path.id), (user) => ({ user })))))
      .handle("dashboard", () => admin.dashboard)
  }))
