import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { UserId, UserIdFromText } from "../../Domain/Ids.js"
import { Role, User, UserSummary } from "../../Domain/Accounts/User.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, reportAllErrors, TooManyRequests, Unauthorized, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import {
  BooleanFromQuery, BoundedString, Email, EmailLookup, IsoDate, IssuedToken, Language, maxLengths, Message, Name, Password,
  PasswordAttempt, Phone, RequiredString
} from "../Schemas.js"
import { AdminAuthentication, Authentication } from "../Security.js"

export class SignInRequest extends Schema.Class<SignInRequest>("SignInRequest")({
  user: Schema.Struct({ email: EmailLookup, password: PasswordAttempt })
}, requestBody({ user: { email: "jane.doe@example.com", password: "correct horse battery" } })) {}

export class SignInResponse extends Schema.Class<SignInResponse>("SignInResponse")({
  token: Schema.String.annotations({ description: "Send as the X-User-Token header" }),
  user: User
}) {}

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
}, requestBody({
  user: {
    email: "jane.doe@example.com",
    password: "correct horse battery",
    first_name: "Jane",
    last_name: "Doe",
    phone: "(415) 555-0132",
    date_of_birth: "1988-04-12",
    language: "en"
  }
})) {}

/**
 * The password the caller signs in with: required when they change their own email or password
 * (docs/spec-decisions.md "Credential changes").
 */
const CurrentPassword = PasswordAttempt.annotations({
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
}, requestBody({ user: { first_name: "Janet", phone: "+14155550132", language: "es" } })) {}

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
  confirmation_code: RequiredString(maxLengths.confirmationCode)
    .annotations({ description: "The 6-digit code mailed to the new address" })
}, requestBody({ confirmation_code: "493817" })) {}

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
  confirmation_code: RequiredString(maxLengths.confirmationCode)
}, requestBody({ user_id: 42, confirmation_code: "493817" })) {}

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
  email: Schema.optional(BoundedString(maxLengths.email))
}, requestBody({ user_id: 42, email: "jane.doe@example.com" })) {}

export class EmailCheckRequest extends Schema.Class<EmailCheckRequest>("EmailCheckRequest")({
  email: EmailLookup
}, requestBody({ email: "jane.doe@example.com" })) {}

export class EmailCheckResponse extends Schema.Class<EmailCheckResponse>("EmailCheckResponse")({
  has_account: Schema.Boolean
}) {}

export class PasswordResetRequest extends Schema.Class<PasswordResetRequest>("PasswordResetRequest")({
  email: EmailLookup
}, requestBody({ email: "jane.doe@example.com" })) {}

export class PasswordResetValidation extends Schema.Class<PasswordResetValidation>("PasswordResetValidation")({
  valid: Schema.Boolean
}) {}

export class PasswordResetSubmission extends Schema.Class<PasswordResetSubmission>("PasswordResetSubmission")({
  token: IssuedToken,
  password: Password
}, requestBody({ token: "q0t3Xb8yJv2mW1sZ9kR4nP7cL5hA6eD0fG3iU8oY2wE", password: "a new long passphrase" })) {}

const idPath = Schema.Struct({ id: UserIdFromText })
const optionalToken = Schema.Struct({
  "x-user-token": Schema.optional(BoundedString(maxLengths.token).annotations({
    description: "A session token: resend for the signed-in caller (or, for staff, for `user_id`)"
  }))
})

/** Users (general §4.1). */
export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("signIn", "/users/sign_in")
      .setPayload(SignInRequest)
      .addSuccess(SignInResponse)
      .addError(Unauthorized.schema)
      .addError(Forbidden.schema)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Sign in",
        description: "Exchanges an email and password for a session token, sent back as the `X-User-Token` header " +
          "on later calls. A wrong email or password is the same 401 either way; the right password on an " +
          "unconfirmed, archived or inactive account is a 403 that says why. Repeated failures for an email " +
          "make the next attempt wait, doubling up to 15 minutes, and a client address has a per-minute limit (429).",
        access: Access.public,
        spec: "general §5; ECM §5"
      }))
  )
  .add(
    HttpApiEndpoint.del("signOut", "/users/sign_out")
      .setUrlParams(SignOutQuery)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Sign out",
        description: "Revokes the session token the request presents; with `all=true`, every session of the caller " +
          "(all devices).",
        access: Access.signedIn,
        spec: "general §5"
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/users")
      .setUrlParams(listQuery({ size: "page_size" }))
      .addSuccess(UserList)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "List users",
        description: "Lists users ordered by id, 50 per page by default. Admins, providers and supervisors see every " +
          "user in full; support and billing see other users as summaries (names and role, no contact details); " +
          "a parent sees only themself.",
        access: Access.signedIn,
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.post("register", "/users")
      .setPayload(RegisterRequest)
      .addSuccess(UserResponse, { status: 201 })
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Register",
        description: "Creates a `parent` account, unconfirmed, and sends a 6-digit confirmation code by SMS " +
          "(by email when no phone is given). The account signs in once confirmed with `POST /v1/users/confirmation`. " +
          "Limited per client address and per phone number texted (429).",
        access: Access.public,
        spec: "general §4.1",
        singleUse: "an email registers one account"
      }))
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
      .annotateContext(operationDocs({
        summary: "Update a user",
        description: "Changes the given fields of a user; fields left out keep their value. `role`, `active` and " +
          "`confirmed` are for admins only (403 otherwise), and an admin cannot change their own role or deactivate themself. " +
          "Changing one's own email or password needs `current_password`; a new email of one's own waits for the " +
          "code mailed to it (`pending_email`), see `POST /v1/users/email_confirmation`.",
        access: "The user themself, or an admin.",
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.post("confirmEmailChange", "/users/email_confirmation")
      .setPayload(EmailChangeConfirmation)
      .addSuccess(UserResponse)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Confirm a change of your own email",
        description: "Completes the caller's pending email change (requested with `PUT /v1/users/{id}` and the " +
          "current password) with the 6-digit code mailed to the new address.",
        access: "Signed-in users, for their own account only.",
        spec: "general §4.1, extended: docs/spec-decisions.md \"Sessions and credential changes\""
      }))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/users/:id/cancel")
      .setPath(idPath)
      .addSuccess(UserResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Cancel an account",
        description: "Deactivates the account (status `inactive`) and revokes its sessions; its data is kept.",
        access: "The user themself, or an admin.",
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/users/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound.schema)
      .middleware(AdminAuthentication)
      .annotateContext(operationDocs({
        summary: "Delete a user",
        description: "Erases the user's personal data and credentials and removes them from every list; records " +
          "they authored keep their id and show the name \"Deleted user\". An admin cannot delete themself.",
        access: Access.admin,
        spec: "general §4.1, §5.3"
      }))
  )
  .add(
    HttpApiEndpoint.post("confirm", "/users/confirmation")
      .setPayload(ConfirmationRequest)
      .addSuccess(ConfirmationResponse)
      .addError(Unauthorized.schema)
      .annotateContext(operationDocs({
        summary: "Confirm an account",
        description: "Confirms a registration with the code sent to the user. A wrong, expired or exhausted code is " +
          "a 401 (codes live 15 minutes; 5 tries per 15 minutes, however many codes were sent).",
        access: Access.public,
        spec: "general §4.1",
        singleUse: "a confirmation code confirms once"
      }))
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
      .annotateContext(operationDocs({
        summary: "Resend the confirmation code",
        description: "Sends a new confirmation code, at most once a minute. With a token it is for the caller (staff " +
          "may name another `user_id`); without one, `user_id` and the account's `email` must both be given. " +
          "Also limited per client address (without a token) and per phone number (429).",
        access: "A signed-in user for themself, staff for anyone, or anyone who knows an unconfirmed account's id and email.",
        spec: "general §4.1",
        singleUse: "one confirmation code a minute per account"
      }))
  )
  .add(
    HttpApiEndpoint.post("emailHasAccount", "/users/email_has_account")
      .setPayload(EmailCheckRequest)
      .addSuccess(EmailCheckResponse)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Check whether an email has an account",
        description: "Answers whether an account uses this email. Limited to 10 requests a minute per client address.",
        access: Access.public,
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.post("requestPasswordReset", "/users/passwords")
      .setPayload(PasswordResetRequest)
      .addSuccess(Message)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Request a password reset",
        description: "Emails a reset link when an account uses this email. The answer is the same either way, so it " +
          "does not reveal who has an account; rate-limited per client address.",
        access: Access.public,
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.get("validatePasswordReset", "/users/passwords/validate")
      .setUrlParams(Schema.Struct({ token: IssuedToken }).annotations(reportAllErrors))
      .addSuccess(PasswordResetValidation)
      .annotateContext(operationDocs({
        summary: "Check a password reset token",
        description: "Answers whether a reset token is still usable (unused and less than an hour old), so a page " +
          "can say so before the user types a new password.",
        access: Access.public,
        spec: "general §4.1"
      }))
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/users/passwords/reset")
      .setPayload(PasswordResetSubmission)
      .addSuccess(Message)
      .annotateContext(operationDocs({
        summary: "Reset a password",
        description: "Sets a new password with a reset token. The token works once; the reset signs the user out everywhere.",
        access: Access.public,
        spec: "general §4.1",
        singleUse: "a reset token resets once"
      }))
  )
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Users",
    description: "Registration, confirmation, sign-in and sign-out, password resets, and users managing their own account."
  }))
{}
