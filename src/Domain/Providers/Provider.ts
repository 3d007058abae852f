/** Providers, supervisors and provider invites (general §2.7, §4.9, §4.15). */
import { Schema } from "effect"
import { ProviderId, ProviderInviteId, UserId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

/** Roles a provider profile lists (general §2.7 "Provider roles (common)"). */
export const ProviderRole = Schema.Literal("provider", "supervisor", "admin", "trainee", "consultant")
export type ProviderRole = typeof ProviderRole.Type
export const providerRoles: ReadonlyArray<ProviderRole> = ProviderRole.literals

/** User roles that have a provider profile, and that an invite may give. */
export const ProfileRole = Schema.Literal("provider", "supervisor")
export type ProfileRole = typeof ProfileRole.Type
export const isProfileRole = (role: string): role is ProfileRole => role === "provider" || role === "supervisor"

/** Specialties the spec lists as common; any other text is accepted too. */
export const commonSpecialties = [
  "child_psychiatry", "adult_psychiatry", "clinical_psychology", "counseling", "social_work", "marriage_family_therapy"
] as const

/** The provider representation of general §2.7, with `npi`. */
export class Provider extends Schema.Class<Provider>("Provider")({
  id: ProviderId,
  user_id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  roles: Schema.Array(ProviderRole),
  specialty: Schema.NullOr(Schema.String),
  license_number: Schema.NullOr(Schema.String),
  npi: Schema.NullOr(Schema.String),
  /** The clinic department the provider works in (weekly metrics filter on it). */
  department: Schema.NullOr(Schema.String),
  has_supervisor: Schema.Boolean,
  supervisor_id: Schema.NullOr(ProviderId),
  active: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class Supervisee extends Schema.Class<Supervisee>("Supervisee")({
  id: ProviderId,
  first_name: Schema.String,
  last_name: Schema.String
}) {}

/** The supervisor representation of general §2.7: a provider holding the supervisor role. */
export class Supervisor extends Schema.Class<Supervisor>("Supervisor")({
  id: ProviderId,
  user_id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  specialty: Schema.NullOr(Schema.String),
  license_number: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  supervisees: Schema.Array(Supervisee),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export const InviteStatus = Schema.Literal("pending", "accepted")

/** An invite as the admin who sent it sees it. */
export class ProviderInvite extends Schema.Class<ProviderInvite>("ProviderInvite")({
  id: ProviderInviteId,
  email: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  role: ProfileRole,
  supervisor_id: Schema.NullOr(ProviderId),
  status: InviteStatus,
  expires_at: IsoTimestamp,
  created_at: IsoTimestamp
}) {}

/** An invite as its token's holder sees it (validate). */
export class InviteSummary extends Schema.Class<InviteSummary>("InviteSummary")({
  email: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  role: ProfileRole,
  expires_at: IsoTimestamp
}) {}
