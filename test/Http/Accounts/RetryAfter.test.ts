/**
 * Every 429 carries `Retry-After` with the wait the throttle computed (whole seconds, rounded
 * up): the time left in a fixed window, or the sign-in back-off. The document declares the header
 * on every 429 and 503. Windows move with TestClock; nothing sleeps.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { retryAfterSeconds } from "../../../src/Api/Errors.js"
import { hashPassword } from "../../../src/Services/Accounts/Passwords.js"
import { clientAs, request, type RawResponse, TestApp } from "../../support/app.js"
import { insertAccount } from "../../support/fixtures.js"

let counter = 0
const uniqueEmail = (prefix: string) => `${prefix}.${++counter}.${Date.now()}@retry-after.test`

/**
 * Moves the clock to `offsetSeconds` past the next full hour: a fresh window for every limit
 * (minute, quarter-hour and hour windows all start on the hour), at a known point inside it.
 */
const freshWindowAt = (offsetSeconds: number) =>
  Effect.gen(function*() {
    const now = yield* TestClock.currentTimeMillis
    const nextHour = Math.ceil((now + 1) / 3_600_000) * 3_600_000
    yield* TestClock.adjust(nextHour + offsetSeconds * 1000 - now)
  })

const password = "retry-after-password-1"

const seededUser = Effect.gen(function*() {
  const email = uniqueEmail("seeded")
  const id = yield* insertAccount({
    email, password_hash: yield* hashPassword(password), first_name: "Ray", last_name: "Retry", role: "parent", confirmed: true
  })
  return { id, email }
})

const signInAs = (email: string, pass: string) => request("POST", "/v1/users/sign_in", { body: { user: { email, password: pass } } })

const expect429 = (response: RawResponse, seconds: number, errors: string) => {
  expect({ status: response.status, body: response.body, retryAfter: response.headers["retry-after"] })
    .toEqual({ status: 429, body: { errors }, retryAfter: String(seconds) })
}

const tooManyRequests = "Too many requests; try again later"

describe("retryAfterSeconds", () => {
  it("rounds up to whole seconds, never below 1", () => {
    expect([0, 1, 999, 1000, 1001, 45_000, 899_500].map((ms) => retryAfterSeconds(ms))).toEqual([1, 1, 1, 1, 2, 45, 900])
  })
})

layer(TestApp())("Retry-After on every 429", (it) => {
  it.effect("email check (10 a minute per address): the seconds left in the window", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(15)
      const check = () => request("POST", "/v1/users/email_has_account", { body: { email: "someone@retry-after.test" } })
      for (let i = 0; i < 10; i++) expect((yield* check()).status).toBe(200)
      expect429(yield* check(), 45, tooManyRequests)
      yield* TestClock.adjust("44 seconds")
      expect429(yield* check(), 1, tooManyRequests)
      yield* TestClock.adjust("1 second")
      expect((yield* check()).status).toBe(200)
    }))

  it.effect("password reset requests (10 a minute per address)", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(20)
      const ask = () => request("POST", "/v1/users/passwords", { body: { email: "nobody@retry-after.test" } })
      for (let i = 0; i < 10; i++) expect((yield* ask()).status).toBe(200)
      expect429(yield* ask(), 40, tooManyRequests)
    }))

  it.effect("sign-in per address (10 a minute): the seconds left in the window", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(30)
      for (let i = 0; i < 10; i++) expect((yield* signInAs(uniqueEmail("sprayed"), "Password1!")).status).toBe(401)
      expect429(yield* signInAs(uniqueEmail("sprayed"), "Password1!"), 30, tooManyRequests)
    }))

  it.effect("sign-in back-off per email: the back-off itself, in seconds even when the message says minutes", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(0)
      const user = yield* seededUser
      for (let i = 0; i < 5; i++) expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      expect429(yield* signInAs(user.email, password), 1, "Too many failed sign-in attempts; try again in 1 second")
      yield* TestClock.adjust("1 second")
      expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      expect429(yield* signInAs(user.email, password), 2, "Too many failed sign-in attempts; try again in 2 seconds")

      // Far into the back-off: 899.5 s left is 900 s (retrying at 899 would be refused again).
      const sql = yield* SqlClient.SqlClient
      const now = yield* TestClock.currentTimeMillis
      yield* sql`UPDATE sign_in_throttles SET attempts = 20, not_before = ${new Date(now + 899_500)}, last_attempt_at = ${new Date(now)}
        WHERE email_hash = sha256(convert_to(${user.email}, 'UTF8'))`
      expect429(yield* signInAs(user.email, password), 900, "Too many failed sign-in attempts; try again in 15 minutes")
    }))

  it.effect("resend within a minute of the last code: the seconds until the next one may be sent", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(0)
      const email = uniqueEmail("unconfirmed")
      const { user: { id } } = yield* (yield* clientAs()).users.register({
        payload: { user: { email, password, first_name: "Una", last_name: "Confirmed", phone: "+14155550142" } }
      })
      yield* TestClock.adjust("20 seconds")
      const resend = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: id, email } })
      expect429(resend, 40, "A code was sent less than a minute ago; wait before requesting another")
    }))

  it.effect("changes of email or password (10 per 15 minutes per user)", () =>
    Effect.gen(function*() {
      yield* freshWindowAt(100)
      const user = yield* seededUser
      const { token } = yield* (yield* clientAs()).users.signIn({ payload: { user: { email: user.email, password } } })
      const change = () =>
        request("PUT", `/v1/users/${user.id}`, { token, body: { user: { password: "another-password-1", current_password: "wrong-password" } } })
      for (let i = 0; i < 10; i++) expect((yield* change()).status).toBe(422)
      expect429(yield* change(), 800, "Too many changes of email or password; try again later")
    }))

  it.effect("the document declares Retry-After on every 429 and 503", () =>
    Effect.gen(function*() {
      const document = (yield* request("GET", "/v1/openapi.json")).body as {
        paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>
        components: { headers?: Record<string, { required?: boolean; schema?: unknown }> }
      }
      const declared: Array<string> = []
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const status of ["429", "503"]) {
            const response = operation.responses[status]
            if (response === undefined) continue
            expect(response.headers, `${method} ${path} ${status}`).toEqual({ "Retry-After": { $ref: "#/components/headers/RetryAfter" } })
            declared.push(`${method} ${path} ${status}`)
          }
        }
      }
      expect(declared.filter((d) => d.endsWith("429")).length).toBeGreaterThanOrEqual(6)
      expect(declared.filter((d) => d.endsWith("503")).length).toBe(Object.values(document.paths).flatMap(Object.keys).length)
      expect(document.components.headers?.RetryAfter).toMatchObject({ required: true, schema: { type: "integer", minimum: 1 } })
    }))
})
