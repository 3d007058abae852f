/** Provider invites (general §4.9): create (admin), validate and accept (public, rate-limited per address). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { AcceptInviteResponse, InviteResponse, InviteValidation } from "../../../Api/Providers/Invites.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ProviderInvites } from "../../../Services/Providers/ProviderInvites.js"
import { clientAddress } from "../Forwarded.js"

export const HttpProviderInvitesLive = HttpApiBuilder.group(Api, "providerInvites", (handlers) =>
  Effect.gen(function*() {
    const invites = yield* ProviderInvites
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => invites.create(caller.id, payload.invite)).pipe(
          Effect.map((invite) => new InviteResponse({ invite }))
        ))
      .handle("validate", ({ urlParams }) =>
        Effect.flatMap(clientAddress, (address) => invites.validate(address, urlParams.token)).pipe(
          Effect.map((invite) => new InviteValidation({ valid: true, invite }))
        ))
      .handle("accept", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => invites.accept(address, payload)).pipe(
          Effect.map((signedIn) => new AcceptInviteResponse(signedIn))
        ))
  }))
