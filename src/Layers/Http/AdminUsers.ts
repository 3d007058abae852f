import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../../Api/Api.js"
import { AdminUser } from "../../Api/AdminUsers.js"
import { notFound } from "../../Api/Errors.js"
import { toUser, UsersRepo } from "../../Services/UsersRepo.js"

export const HttpAdminUsersLive = HttpApiBuilder.group(Api, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const users = yield* UsersRepo
    return handlers.handle("show", ({ path }) =>
      users.findById(path.id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(notFound("User")),
          onSome: (row) =>
            Effect.succeed({ user: AdminUser.make({ ...toUser(row), last_login: row.last_login, patient: null }) })
        }))
      ))
  }))
