/**
 * Bounded inputs of the accounts endpoints: a field over its maximum length
 * or a list over its maximum size is a 422 naming the field, never work for the database; ids in
 * paths parse strictly, so "1e0" or "01" do not name user 1.
 */
import { OpenApi } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../../../src/Api/Api.js"
import { maxLengths } from "../../../src/Api/Schemas.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"

const tooLong = (max: number) => [`is too long (maximum is ${max} characters)`]

const newUser = (overrides: Record<string, unknown> = {}) => ({
  email: "bounded@example.test",
  password: "a-good-password",
  first_name: "Bo",
  last_name: "Unded",
  ...overrides
})

/** Every operation with an `{id}` path parameter, as the document lists them. */
const idOperations = Object.entries(OpenApi.fromApi(Api).paths).flatMap(([path, item]) =>
  path.includes("{id}")
    ? Object.keys(item).map((method) => ({ method: method.toUpperCase() as "GET" | "PUT" | "POST" | "DELETE", path }))
    : []
)

layer(TestApp())("bounded inputs", (it) => {
  it.effect("registration: each field over its maximum is a 422 naming it, and no account is made", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string, number]> = [
        ["email", `${"e".repeat(maxLengths.email - 12)}@example.com` + "x", maxLengths.email],
        ["password", "p".repeat(maxLengths.password + 1), maxLengths.password],
        ["first_name", "F".repeat(maxLengths.name + 1), maxLengths.name],
        ["last_name", "L".repeat(maxLengths.name + 1), maxLengths.name],
        ["phone", "4".repeat(maxLengths.phone + 1), maxLengths.phone]
      ]
      for (const [field, value, max] of cases) {
        const response = yield* request("POST", "/v1/users", { body: { user: newUser({ [field]: value }) } })
        expect(response.status, field).toBe(422)
        expect(response.body, field).toEqual({ errors: { [field]: tooLong(max) } })
      }
      const check = yield* (yield* clientAs()).users.emailHasAccount({ payload: { email: "bounded@example.test" } })
      expect(check).toEqual({ has_account: false })
    }))

  it.effect("lengths count characters, not UTF-16 units: 100 emoji make a valid name", () =>
    Effect.gen(function*() {
      const emojiName = "😀".repeat(maxLengths.name)
      expect(emojiName.length).toBe(2 * maxLengths.name)
      const accepted = yield* (yield* clientAs()).users.register({ payload: { user: newUser({ email: "emoji@example.test", first_name: emojiName }) } })
      expect(accepted.user.first_name).toBe(emojiName)
      const refused = yield* request("POST", "/v1/users", {
        body: { user: newUser({ email: "emoji2@example.test", first_name: `${emojiName}😀` }) }
      })
      expect(refused).toMatchObject({ status: 422, body: { errors: { first_name: tooLong(maxLengths.name) } } })
    }))

  it.effect("sign-in, email check, reset and confirmation fields are bounded too", () =>
    Effect.gen(function*() {
      const longEmail = `${"e".repeat(maxLengths.email)}@x.test`
      const cases: ReadonlyArray<readonly [string, unknown, string, number]> = [
        ["/v1/users/sign_in", { user: { email: "a@b.test", password: "p".repeat(maxLengths.password + 1) } }, "password", maxLengths.password],
        ["/v1/users/sign_in", { user: { email: longEmail, password: "whatever-1" } }, "email", maxLengths.email],
        ["/v1/users/email_has_account", { email: longEmail }, "email", maxLengths.email],
        ["/v1/users/passwords", { email: longEmail }, "email", maxLengths.email],
        ["/v1/users/passwords/reset", { token: "t".repeat(maxLengths.token + 1), password: "a-good-password" }, "token", maxLengths.token],
        ["/v1/users/confirmation", { user_id: 1, confirmation_code: "1".repeat(maxLengths.confirmationCode + 1) }, "confirmation_code", maxLengths.confirmationCode]
      ]
      for (const [url, body, field, max] of cases) {
        const response = yield* request("POST", url, { body })
        expect(response.status, `${url} ${field}`).toBe(422)
        expect(response.body, `${url} ${field}`).toEqual({ errors: { [field]: tooLong(max) } })
      }
      const validate = yield* request("GET", `/v1/users/passwords/validate?token=${"t".repeat(maxLengths.token + 1)}`)
      expect(validate).toMatchObject({ status: 422, body: { errors: { token: tooLong(maxLengths.token) } } })
    }))

  it.effect("admin search and filters: search ≤ 200 characters, at most 6 roles", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const search = "s".repeat(maxLengths.search + 1)
      const listed = yield* request("GET", `/v1/admin/clinic/users?search=${search}`, { token: admin })
      expect(listed).toMatchObject({ status: 422, body: { errors: { search: tooLong(maxLengths.search) } } })
      const filtered = yield* request("POST", "/v1/admin/clinic/users/filter_users", { token: admin, body: { search } })
      expect(filtered).toMatchObject({ status: 422, body: { errors: { search: tooLong(maxLengths.search) } } })

      const allRoles = ["parent", "provider", "supervisor", "admin", "support", "billing"]
      const six = yield* request("POST", "/v1/admin/clinic/users/filter_users", { token: admin, body: { filters: { roles: allRoles } } })
      expect(six.status).toBe(200)
      const seven = yield* request("POST", "/v1/admin/clinic/users/filter_users", {
        token: admin,
        body: { filters: { roles: [...allRoles, "admin"] } }
      })
      expect(seven).toMatchObject({ status: 422, body: { errors: { roles: ["is too long (maximum is 6 items)"] } } })
      // Once a 500 (PostgreSQL's bind-parameter limit); now refused by size before it is parsed.
      const many = yield* request("POST", "/v1/admin/clinic/users/filter_users", {
        token: admin,
        body: { filters: { roles: Array.from({ length: 100_000 }, () => "admin") } }
      })
      expect(many).toMatchObject({ status: 413, body: { errors: "Request body is too large" } })
    }))

  it.effect("path ids parse strictly: 1e0, 1.0, 01, ' 1', 0x10 … are 422 on every {id} operation", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const me = yield* request("GET", "/v1/admin/clinic/users/1", { token: admin })
      expect(me.status).toBe(200)
      expect(idOperations.length).toBeGreaterThanOrEqual(8)
      const spellings = ["1e0", "1.0", "01", "%201", "1%20", "0x10", "+1", "1_0", "%EF%BC%91"]
      for (const { method, path } of idOperations) {
        for (const spelling of spellings) {
          // Other path ids (`/patients/{patient_id}/spot/{id}`) spelled as valid ids.
          const url = path.replace("{id}", spelling).replace(/\{[^}]+\}/g, "1")
          const response = yield* request(method, url, { token: admin, ...(method === "PUT" ? { body: { user: {} } } : {}) })
          expect(response.status, `${method} ${url}`).toBe(422)
          // The ECM area lists sentences (ECM §7).
          const invalidId = path.includes("/ecm/") ? { errors: ["Id is invalid"] } : { errors: { id: ["is invalid"] } }
          expect(response.body, `${method} ${url}`).toEqual(invalidId)
        }
      }
      // Nothing happened to user 1 on the way.
      const after = yield* request("GET", "/v1/admin/clinic/users/1", { token: admin })
      expect({ status: after.status, body: after.body }).toEqual({ status: 200, body: me.body })
    }))
})
