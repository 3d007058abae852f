import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../Api/Api.js"
import { messages, unauthorized } from "../../Api/Errors.js"
import { CurrentUser } from "../../Api/Security.js"
import { SignInResponse } from "../../Api/Users.js"
import { Auth } from "../../Services/Auth.js"

export const HttpUsersLive = HttpApiBuilder.group(Api, "users", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    return handlers
      .handle("signIn", ({ payload }) =>
        auth.signIn(payload.user.email, payload.user.password).pipe(
          Effect.map(({ token, user }) => new SignInResponse({ token, user })),
          Effect.mapError(() => unauthorized(messages.invalidCredentials))
        ))
      .handle("signOut", () => Effect.flatMap(CurrentUser, (caller) => auth.signOut(caller.tokenHash)))
  }))
