import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { UserId } from "../../Domain/Ids.js"
import { Role, User, UserSummary } from "../../Domain/Accounts/User.js"
import { Forbidden, NotFound, reportAllErrors, reportAllErrorsInClass, TooManyRequests, Unauthorized, ValidationFailed } from "../Errors.js"
import { PageSizeQuery, Pagination } from "../Pagination.js"
import {
  BooleanFromQuery, Email, IdParam, IsoDate, Language, Message, Name, Password, RequiredString, ShortText
} from "../Schemas.js"
import { AdminAuthentication, Authentication } from "../Security.js"

export class SignInRequest extends Schema.Class<SignInRequest>("SignInRequest")({
  user: Schema.Struct({ email: RequiredString, password: RequiredString })
}, reportAllErrorsInClass) {}

export class SignInResponse extends Schema.Class<SignInResponse>("SignInResponse")({
  token: Schema.String.annotations({ description: "Send as the X-User-Token header" }),
  user: User
}) {}

const Phone = ShortText(32)

/** Registration body (general §4.1). */
export class RegisterRequest extends Schema.Class<RegisterRequest>("RegisterRequest")({
  user: Schema.Struct({
    email: Email,
    password: Password,
    first_name: Name,
    last_name: Name,
    phone: Schema.optional(Schema.NullOr(Phone)),
    date_of_birth: Schema.optional(Schema.NullOr(IsoDate)),
    language: Schema.optional(Language)
  }),
  template: Schema.optional(Schema.Boolean),
  clinical: Schema.optional(Schema.Boolean),
  native_signup: Schema.optional(Schema.Boolean)
}, reportAllErrorsInClass) {}

/**
 * The password the caller signs in with: required when they change their own email or password
 * (docs/spec-decisions.md "Credential changes").
 */
const CurrentPassword = RequiredString.pipe(
  Schema.maxLength(128, { message: () => "is too long (maximum is 128 characters)" })
).annotations({
  description: "Your current password: required to change the email or password of your own account; not needed by an admin editing another user"
})

/**
 * Same fields as registration, all optional; `role`, `active`, `confirmed` are admin-only;
 * `current_password` proves who changes their own email or password.
 */
export class UpdateUserRequest extends Schema.Class<UpdateUserRequest>("UpdateUserRequest")({
  user: Schema.Struct({
    email: Schema.optional(Email),
    password: Schema.optional(Password),
    first_name: Schema.optional(Name),
    last_name: Schema.optional(Name),
    phone: Schema.optional(Schema.NullOr(Phone)),
    date_of_birth: Schema.optional(Schema.NullOr(IsoDate)),
    language: Schema.optional(Language),
    role: Schema.optional(Role),
    active: Schema.optional(Schema.Boolean),
    confirmed: Schema.optional(Schema.Boolean),
    current_password: Schema.optional(CurrentPassword)
  }),
  template: Schema.optional(Schema.Boolean),
  clinical: Schema.optional(Schema.Boolean),
  native_signup: Schema.optional(Schema.Boolean)
}, reportAllErrorsInClass) {}

export class UserResponse extends Schema.Class<UserResponse>("UserResponse")({ user: User }) {}

/** After an update: `pending_email` is present while a new email of one's own awaits its code. */
export class UpdateUserResponse extends Schema.Class<UpdateUserResponse>("UpdateUserResponse")({
  user: User,
  pending_email: Schema.optional(Schema.String.annotations({
    description: "The new email, not in use until the code sent to it is confirmed with POST /v1/users/email_confirmation"
  }))
}) {}

/** Confirms one's own pending email change with the code sent to the new address. */
export class EmailChangeConfirmation extends Schema.Class<EmailChangeConfirmation>("EmailChangeConfirmation")({
  confirmation_code: RequiredString.pipe(Schema.maxLength(16, { message: () => "is too long (maximum is 16 characters)" }))
    .annotations({ description: "The 6-digit code mailed to the new address" })
}, reportAllErrorsInClass) {}

/** Staff see full users; `support` and `billing` see other users as summaries (no contact details). */
export class UserList extends Schema.Class<UserList>("UserList")({
  users: Schema.Array(Schema.Union(User, UserSummary)),
  pagination: Pagination
}) {}

/** `all=true` ends every session of the caller, not only this one. */
const SignOutQuery = Schema.Struct({
  all: Schema.optional(BooleanFromQuery.annotations({ description: "true: sign out every session of this user (all devices)" }))
}).annotations(reportAllErrors)

export class ConfirmationRequest extends Schema.Class<ConfirmationRequest>("ConfirmationRequest")({
  user_id: UserId,
  confirmation_code: RequiredString
}, reportAllErrorsInClass) {}

export class ConfirmationResponse extends Schema.Class<ConfirmationResponse>("ConfirmationResponse")({
  verified: Schema.Boolean,
  user: Schema.Struct({ id: UserId, email: Schema.String, confirmed: Schema.Boolean })
}) {}

/**
 * Resend: with a token, for the caller (or, for staff, for `user_id`); without one, `user_id`
 * and `email` of an unconfirmed account (docs/spec-decisions.md).
 */
export class ResendConfirmationRequest extends Schema.Class<ResendConfirmationRequest>("ResendConfirmationRequest")({
  user_id: Schema.optional(UserId),
  email: Schema.optional(Schema.String)
}, reportAllErrorsInClass) {}

export class EmailCheckRequest extends Schema.Class<EmailCheckRequest>("EmailCheckRequest")({
  email: RequiredString
}, reportAllErrorsInClass) {}

export class EmailCheckResponse extends Schema.Class<EmailCheckResponse>("EmailCheckResponse")({
  has_account: Schema.Boolean
}) {}

export class PasswordResetRequest extends Schema.Class<PasswordResetRequest>("PasswordResetRequest")({
  email: RequiredString
}, reportAllErrorsInClass) {}

export class PasswordResetValidation extends Schema.Class<PasswordResetValidation>("PasswordResetValidation")({
  valid: Schema.Boolean
}) {}

export class PasswordResetSubmission extends Schema.Class<PasswordResetSubmission>("PasswordResetSubmission")({
  token: RequiredString,
  password: Password
}, reportAllErrorsInClass) {}

const idPath = Schema.Struct({ id: IdParam })
const optionalToken = Schema.Struct({ "x-user-token": Schema.optional(Schema.String) })

/** Users (general §4.1). */
export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("signIn", "/users/sign_in")
      .setPayload(SignInRequest)
      .addSuccess(SignInResponse)
      .addError(Unauthorized.schema)
      .addError(Forbidden.schema)
      .addError(TooManyRequests.schema)
  )
  .add(
    HttpApiEndpoint.del("signOut", "/users/sign_out")
      .setUrlParams(SignOutQuery)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.get("list", "/users")
      .setUrlParams(Schema.Struct(PageSizeQuery).annotations(reportAllErrors))
      .addSuccess(UserList)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.post("register", "/users")
      .setPayload(RegisterRequest)
      .addSuccess(UserResponse, { status: 201 })
  )
  .add(
    HttpApiEndpoint.put("update", "/users/:id")
      .setPath(idPath)
      .setPayload(UpdateUserRequest)
      .addSuccess(UpdateUserResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .addError(TooManyRequests.schema)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.post("confirmEmailChange", "/users/email_confirmation")
      .setPayload(EmailChangeConfirmation)
      .addSuccess(UserResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Confirm a change of your own email")
      .annotate(
        OpenApi.Description,
        "Completes the caller's pending email change (requested with PUT /v1/users/{id} and the current password) " +
          "with the 6-digit code mailed to the new address. Signed-in users, for their own account only. " +
          "Not in the spec: docs/spec-decisions.md \"Sessions and credential changes\"."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/users/:id/cancel")
      .setPath(idPath)
      .addSuccess(UserResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.del("delete", "/users/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound.schema)
      .middleware(AdminAuthentication)
  )
  .add(
    HttpApiEndpoint.post("confirm", "/users/confirmation")
      .setPayload(ConfirmationRequest)
      .addSuccess(ConfirmationResponse)
      .addError(Unauthorized.schema)
  )
  .add(
    HttpApiEndpoint.post("resendConfirmation", "/users/resend_confirmation")
      .setHeaders(optionalToken)
      .setPayload(ResendConfirmationRequest)
      .addSuccess(Message)
      .addError(Unauthorized.schema)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .addError(TooManyRequests.schema)
  )
  .add(
    HttpApiEndpoint.post("emailHasAccount", "/users/email_has_account")
      .setPayload(EmailCheckRequest)
      .addSuccess(EmailCheckResponse)
      .addError(TooManyRequests.schema)
  )
  .add(
    HttpApiEndpoint.post("requestPasswordReset", "/users/passwords")
      .setPayload(PasswordResetRequest)
      .addSuccess(Message)
      .addError(TooManyRequests.schema)
  )
  .add(
    HttpApiEndpoint.get("validatePasswordReset", "/users/passwords/validate")
      .setUrlParams(Schema.Struct({ token: RequiredString }).annotations(reportAllErrors))
      .addSuccess(PasswordResetValidation)
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/users/passwords/reset")
      .setPayload(PasswordResetSubmission)
      .addSuccess(Message)
  )
  .addError(ValidationFailed.schema)
{}
