/**
 * Credential changes a stolen token should not make, and account rules:
 * the current password for one's own email or password, email changes confirmed by a code to the
 * new address and announced to the old one, revocation after password changes and resets; admins
 * cannot cancel themselves, archived users are not cancelled, NUL in passwords; least privilege
 * in `GET /v1/users`.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { Effect, TestClock } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { hashPassword } from "../../../src/Services/Accounts/Passwords.js"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import type { NewUser as NewUserRow } from "../../../src/Services/Accounts/UsersRepo.js"
import type { UpdateUserRequest } from "../../../src/Api/Accounts/Users.js"
import type { UserId } from "../../../src/Domain/Ids.js"
import { admin, clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertAccount } from "../../support/fixtures.js"

const password = "credential-password-1"
let passwordHash: string | undefined
let counter = 0

/** A confirmed, active user of the role, signed in once. */
const member = (role: Role = "parent", extra: Partial<NewUserRow> = {}) =>
  Effect.gen(function*() {
    passwordHash ??= yield* hashPassword(password)
    const email = `member.${++counter}.${Date.now()}@credentials.test`
    const id = yield* insertAccount({
      email, password_hash: passwordHash, first_name: "Kim", last_name: `Member${counter}`, role, confirmed: true,
      phone: "+14155550100", date_of_birth: "1990-04-01", ...extra
    })
    return { id, email, token: yield* signIn(email, password) }
  })

const statusWith = (token: string) => Effect.map(request("GET", "/v1/users", { token }), (r) => r.status)

const signInStatus = (email: string, pass: string) =>
  Effect.map(request("POST", "/v1/users/sign_in", { body: { user: { email, password: pass } } }), (r) => r.status)

const mailsTo = (address: string) =>
  Effect.map(Effect.flatMap(MemoryMailer, (m) => m.sent), (all) => all.filter((m) => m.to.includes(address)))

const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)?.[1]

const lastCodeTo = (address: string) => Effect.map(mailsTo(address), (mails) => codeIn(mails.at(-1)?.text ?? "")!)

const resetTokenFor = (email: string) =>
  Effect.gen(function*() {
    yield* (yield* clientAs()).users.requestPasswordReset({ payload: { email } })
    return /reset token: (\S+)/.exec((yield* mailsTo(email)).at(-1)!.text)![1]!
  })

const resetTokenValid = (token: string) =>
  Effect.map(Effect.flatMap(clientAs(), (client) => client.users.validatePasswordReset({ urlParams: { token } })), (r) => r.valid)

const emailOf = (id: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ email: string }>`SELECT email FROM users WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0]!.email)
  )

const put = (id: number, token: string, user: Record<string, unknown>) => request("PUT", `/v1/users/${id}`, { token, body: { user } })

/** `PUT /v1/users/{id}` through the typed client: a change that is meant to succeed. */
const update = (id: UserId, token: string, user: UpdateUserRequest["user"]) =>
  Effect.flatMap(clientAs(token), (client) => client.users.update({ path: { id }, payload: { user } }))

layer(TestApp())("changing one's own password", (it) => {
  it.effect("needs the current password: missing is 422 can't be blank, wrong is 422 is invalid, and nothing changes", () =>
    Effect.gen(function*() {
      const user = yield* member()
      expect(yield* put(user.id, user.token, { password: "brand-new-password" }))
        .toMatchObject({ status: 422, body: { errors: { current_password: ["can't be blank"] } } })
      expect(yield* put(user.id, user.token, { password: "brand-new-password", current_password: "not-my-password" }))
        .toEqual(expect.objectContaining({ status: 422, body: { errors: { current_password: ["is invalid"] } } }))
      expect(yield* signInStatus(user.email, password)).toBe(200)
      expect(yield* signInStatus(user.email, "brand-new-password")).toBe(401)
    }))

  it.effect("with it: the new password works, every other session and outstanding reset token ends, this session stays", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const otherDevice = yield* signIn(user.email, password)
      const resetToken = yield* resetTokenFor(user.email)
      expect(yield* resetTokenValid(resetToken)).toBe(true)
      const changed = yield* update(user.id, user.token, { password: "brand-new-password", current_password: password })
      expect(changed).not.toHaveProperty("pending_email")
      expect(yield* statusWith(user.token)).toBe(200)
      expect(yield* statusWith(otherDevice)).toBe(401)
      expect(yield* resetTokenValid(resetToken)).toBe(false)
      expect(yield* signInStatus(user.email, password)).toBe(401)
      expect(yield* signInStatus(user.email, "brand-new-password")).toBe(200)
    }))

  it.effect("other fields need no password; a stolen token cannot probe for accounts through the email field", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const taken = yield* member()
      expect((yield* update(user.id, user.token, { first_name: "Kit", email: user.email.toUpperCase() })).user.first_name).toBe("Kit")
      // Without the password the answer is about the password, not whether the address has an account.
      expect(yield* put(user.id, user.token, { email: taken.email, current_password: "guess-guess" }))
        .toMatchObject({ status: 422, body: { errors: { current_password: ["is invalid"] } } })
    }))

  it.effect("wrong current passwords are limited: after 10 attempts in 15 minutes, 429", () =>
    Effect.gen(function*() {
      const user = yield* member()
      for (let i = 0; i < 10; i++) {
        expect((yield* put(user.id, user.token, { password: "brand-new-password", current_password: `wrong-${i}-guess` })).status).toBe(422)
      }
      expect(yield* put(user.id, user.token, { password: "brand-new-password", current_password: password }))
        .toMatchObject({ status: 429, body: { errors: "Too many changes of email or password; try again later" } })
      expect(yield* signInStatus(user.email, password)).toBe(200)
    }))

  it.effect("a password reset ends every session, every other reset token and a pending email change", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const newEmail = `moved.${++counter}@credentials.test`
      yield* update(user.id, user.token, { email: newEmail, current_password: password })
      const code = yield* lastCodeTo(newEmail)
      const first = yield* resetTokenFor(user.email)
      const second = yield* resetTokenFor(user.email)
      yield* (yield* clientAs()).users.resetPassword({ payload: { token: second, password: "reset-password-1" } })
      expect(yield* resetTokenValid(first)).toBe(false)
      expect(yield* statusWith(user.token)).toBe(401)
      const token = yield* signIn(user.email, "reset-password-1")
      expect(yield* request("POST", "/v1/users/email_confirmation", { token, body: { confirmation_code: code } }))
        .toMatchObject({ status: 422, body: { errors: { email: ["has no pending change to confirm"] } } })
      expect(yield* emailOf(user.id)).toBe(user.email)
    }))
})

layer(TestApp())("changing one's own email", (it) => {
  it.effect("needs the current password; then a code goes to the new address, the old one is told, and the code confirms", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const newEmail = `new.${++counter}@credentials.test`
      expect(yield* put(user.id, user.token, { email: newEmail }))
        .toMatchObject({ status: 422, body: { errors: { current_password: ["can't be blank"] } } })
      expect(yield* put(user.id, user.token, { email: newEmail, current_password: "wrong-password" }))
        .toMatchObject({ status: 422, body: { errors: { current_password: ["is invalid"] } } })
      expect(yield* mailsTo(newEmail)).toHaveLength(0)

      const requested = yield* update(user.id, user.token, { email: newEmail, current_password: password })
      expect(requested).toMatchObject({ user: { email: user.email }, pending_email: newEmail })
      const code = yield* lastCodeTo(newEmail)
      expect(code).toMatch(/^\d{6}$/)
      const notice = (yield* mailsTo(user.email)).at(-1)!
      expect(notice.text).toContain(newEmail)
      expect(codeIn(notice.text)).toBeUndefined()
      // Not in use before the code comes back.
      expect(yield* emailOf(user.id)).toBe(user.email)
      expect(yield* signInStatus(newEmail, password)).toBe(401)

      const wrong = code === "000000" ? "111111" : "000000"
      expect(yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: wrong } }))
        .toMatchObject({ status: 422, body: { errors: { confirmation_code: ["is invalid"] } } })
      const confirmed = yield* (yield* clientAs(user.token)).users.confirmEmailChange({ payload: { confirmation_code: code } })
      expect(confirmed).toMatchObject({ user: { id: user.id, email: newEmail } })
      expect(yield* signInStatus(newEmail, password)).toBe(200)
      expect(yield* signInStatus(user.email, password)).toBe(401)
      expect(yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: code } }))
        .toMatchObject({ status: 422, body: { errors: { email: ["has no pending change to confirm"] } } })
      const sql = yield* SqlClient.SqlClient
      const actions = (yield* sql<{ action: string }>`SELECT action FROM audit_events WHERE target_id = ${user.id} ORDER BY id`).map((r) => r.action)
      expect(actions).toEqual(expect.arrayContaining(["user.email_change_requested", "user.email_change_failed", "user.email_change"]))
    }))

  it.effect("5 wrong codes use the change up; a code expires after 30 minutes", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const newEmail = `tries.${++counter}@credentials.test`
      yield* update(user.id, user.token, { email: newEmail, current_password: password })
      const code = yield* lastCodeTo(newEmail)
      const wrong = code === "000000" ? "111111" : "000000"
      for (let i = 0; i < 5; i++) {
        expect((yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: wrong } })).status).toBe(422)
      }
      expect(yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: code } }))
        .toMatchObject({ status: 422, body: { errors: { confirmation_code: ["was tried too many times; request the change again"] } } })

      const later = `later.${++counter}@credentials.test`
      yield* update(user.id, user.token, { email: later, current_password: password })
      const laterCode = yield* lastCodeTo(later)
      yield* TestClock.adjust("20 minutes")
      expect(yield* statusWith(user.token)).toBe(200) // keeps the session from idling out
      yield* TestClock.adjust("11 minutes")
      expect(yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: laterCode } }))
        .toMatchObject({ status: 422, body: { errors: { confirmation_code: ["has expired; request the change again"] } } })
      expect(yield* emailOf(user.id)).toBe(user.email)
    }))

  it.effect("20 concurrent confirmations with the right code: exactly one succeeds", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const newEmail = `race.${++counter}@credentials.test`
      yield* update(user.id, user.token, { email: newEmail, current_password: password })
      const code = yield* lastCodeTo(newEmail)
      const responses = yield* Effect.all(
        Array.from({ length: 20 }, () => request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: code } })),
        { concurrency: "unbounded" }
      )
      expect(responses.filter((r) => r.status === 200)).toHaveLength(1)
      expect(responses.filter((r) => r.status !== 200).every((r) => r.status === 422)).toBe(true)
      const sql = yield* SqlClient.SqlClient
      const audited = yield* sql`SELECT 1 FROM audit_events WHERE target_id = ${user.id} AND action = 'user.email_change'`
      expect(audited).toHaveLength(1)
    }))

  it.effect("an address taken before the code comes back is refused at confirmation", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const wanted = `wanted.${++counter}@credentials.test`
      yield* update(user.id, user.token, { email: wanted, current_password: password })
      const code = yield* lastCodeTo(wanted)
      yield* member("parent", {}).pipe(Effect.andThen(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE users SET email = ${wanted} WHERE id = (SELECT max(id) FROM users)`)))
      expect(yield* request("POST", "/v1/users/email_confirmation", { token: user.token, body: { confirmation_code: code } }))
        .toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
      expect(yield* emailOf(user.id)).toBe(user.email)
    }))

  it.effect("an admin changes another user's email and password without their password; the old address is told", () =>
    Effect.gen(function*() {
      const adminToken = yield* signIn()
      const user = yield* member()
      const resetToken = yield* resetTokenFor(user.email)
      const newEmail = `by-admin.${++counter}@credentials.test`
      const changed = yield* update(user.id, adminToken, { email: newEmail, password: "set-by-admin-1" })
      expect(changed).toMatchObject({ user: { email: newEmail } })
      expect(changed).not.toHaveProperty("pending_email")
      expect((yield* mailsTo(user.email)).at(-1)!.subject).toBe("Your account's email address was changed")
      expect(yield* statusWith(user.token)).toBe(401)
      expect(yield* resetTokenValid(resetToken)).toBe(false)
      expect(yield* signInStatus(newEmail, "set-by-admin-1")).toBe(200)
      // Through the admin endpoint as well.
      const viaAdmin = `via-admin.${++counter}@credentials.test`
      yield* (yield* clientAs(adminToken)).adminUsers.update({ path: { id: user.id }, payload: { user: { email: viaAdmin } } })
      expect((yield* mailsTo(newEmail)).at(-1)!.subject).toBe("Your account's email address was changed")
    }))

  it.effect("an admin's own email and password follow the self rule; the admin endpoint refuses their own email", () =>
    Effect.gen(function*() {
      const adminToken = yield* signIn()
      expect(yield* put(1, adminToken, { password: "admin-new-password" }))
        .toMatchObject({ status: 422, body: { errors: { current_password: ["can't be blank"] } } })
      const own = yield* request("PUT", "/v1/admin/clinic/users/1", { token: adminToken, body: { user: { email: "boss@example.test" } } })
      expect(own).toMatchObject({ status: 422, body: { errors: { email: ["of your own account can only be changed with PUT /v1/users/{id} and your current password"] } } })
      expect(yield* emailOf(1)).toBe(admin.email)
    }))
})

layer(TestApp())("cancel and registration rules", (it) => {
  it.effect("an admin cannot cancel their own account", () =>
    Effect.gen(function*() {
      const adminToken = yield* signIn()
      expect(yield* request("POST", "/v1/users/1/cancel", { token: adminToken }))
        .toMatchObject({ status: 422, body: { errors: { id: ["cannot cancel your own account"] } } })
      expect(yield* statusWith(adminToken)).toBe(200)
      const parent = yield* member()
      expect((yield* (yield* clientAs(parent.token)).users.cancel({ path: { id: parent.id } })).user.active).toBe(false)
    }))

  it.effect("cancelling an archived user is refused and leaves them archived", () =>
    Effect.gen(function*() {
      const adminToken = yield* signIn()
      const user = yield* member()
      yield* (yield* clientAs(adminToken)).adminUsers.archive({ path: { id: user.id } })
      expect(yield* request("POST", `/v1/users/${user.id}/cancel`, { token: adminToken }))
        .toMatchObject({ status: 422, body: { errors: { status: ["cannot be cancelled while the user is archived"] } } })
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ status: string }>`SELECT status FROM users WHERE id = ${user.id}`)[0]!.status).toBe("archived")
      expect((yield* request("POST", "/v1/users/424242/cancel", { token: adminToken })).status).toBe(404)
    }))

  it.effect("a password containing NUL is refused at registration, reset and update", () =>
    Effect.gen(function*() {
      const email = `nul.${++counter}@credentials.test`
      const registered = yield* request("POST", "/v1/users", {
        body: { user: { email, password: "long-enough\u0000pass", first_name: "Nul", last_name: "Char" } }
      })
      expect(registered).toMatchObject({ status: 422, body: { errors: { password: ["must not contain null characters"] } } })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM users WHERE lower(email) = ${email}`).toHaveLength(0)
      const user = yield* member()
      expect(yield* put(user.id, user.token, { password: "long-enough\u0000pass", current_password: password }))
        .toMatchObject({ status: 422, body: { errors: { password: ["must not contain null characters"] } } })
    }))

  it.effect("an all-space password is refused at registration and update (sign-in would call it blank)", () =>
    Effect.gen(function*() {
      const email = `blank.${++counter}@credentials.test`
      const registered = yield* request("POST", "/v1/users", {
        body: { user: { email, password: "          ", first_name: "Blank", last_name: "Pass" } }
      })
      expect(registered).toMatchObject({ status: 422, body: { errors: { password: ["can't be blank"] } } })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM users WHERE lower(email) = ${email}`).toHaveLength(0)
      const user = yield* member()
      expect(yield* put(user.id, user.token, { password: "          ", current_password: password }))
        .toMatchObject({ status: 422, body: { errors: { password: ["can't be blank"] } } })
    }))
})

layer(TestApp())("GET /v1/users, least privilege", (it) => {
  it.effect("support and billing see others' names and roles only; their own row and other staff see everything", () =>
    Effect.gen(function*() {
      const parent = yield* member("parent")
      const full = ["active", "clinical", "confirmed", "created_at", "date_of_birth", "email", "first_name", "id", "language", "last_name", "phone", "role", "updated_at"]
      const summary = ["active", "first_name", "id", "last_name", "role"]
      const document = (yield* request("GET", "/v1/openapi.json")).body as Record<string, unknown>
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      addFormats.default(ajv)
      ajv.addSchema({ ...document, $id: "urn:care:openapi" })
      const validate = ajv.compile({ $ref: "urn:care:openapi#/paths/~1v1~1users/get/responses/200/content/application~1json/schema" })
      for (const role of ["support", "billing", "provider", "supervisor", "admin"] as const) {
        const viewer = yield* member(role)
        const listed = yield* request("GET", "/v1/users?page_size=100", { token: viewer.token })
        expect(listed.status).toBe(200)
        expect(validate(listed.body), `${role}: ${JSON.stringify(validate.errors)}`).toBe(true)
        const users = (listed.body as { users: Array<Record<string, unknown>> }).users
        const parentRow = users.find((u) => u.id === parent.id)!
        const ownRow = users.find((u) => u.id === viewer.id)!
        const restricted = role === "support" || role === "billing"
        expect(Object.keys(parentRow).sort(), role).toEqual(restricted ? summary : full)
        expect(parentRow).toMatchObject({ first_name: "Kim", role: "parent", active: true })
        expect(Object.keys(ownRow).sort(), `${role} own row`).toEqual(full)
        if (restricted) expect(JSON.stringify(listed.body)).not.toContain(parent.email)
      }
    }))
})
