/** Admin users (general §4.7): decode, take the caller, call `AdminUsers` (it fails with the API errors). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { AdminUsers, adminUsersPageSize } from "../../../Services/Accounts/AdminUsers.js"

export const HttpAdminUsersLive = HttpApiBuilder.group(Api, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const admin = yield* AdminUsers
    return handlers
      .handle("list", ({ urlParams }) =>
        admin.list({
          search: urlParams.search,
          sortBy: urlParams.sort_by,
          sortDir: urlParams.sort_dir
        }, pageRequest(urlParams, adminUsersPageSize)))
      .handle("filter", ({ payload }) =>
        admin.filter({
          search: payload.search,
          sortBy: payload.sort_by,
          sortDir: payload.sort_dir,
          active: payload.filters?.active,
          roles: payload.filters?.roles,
          createdFrom: payload.filters?.date?.start_date,
          createdTo: payload.filters?.date?.end_date,
          patientName: payload.filters?.patient_name
        }, pageRequest(payload, adminUsersPageSize)))
      .handle("archived", ({ urlParams }) => admin.archived(pageRequest(urlParams, adminUsersPageSize)))
      .handle("filters", () => admin.filters)
      .handle("show", ({ path }) => Effect.map(admin.show(path.id), (user) => ({ user })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(admin.update(caller.id, path.id, payload.user), (user) => ({ user }))))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => admin.remove(caller.id, path.id)))
      .handle("archive", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(admin.archive(caller.id, path.id), (user) => ({ user }))))
      .handle("unarchive", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(admin.unarchive(caller.id, path.id), (user) => ({ user }))))
      .handle("dashboard", () => admin.dashboard)
  }))
