/** Users (general §4.1): registration, confirmation, passwords, self-service, sign-in rules. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import type { RegisterRequest } from "../../../src/Api/Accounts/Users.js"
import { admin, clientAs, request, signIn, TestApp } from "../../support/app.js"

let counter = 0
const uniqueEmail = (prefix: string) => `${prefix}.${++counter}.${Date.now()}@example.test`
/** A number of its own per registration: codes texted to one phone are limited (Throttles.test.ts). */
const uniquePhone = () => `(415) 555-${String(1000 + (++counter % 9000)).padStart(4, "0")}`

const registration = (overrides: Partial<RegisterRequest["user"]> = {}) => ({
  user: {
    email: uniqueEmail("parent"),
    password: "long-enough-1",
    first_name: "Robin",
    last_name: "Example",
    phone: uniquePhone(),
    ...overrides
  }
})

/** Registers a user; returns its id, email, password and the code that was sent. */
const register = (overrides: Partial<RegisterRequest["user"]> = {}) =>
  Effect.gen(function*() {
    const body = registration(overrides)
    const { user } = yield* (yield* clientAs()).users.register({ payload: body })
    return { id: user.id, email: body.user.email, password: body.user.password, code: yield* lastCode(body.user) }
  })

const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)?.[1]

const lastCode = (user: { phone?: unknown; email: string }) =>
  Effect.gen(function*() {
    if (user.phone) {
      const sent = yield* Effect.flatMap(MemoryTelephony, (t) => t.sent)
      return codeIn(sent.at(-1)?.body ?? "")!
    }
    const mails = yield* Effect.flatMap(MemoryMailer, (m) => m.sent)
    return codeIn(mails.filter((m) => m.to.includes(user.email)).at(-1)?.text ?? "")!
  })

const confirmed = (overrides: Partial<RegisterRequest["user"]> = {}) =>
  Effect.gen(function*() {
    const user = yield* register(overrides)
    yield* (yield* clientAs()).users.confirm({ payload: { user_id: user.id, confirmation_code: user.code } })
    return { ...user, token: yield* signIn(user.email, user.password) }
  })

const auditActions = (targetId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string }>`SELECT action FROM audit_events WHERE target_id = ${targetId} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => r.action))
  )

layer(TestApp())("registration and confirmation", (it) => {
  it.effect("registers a parent, unconfirmed, and texts a 6-digit code to the normalised phone", () =>
    Effect.gen(function*() {
      const body = registration({ date_of_birth: "2015-06-30", language: "es", phone: "(415) 555-0123" })
      const response = yield* (yield* clientAs()).users.register({ payload: { ...body, clinical: true, template: false, native_signup: true } })
      expect(response).toMatchObject({
        user: {
          email: body.user.email, first_name: "Robin", last_name: "Example", phone: "+14155550123",
          date_of_birth: "2015-06-30", language: "es", role: "parent", active: true, clinical: true, confirmed: false
        }
      })
      const sms = (yield* Effect.flatMap(MemoryTelephony, (t) => t.sent)).at(-1)!
      expect(sms.to).toBe("+14155550123")
      expect(codeIn(sms.body ?? "")).toMatch(/^\d{6}$/)
      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<{ native_signup: boolean; template: boolean }>`SELECT native_signup, template FROM users WHERE lower(email) = ${body.user.email}`
      expect(stored).toEqual({ native_signup: true, template: false })
    }))

  it.effect("sends the code by email when no phone is given", () =>
    Effect.gen(function*() {
      const user = yield* register({ phone: undefined })
      expect(user.code).toMatch(/^\d{6}$/)
    }))

  it.effect("validates with Rails-style messages and changes nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const before = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`)[0]!.n
      const blank = yield* request("POST", "/v1/users", { body: { user: { email: "", password: "", first_name: " ", last_name: "" } } })
      expect(blank.status).toBe(422)
      expect(blank.body).toEqual({
        errors: {
          email: ["can't be blank"], password: ["can't be blank"], first_name: ["can't be blank"], last_name: ["can't be blank"]
        }
      })
      const bad = yield* request("POST", "/v1/users", {
        body: { user: { ...registration().user, email: "not-an-email", password: "short", date_of_birth: "2021-02-30" } }
      })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({
        errors: {
          email: ["is invalid"],
          password: ["is too short (minimum is 8 characters)"],
          date_of_birth: ["is invalid"]
        }
      })
      const phone = yield* request("POST", "/v1/users", { body: registration({ phone: "12" }) })
      expect(phone).toMatchObject({ status: 422, body: { errors: { phone: ["is invalid"] } } })
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`)[0]!.n).toBe(before)
    }))

  it.effect("emails are unique whatever their case", () =>
    Effect.gen(function*() {
      const first = yield* register()
      const again = yield* request("POST", "/v1/users", { body: registration({ email: first.email.toUpperCase() }) })
      expect(again).toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
    }))

  it.effect("an unconfirmed user cannot sign in, and is told to confirm", () =>
    Effect.gen(function*() {
      const user = yield* register()
      const response = yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: user.password } } })
      expect(response).toMatchObject({ status: 403, body: { errors: "Please confirm your account with the code we sent you before signing in" } })
    }))

  it.effect("the right code confirms; the user can then sign in", () =>
    Effect.gen(function*() {
      const user = yield* register()
      const response = yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: user.code } })
      expect(response).toMatchObject({ status: 200, body: { verified: true, user: { id: user.id, email: user.email, confirmed: true } } })
      expect(Object.keys((response.body as { user: object }).user).sort()).toEqual(["confirmed", "email", "id"])
      expect(yield* signIn(user.email, user.password)).toBeTypeOf("string")
      expect(yield* auditActions(user.id)).toEqual(["user.register", "user.confirm", "user.sign_in"])
    }))

  it.effect("a wrong code is 401; after 5 wrong tries even the right code is refused", () =>
    Effect.gen(function*() {
      const user = yield* register()
      const wrong = user.code === "000000" ? "111111" : "000000"
      for (let i = 0; i < 5; i++) {
        const response = yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: wrong } })
        expect(response).toMatchObject({ status: 401, body: { errors: "Invalid confirmation code" } })
      }
      const right = yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: user.code } })
      expect(right).toMatchObject({ status: 401, body: { errors: "Too many wrong confirmation codes; request a new one in 15 minutes" } })
    }))

  it.effect("a code expires after 15 minutes", () =>
    Effect.gen(function*() {
      const user = yield* register()
      yield* TestClock.adjust("15 minutes")
      const response = yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: user.code } })
      expect(response).toMatchObject({ status: 401, body: { errors: "Confirmation code has expired; request a new one" } })
    }))

  it.effect("unknown users and missing fields", () =>
    Effect.gen(function*() {
      expect(yield* request("POST", "/v1/users/confirmation", { body: { user_id: 999999, confirmation_code: "123456" } }))
        .toMatchObject({ status: 401, body: { errors: "Invalid confirmation code" } })
      expect(yield* request("POST", "/v1/users/confirmation", { body: {} }))
        .toMatchObject({ status: 422, body: { errors: { user_id: ["can't be blank"], confirmation_code: ["can't be blank"] } } })
    }))

  it.effect("resend issues a fresh code (not more than once a minute) and the old one stops working", () =>
    Effect.gen(function*() {
      const user = yield* register()
      const tooSoon = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: user.id, email: user.email } })
      expect(tooSoon).toMatchObject({ status: 429, body: { errors: "A code was sent less than a minute ago; wait before requesting another" } })
      yield* TestClock.adjust("61 seconds")
      const stranger = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: user.id, email: "someone@else.test" } })
      expect(stranger).toMatchObject({ status: 401, body: { errors: "You are not authorized to perform this action." } })
      const resent = yield* (yield* clientAs()).users.resendConfirmation({ headers: {}, payload: { user_id: user.id, email: user.email } })
      expect(resent).toEqual({ message: "Confirmation code sent" })
      const fresh = yield* lastCode({ phone: "x", email: user.email })
      if (fresh !== user.code) {
        expect((yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: user.code } })).status).toBe(401)
      }
      expect((yield* request("POST", "/v1/users/confirmation", { body: { user_id: user.id, confirmation_code: fresh } })).status).toBe(200)
      const already = yield* request("POST", "/v1/users/resend_confirmation", { token: yield* signIn(), body: { user_id: user.id } })
      expect(already).toMatchObject({ status: 422, body: { errors: { user: ["is already confirmed"] } } })
    }))
})

layer(TestApp())("sign-in rules and sessions", (it) => {
  it.effect("5 failures slow the email down (even the right password waits), a back-off rather than a lock", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      for (let i = 0; i < 5; i++) {
        expect((yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: "wrong-password" } } })).status).toBe(401)
      }
      const slowed = yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: user.password } } })
      expect(slowed).toMatchObject({ status: 429, body: { errors: "Too many failed sign-in attempts; try again in 1 second" } })
      yield* TestClock.adjust("1 second")
      expect((yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: user.password } } })).status).toBe(200)
      const actions = yield* auditActions(user.id)
      expect(actions.filter((a) => a === "user.sign_in_failed")).toHaveLength(5)
    }))

  it.effect("cancel keeps the data, revokes sessions and refuses sign in", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      const response = yield* (yield* clientAs(user.token)).users.cancel({ path: { id: user.id } })
      expect(response).toMatchObject({ user: { id: user.id, email: user.email, active: false } })
      expect((yield* request("GET", "/v1/users", { token: user.token })).status).toBe(401)
      expect(yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: user.password } } }))
        .toMatchObject({ status: 403, body: { errors: "This account is not active" } })
      expect(yield* auditActions(user.id)).toContain("user.cancel")
    }))

  it.effect("an archived user cannot sign in", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE users SET status = 'archived' WHERE id = ${user.id}`
      expect(yield* request("POST", "/v1/users/sign_in", { body: { user: { email: user.email, password: user.password } } }))
        .toMatchObject({ status: 403, body: { errors: "This account has been archived" } })
    }))

  it.effect("sign out is audited", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      expect((yield* request("DELETE", "/v1/users/sign_out", { token: user.token })).status).toBe(204)
      expect(yield* auditActions(user.id)).toContain("user.sign_out")
    }))
})

layer(TestApp())("self-service and admin deletion", (it) => {
  it.effect("GET /v1/users: staff see everyone, a parent sees only themself", () =>
    Effect.gen(function*() {
      const parent = yield* confirmed()
      const other = yield* confirmed()
      const own = yield* (yield* clientAs(parent.token)).users.list({ urlParams: {} })
      expect(own).toMatchObject({ users: [{ id: parent.id }], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 50 } })
      const staff = yield* clientAs(yield* signIn())
      const all = yield* staff.users.list({ urlParams: { page_size: 1000 } })
      expect(all.pagination.per_page).toBe(100)
      const everyone = yield* staff.users.list({ urlParams: { page_size: 100 } })
      const ids: Array<number> = everyone.users.map((u) => u.id)
      expect(ids).toEqual(expect.arrayContaining([1, parent.id, other.id]))
      const paged = yield* staff.users.list({ urlParams: { page: 2, page_size: 1 } })
      expect(paged).toMatchObject({ users: [{ id: ids[1] }], pagination: { current_page: 2, per_page: 1, total_count: ids.length, total_pages: ids.length } })
      expect((yield* request("GET", "/v1/users")).status).toBe(401)
    }))

  it.effect("PUT /v1/users/{id}: self updates; another user's record and admin-only fields are refused", () =>
    Effect.gen(function*() {
      const parent = yield* confirmed()
      const other = yield* confirmed()
      const own = yield* (yield* clientAs(parent.token)).users.update({ path: { id: parent.id }, payload: { user: { first_name: "Robyn", phone: "415 555 0199" } } })
      expect(own).toMatchObject({ user: { id: parent.id, first_name: "Robyn", phone: "+14155550199" } })
      expect(yield* request("PUT", `/v1/users/${other.id}`, { token: parent.token, body: { user: { first_name: "X" } } }))
        .toMatchObject({ status: 403, body: { errors: "You are not authorized to perform this action." } })
      for (const field of [{ role: "admin" }, { active: false }, { confirmed: true }]) {
        expect(yield* request("PUT", `/v1/users/${parent.id}`, { token: parent.token, body: { user: field } }))
          .toMatchObject({ status: 403, body: { errors: "Only an admin can change role, active or confirmed" } })
      }
      expect(yield* request("PUT", `/v1/users/${parent.id}`, { token: parent.token, body: { user: { email: other.email, current_password: parent.password } } }))
        .toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
      const adminToken = yield* signIn()
      const promoted = yield* (yield* clientAs(adminToken)).users.update({ path: { id: parent.id }, payload: { user: { role: "provider" } } })
      expect(promoted.user.role).toBe("provider")
      expect(yield* auditActions(parent.id)).toEqual(expect.arrayContaining(["user.update", "user.role_change"]))
      expect(yield* request("PUT", "/v1/users/424242", { token: adminToken, body: { user: {} } }))
        .toMatchObject({ status: 404, body: { errors: "User not found" } })
    }))

  it.effect("DELETE /v1/users/{id}: admin only; erases personal data and keeps the id as 'Deleted user'", () =>
    Effect.gen(function*() {
      const parent = yield* confirmed()
      const victim = yield* confirmed()
      expect(yield* request("DELETE", `/v1/users/${victim.id}`, { token: parent.token }))
        .toMatchObject({ status: 403, body: { errors: "Admin access required" } })
      const adminToken = yield* signIn()
      const deleted = yield* request("DELETE", `/v1/users/${victim.id}`, { token: adminToken })
      expect(deleted.status).toBe(204)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<Record<string, unknown>>`SELECT email, first_name, last_name, phone, deleted_at FROM users WHERE id = ${victim.id}`
      expect(row).toMatchObject({ first_name: "Deleted", last_name: "user", phone: null })
      expect(String(row!.email)).not.toContain(victim.email)
      expect((yield* request("GET", "/v1/users", { token: victim.token })).status).toBe(401)
      expect(yield* request("DELETE", `/v1/users/${victim.id}`, { token: adminToken })).toMatchObject({ status: 404 })
      expect(yield* request("POST", "/v1/users/sign_in", { body: { user: { email: victim.email, password: victim.password } } }))
        .toMatchObject({ status: 401 })
      expect(yield* auditActions(victim.id)).toContain("user.delete")
    }))
})

layer(TestApp())("email check and password reset", (it) => {
  it.effect("email_has_account answers, then rate-limits the client address", () =>
    Effect.gen(function*() {
      const user = yield* register()
      const client = yield* clientAs()
      expect(yield* client.users.emailHasAccount({ payload: { email: user.email.toUpperCase() } })).toEqual({ has_account: true })
      expect(yield* client.users.emailHasAccount({ payload: { email: "nobody@example.test" } })).toEqual({ has_account: false })
      const statuses: Array<number> = []
      for (let i = 0; i < 10; i++) statuses.push((yield* request("POST", "/v1/users/email_has_account", { body: { email: `x${i}@example.test` } })).status)
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
      expect(yield* request("POST", "/v1/users/email_has_account", { body: { email: user.email } }))
        .toMatchObject({ status: 429, body: { errors: "Too many requests; try again later" } })
      yield* TestClock.adjust("1 minute")
      expect((yield* request("POST", "/v1/users/email_has_account", { body: { email: user.email } })).status).toBe(200)
    }))

  it.effect("reset: always 200, one email with a single-use token, sessions revoked, new password works", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      const mailer = yield* MemoryMailer
      const before = (yield* mailer.sent).length
      const client = yield* clientAs()
      const unknown = yield* client.users.requestPasswordReset({ payload: { email: "nobody@example.test" } })
      expect(unknown).toEqual({ message: "If an account exists for that email, password reset instructions have been sent" })
      expect((yield* mailer.sent).length).toBe(before)
      const known = yield* client.users.requestPasswordReset({ payload: { email: user.email } })
      expect(known).toEqual(unknown)
      const mail = (yield* mailer.sent).at(-1)!
      expect(mail.to).toEqual([user.email])
      const token = /reset token: (\S+)/.exec(mail.text)![1]!
      const valid = (token: string) => Effect.map(client.users.validatePasswordReset({ urlParams: { token } }), (r) => r.valid)
      expect(yield* valid(token)).toBe(true)
      expect(yield* valid("forged")).toBe(false)
      expect(yield* request("POST", "/v1/users/passwords/reset", { body: { token, password: "short" } }))
        .toMatchObject({ status: 422, body: { errors: { password: ["is too short (minimum is 8 characters)"] } } })
      expect(yield* client.users.resetPassword({ payload: { token, password: "brand-new-password" } })).toEqual({ message: "Password has been reset" })
      expect((yield* request("GET", "/v1/users", { token: user.token })).status).toBe(401)
      expect(yield* signIn(user.email, "brand-new-password")).toBeTypeOf("string")
      expect(yield* request("POST", "/v1/users/passwords/reset", { body: { token, password: "another-password" } }))
        .toMatchObject({ status: 422, body: { errors: { token: ["is invalid or has expired"] } } })
      expect(yield* valid(token)).toBe(false)
      expect(yield* auditActions(user.id)).toEqual(expect.arrayContaining(["user.password_reset_requested", "user.password_reset"]))
    }))

  it.effect("a reset token expires after an hour", () =>
    Effect.gen(function*() {
      const user = yield* confirmed()
      yield* (yield* clientAs()).users.requestPasswordReset({ payload: { email: user.email } })
      const token = /reset token: (\S+)/.exec((yield* Effect.flatMap(MemoryMailer, (m) => m.sent)).at(-1)!.text)![1]!
      yield* TestClock.adjust("61 minutes")
      expect(yield* request("POST", "/v1/users/passwords/reset", { body: { token, password: "brand-new-password" } }))
        .toMatchObject({ status: 422, body: { errors: { token: ["is invalid or has expired"] } } })
      expect(admin.email).toBeTypeOf("string")
    }))
})
