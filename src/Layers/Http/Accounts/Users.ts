import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { unauthorized } from "../../../Api/Errors.js"
import { CurrentUser } from "../../../Api/Security.js"
import {
  ConfirmationResponse, EmailCheckResponse, PasswordResetValidation, SignInResponse, UpdateUserResponse, UserList, UserResponse
} from "../../../Api/Accounts/Users.js"
import { Message } from "../../../Api/Schemas.js"
import { Accounts } from "../../../Services/Accounts/Accounts.js"
import { Auth } from "../../../Services/Auth.js"
import { clientAddress } from "../Forwarded.js"

export const HttpUsersLive = HttpApiBuilder.group(Api, "users", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const auth = yield* Auth
    return handlers
      .handle("signIn", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => accounts.signIn(address, payload.user.email, payload.user.password)).pipe(
          Effect.map((r) => new SignInResponse(r))
        ))
      .handle("signOut", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => accounts.signOut(caller, urlParams.all === true)))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const { pagination, users } = yield* accounts.list(yield* CurrentUser, pageRequest(urlParams, 50))
          return new UserList({ users, pagination })
        }))
      .handle("register", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => accounts.register(address, payload)).pipe(
          Effect.map((user) => new UserResponse({ user }))
        ))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => accounts.update(caller, path.id, payload)).pipe(
          Effect.map(({ pendingEmail, user }) =>
            new UpdateUserResponse(Option.match(pendingEmail, { onNone: () => ({ user }), onSome: (pending_email) => ({ user, pending_email }) })))
        ))
      .handle("confirmEmailChange", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => accounts.confirmEmailChange(caller, payload.confirmation_code)).pipe(
          Effect.map((user) => new UserResponse({ user }))
        ))
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => accounts.cancel(caller, path.id)).pipe(
          Effect.map((user) => new UserResponse({ user }))
        ))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => accounts.erase(caller, path.id)))
      .handle("confirm", ({ payload }) =>
        Effect.map(
          accounts.confirm(payload.user_id, payload.confirmation_code),
          (user) => new ConfirmationResponse({ verified: true, user: { ...user, id: user.id as never, confirmed: true } })
        ))
      .handle("resendConfirmation", ({ headers, payload }) =>
        Effect.gen(function*() {
          const token = headers["x-user-token"]
          const caller = token === undefined ? Option.none() : yield* auth.authenticate(Redacted.make(token))
          if (token !== undefined && Option.isNone(caller)) return yield* Effect.fail(unauthorized())
          const address = yield* clientAddress
          return new Message({ message: yield* accounts.resendConfirmation(address, caller, payload) })
        }))
      .handle("emailHasAccount", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => accounts.emailHasAccount(address, payload.email)).pipe(
          Effect.map((has_account) => new EmailCheckResponse({ has_account }))
        ))
      .handle("requestPasswordReset", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => accounts.requestPasswordReset(address, payload.email)).pipe(
          Effect.map((message) => new Message({ message }))
        ))
      .handle("validatePasswordReset", ({ urlParams }) =>
        Effect.map(accounts.validatePasswordReset(urlParams.token), (valid) => new PasswordResetValidation({ valid })))
      .handle("resetPassword", ({ payload }) =>
        Effect.map(accounts.resetPassword(payload.token, payload.password), (message) => new Message({ message })))
  }))
