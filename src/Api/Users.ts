import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { User } from "../Domain/User.js"
import { reportAllErrors, TooManyRequests, Unauthorized, ValidationFailed } from "./Errors.js"
import { Authentication } from "./Security.js"

const RequiredString = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "can't be blank" })
)

export class SignInRequest extends Schema.Class<SignInRequest>("SignInRequest")({
  user: Schema.Struct({ email: RequiredString, password: RequiredString })
}, reportAllErrors) {}

export class SignInResponse extends Schema.Class<SignInResponse>("SignInResponse")({
  token: Schema.String.annotations({ description: "Send as the X-User-Token header" }),
  user: User
}) {}

/** Users (general §4.1). */
export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("signIn", "/users/sign_in")
      .setPayload(SignInRequest)
      .addSuccess(SignInResponse)
      .addError(Unauthorized.schema)
      .addError(TooManyRequests.schema)
  )
  .add(
    HttpApiEndpoint.del("signOut", "/users/sign_out")
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
  )
  .addError(ValidationFailed.schema)
{}
