import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import type { UserId } from "../Domain/Ids.js"
import type { Role } from "../Domain/Accounts/User.js"
import { EcmForbidden, Forbidden, Unauthorized } from "./Errors.js"

/** The signed-in caller of the current request. */
export interface Caller {
  readonly id: UserId
  readonly role: Role
  /** SHA-256 of the presented token, so sign-out can revoke exactly this session. */
  readonly tokenHash: string
  /**
   * A valid `X-Access-Reason` header (break-glass): the reason, and the request it was given with
   * (method and path, no query string).
   */
  readonly breakGlass?: { readonly reason: string; readonly method: string; readonly path: string } | undefined
}

export class CurrentUser extends Context.Tag("app/CurrentUser")<CurrentUser, Caller>() {}

/** `X-User-Token` header (ECM §5). */
export const userToken = HttpApiSecurity.apiKey({ key: "X-User-Token", in: "header" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The session token `POST /v1/users/sign_in` returns. Revoked by sign-out; a missing, unknown or revoked token is a 401."
  )
)

/** Any signed-in user. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("app/Authentication", {
  failure: Unauthorized.schema,
  provides: CurrentUser,
  security: { userToken }
}) {}

/** Clinic staff: every role but `parent`. */
export class StaffAuthentication extends HttpApiMiddleware.Tag<StaffAuthentication>()("app/StaffAuthentication", {
  failure: Schema.Union(Unauthorized.schema, Forbidden.schema),
  provides: CurrentUser,
  security: { userToken }
}) {}

/** Admin role, general-area error bodies. */
export class AdminAuthentication extends HttpApiMiddleware.Tag<AdminAuthentication>()("app/AdminAuthentication", {
  failure: Schema.Union(Unauthorized.schema, Forbidden.schema),
  provides: CurrentUser,
  security: { userToken }
}) {}

/** Admin role, ECM-area error bodies. */
export class EcmAdminAuthentication extends HttpApiMiddleware.Tag<EcmAdminAuthentication>()(
  "app/EcmAdminAuthentication",
  { failure: Schema.Union(Unauthorized.schema, EcmForbidden.schema), provides: CurrentUser, security: { userToken } }
) {}

/** Clinic staff (every role but `parent`), ECM-area error bodies: the clinic ECM endpoints and engagement status. */
export class EcmStaffAuthentication extends HttpApiMiddleware.Tag<EcmStaffAuthentication>()(
  "app/EcmStaffAuthentication",
  { failure: Schema.Union(Unauthorized.schema, EcmForbidden.schema), provides: CurrentUser, security: { userToken } }
) {}
