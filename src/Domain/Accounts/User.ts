import { Schema } from "effect"
import { UserId } from "../Ids.js"
import { IsoDate, IsoTimestamp } from "../Time.js"

export const Role = Schema.Literal("parent", "provider", "supervisor", "admin", "support", "billing")
export type Role = typeof Role.Type

/** Roles that work in the clinic back office (everyone but families). */
export const staffRoles: ReadonlyArray<Role> = ["provider", "supervisor", "admin", "support", "billing"]
export const isStaff = (role: Role): boolean => role !== "parent"

export const UserStatus = Schema.Literal("active", "inactive", "archived", "pending", "suspended")
export type UserStatus = typeof UserStatus.Type

/** The user representation of general §2.1. */
export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  phone: Schema.NullOr(Schema.String),
  date_of_birth: Schema.NullOr(IsoDate),
  language: Schema.String,
  role: Role,
  active: Schema.Boolean,
  clinical: Schema.Boolean,
  confirmed: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

/**
 * Another user as `support` and `billing` see them in `GET /v1/users` (least privilege): who they
 * are and what they do, without email, phone or date of birth (docs/spec-decisions.md).
 */
export class UserSummary extends Schema.Class<UserSummary>("UserSummary")({
  id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  role: Role,
  active: Schema.Boolean
}, { description: "Another user as support and billing staff see them in lists: names, role and whether active; no contact details or date of birth" }) {}

/** Roles that list other users without their contact details and date of birth. */
export const summaryOnlyRoles: ReadonlyArray<Role> = ["support", "billing"]

/** Whether `viewer` sees the full representation of user `userId` in lists. */
export const seesContactDetails = (viewer: { readonly id: number; readonly role: Role }, userId: number): boolean =>
  viewer.id === userId || !summaryOnlyRoles.includes(viewer.role)
