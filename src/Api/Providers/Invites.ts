/**
 * Provider invites (general §4.9): an admin invites someone by email; the invitee checks the link
 * (validate) and accepts it with a password, which creates their account and provider profile and
 * signs them in. Validate and accept are public: the single-use token in the link is the credential.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ProviderId } from "../../Domain/Ids.js"
import { User } from "../../Domain/Accounts/User.js"
import { InviteSummary, ProfileRole, ProviderInvite } from "../../Domain/Providers/Provider.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, reportAllErrors, TooManyRequests, ValidationFailed } from "../Errors.js"
import { Email, IssuedToken, Name, Password, Phone } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"

export class CreateInviteRequest extends Schema.Class<CreateInviteRequest>("CreateInviteRequest")({
  invite: Schema.Struct({
    email: Email,
    first_name: Name,
    last_name: Name,
    role: ProfileRole.annotations({ description: "The role the invitee's account gets: provider or supervisor" }),
    supervisor_id: Schema.optional(Schema.NullOr(ProviderId).annotations({
      description: "The supervisor the new provider profile gets: an active provider holding the supervisor role"
    }))
  })
}, requestBody({
  invite: { email: "dr.lee@example.org", first_name: "Morgan", last_name: "Lee", role: "provider", supervisor_id: 3 }
})) {}

export class InviteResponse extends Schema.Class<InviteResponse>("InviteResponse")({ invite: ProviderInvite }) {}

export class InviteValidation extends Schema.Class<InviteValidation>("InviteValidation")({
  valid: Schema.Boolean,
  invite: InviteSummary
}) {}

export class AcceptInviteRequest extends Schema.Class<AcceptInviteRequest>("AcceptInviteRequest")({
  token: IssuedToken.annotations({ description: "The token of the invite link" }),
  password: Password,
  phone: Schema.optional(Schema.NullOr(Phone))
}, requestBody({ token: "q0t3Xb8yJv2mW1sZ9kR4nP7cL5hA6eD0fG3iU8oY2wE", password: "a long passphrase", phone: "(415) 555-0132" })) {}

export class AcceptInviteResponse extends Schema.Class<AcceptInviteResponse>("AcceptInviteResponse")({
  token: Schema.String.annotations({ description: "Send as the X-User-Token header" }),
  user: User
}) {}

/** Provider invites (general §4.9). */
export class ProviderInvitesApi extends HttpApiGroup.make("providerInvites")
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/providers/invites")
      .setPayload(CreateInviteRequest)
      .addSuccess(InviteResponse, { status: 201 })
      .middleware(AdminAuthentication)
      .annotateContext(operationDocs({
        summary: "Invite a provider",
        description: "Emails a single-use link (valid 7 days) to join as a provider or supervisor. An email that already " +
          "has an account is refused; a second invite to the same address replaces the first, whose link stops working.",
        access: Access.admin,
        spec: "general §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.get("validate", "/admin/clinic/providers/invites/validate")
      .setUrlParams(Schema.Struct({ token: IssuedToken }).annotations(reportAllErrors))
      .addSuccess(InviteValidation)
      .addError(NotFound.schema)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Check an invite link",
        description: "Answers who an invite is for while its token is usable; an unknown, used, replaced or expired token is " +
          "404 `Invite not found`. Rate-limited per client address.",
        access: Access.public,
        spec: "general §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.post("accept", "/admin/clinic/providers/invites/accept")
      .setPayload(AcceptInviteRequest)
      .addSuccess(AcceptInviteResponse, { status: 201 })
      .addError(NotFound.schema)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Accept an invite",
        description: "Creates the invitee's account (confirmed and active, with the invited role) and provider profile, " +
          "and signs them in. The token works once; an unknown, used, replaced or expired token is 404 `Invite not found`. " +
          "Rate-limited per client address.",
        access: Access.public,
        spec: "general §4.9",
        singleUse: "an invite is accepted once"
      }))
  )
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Provider invites",
    description: "Inviting providers and supervisors by email, and the public steps the invitee takes with the link."
  }))
{}
