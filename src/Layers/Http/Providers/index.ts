/** Providers: provider profiles, supervisors and provider invitations. */
import { Layer } from "effect"
import { ProviderInvites } from "../../../Services/Providers/ProviderInvites.js"
import { Providers } from "../../../Services/Providers/Providers.js"
import { defineArea } from "../../Area.js"
import { HttpProviderInvitesLive } from "./Invites.js"
import { HttpProvidersLive } from "./Providers.js"
import { HttpSupervisorsLive } from "./Supervisors.js"

export const ProvidersArea = defineArea({
  handlers: Layer.mergeAll(HttpProvidersLive, HttpSupervisorsLive, HttpProviderInvitesLive),
  services: Layer.mergeAll(Providers.Default, ProviderInvites.Default)
})
