/** The security middleware's refusals, in both areas' shapes. */
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { type ApiError, isApiError } from "../../src/Api/Errors.js"
import { AdminAuthentication, Authentication, EcmAdminAuthentication, StaffAuthentication } from "../../src/Api/Security.js"
import { errorResponse } from "../../src/Layers/Http/Errors.js"
import { SecurityLive } from "../../src/Layers/Http/Security.js"
import type { Role } from "../../src/Domain/Accounts/User.js"
import { signIn, TestApp } from "../support/app.js"
import { insertUser, password, uniqueEmail } from "../support/fixtures.js"

/** Runs a middleware on a token and renders its refusal as the response the client would get. */
const refusal = (middleware: Effect.Effect<unknown, unknown, any>) =>
  Effect.gen(function*() {
    // Our implementations need nothing from the request context they are typed to receive.
    const check = middleware as Effect.Effect<unknown, unknown>
    const exit = yield* Effect.exit(check)
    if (Exit.isSuccess(exit)) return { status: 200, body: undefined as unknown }
    const error = yield* Effect.flip(check)
    expect(isApiError(error)).toBe(true)
    const response = yield* errorResponse(error as ApiError)
    const body = response.body as { _tag: string; body: Uint8Array }
    return { status: response.status, body: JSON.parse(new TextDecoder().decode(body.body)) as unknown }
  })

const userWithRole = (role: Role) =>
  Effect.gen(function*() {
    const email = uniqueEmail(role, "example.test")
    yield* insertUser({ email, first_name: "Test", last_name: "User", role })
    return Redacted.make(yield* signIn(email, password))
  })

layer(TestApp())("security middleware", (it) => {
  it.effect("admin-only: ECM area answers a list, the general area a string", () =>
    Effect.gen(function*() {
      const parent = yield* userWithRole("parent")
      const provider = yield* userWithRole("provider")
      const admin = Redacted.make(yield* signIn())
      const ecm = yield* EcmAdminAuthentication
      const general = yield* AdminAuthentication
      for (const token of [parent, provider]) {
        expect(yield* refusal(ecm.userToken(token))).toEqual({ status: 403, body: { errors: ["Admin access required"] } })
        expect(yield* refusal(general.userToken(token))).toEqual({ status: 403, body: { errors: "Admin access required" } })
      }
      expect((yield* refusal(ecm.userToken(admin))).status).toBe(200)
      expect(yield* refusal(ecm.userToken(Redacted.make("bogus"))))
        .toEqual({ status: 401, body: { errors: "You are not authorized to perform this action." } })
    }).pipe(Effect.provide(SecurityLive)))

  it.effect("staff-only refuses parents; any signed-in user passes Authentication", () =>
    Effect.gen(function*() {
      const parent = yield* userWithRole("parent")
      const staff = yield* StaffAuthentication
      const anyone = yield* Authentication
      expect(yield* refusal(staff.userToken(parent))).toEqual({ status: 403, body: { errors: "Staff access required" } })
      expect((yield* refusal(staff.userToken(yield* userWithRole("billing")))).status).toBe(200)
      expect((yield* refusal(anyone.userToken(parent))).status).toBe(200)
      expect((yield* refusal(anyone.userToken(Redacted.make("")))).status).toBe(401)
    }).pipe(Effect.provide(SecurityLive)))
})
