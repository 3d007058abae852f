/** Implementations of the Api's security middleware: one token check, then the role rule. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, type Redacted } from "effect"
import { ecmForbidden, forbidden, messages, type Unauthorized, unauthorized } from "../../Api/Errors.js"
import {
  AdminAuthentication,
  type Caller,
  EcmAdminAuthentication,
  EcmStaffAuthentication,
  Authentication,
  StaffAuthentication
} from "../../Api/Security.js"
import { accessReasonHeader, accessReasonOf, isAdmin, isStaff } from "../../Services/Access/Viewer.js"
import { Auth } from "../../Services/Auth.js"

const withRule = <E>(allowed: (caller: Caller) => boolean, refusal: () => E) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    return {
      userToken: (token: Redacted.Redacted<string>): Effect.Effect<Caller, Unauthorized | E> =>
        Effect.flatMap(auth.authenticate(token), (caller): Effect.Effect<Caller, Unauthorized | E> => {
          if (Option.isNone(caller)) return Effect.fail(unauthorized())
          if (!allowed(caller.value)) return Effect.fail(refusal())
          return Effect.zipRight(Effect.annotateCurrentSpan("user.id", caller.value.id), withBreakGlass(caller.value))
        })
    }
  })

/**
 * A staff caller's break-glass: the request's `X-Access-Reason`, when it is a reason
 * (`accessReasonOf`), with the method and path it opens. Parents never break the glass; a token
 * checked outside a request (no headers) opens nothing.
 */
const withBreakGlass = (caller: Caller): Effect.Effect<Caller> =>
  Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (current) => {
    if (Option.isNone(current)) return caller
    const request = current.value
    const reason = isStaff(caller.role) ? accessReasonOf(request.headers[accessReasonHeader]) : undefined
    if (reason === undefined) return caller
    return { ...caller, breakGlass: { reason, method: request.method, path: request.url.split("?")[0]! } }
  })

export const SecurityLive = Layer.mergeAll(
  Layer.effect(Authentication, withRule(() => true, unauthorized)),
  Layer.effect(StaffAuthentication, withRule((c) => isStaff(c.role), () => forbidden("Staff access required"))),
  Layer.effect(AdminAuthentication, withRule(isAdmin, () => forbidden(messages.adminRequired))),
  Layer.effect(EcmAdminAuthentication, withRule(isAdmin, () => ecmForbidden(messages.adminRequired))),
  // Clinic ECM endpoints (activities, events, Form C, communications, engagement status).
  Layer.effect(EcmStaffAuthentication, withRule((c) => isStaff(c.role), () => ecmForbidden(messages.staffRequired)))
)
