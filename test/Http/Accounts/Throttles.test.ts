/**
 * The account protections under concurrent requests. Every race here fires
 * its requests at once against the in-process server; nothing sleeps, windows move with TestClock.
 * All requests come from one client address (127.0.0.1), so tests that spend a per-address budget
 * start by moving the clock into a fresh window.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { addressLimitDefaults } from "../../../src/Layers/Config.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import type { RegisterRequest } from "../../../src/Api/Accounts/Users.js"
import { clientAs, request, type RawResponse, signIn, TestApp } from "../../support/app.js"
import { insertSignInThrottle, insertUser, password } from "../../support/fixtures.js"

let counter = 0
const uniqueEmail = (prefix: string) => `${prefix}.${++counter}.${Date.now()}@example.test`
/** A valid US number of its own for every registration, so per-phone limits stay out of the way. */
const uniquePhone = () => `+1415555${String(1000 + (++counter % 9000)).padStart(4, "0")}`

/**
 * The start of the test clock's next hour: every limit's window (a minute, an hour) starts afresh
 * there, and the test's own later steps stay inside it. The clock starts at the real time, so a
 * plain "+1 hour" kept the minutes past the hour and, at :59, a step of 61 seconds left the window.
 */
const nextHour = Effect.flatMap(Clock.currentTimeMillis, (now) => TestClock.adjust(3_600_000 - (now % 3_600_000)))

/** `n` requests fired at once. */
const together = <A, E, R>(n: number, make: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.all(Array.from({ length: n }, (_, i) => make(i)), { concurrency: "unbounded" })

const statuses = (responses: ReadonlyArray<RawResponse>) => {
  const count: Record<number, number> = {}
  for (const r of responses) count[r.status] = (count[r.status] ?? 0) + 1
  return count
}

const auditCount = (action: string, targetId?: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events
      WHERE action = ${action} ${targetId === undefined ? sql`` : sql`AND target_id = ${targetId}`}`).pipe(
    Effect.map((rows) => rows[0]!.n)
  )

const smsCount = Effect.flatMap(MemoryTelephony, (t) => t.sent).pipe(Effect.map((sent) => sent.length))

/** A confirmed, active parent inserted directly: sign-in tests should not spend registration budgets. */
const seededUser = Effect.gen(function*() {
  const email = uniqueEmail("seeded")
  const id = yield* insertUser({ email, first_name: "Sam", last_name: "Seed" })
  return { id, email, password }
})

const signInAs = (email: string, password: string) => request("POST", "/v1/users/sign_in", { body: { user: { email, password } } })

const registration = (overrides: Partial<RegisterRequest["user"]> = {}) => ({
  user: { email: uniqueEmail("parent"), password: "long-enough-1", first_name: "Robin", last_name: "Example", phone: uniquePhone(), ...overrides }
})

const codeIn = (text: string | undefined) => /\b(\d{6})\b/.exec(text ?? "")?.[1]

/** Registers through the API; returns the id, email and the code texted to its phone. */
const registered = (overrides: Partial<RegisterRequest["user"]> = {}) =>
  Effect.gen(function*() {
    const body = registration(overrides)
    const { user } = yield* (yield* clientAs()).users.register({ payload: body })
    const sent = yield* Effect.flatMap(MemoryTelephony, (t) => t.sent)
    const code = codeIn(sent.filter((s) => s.to === body.user.phone).at(-1)?.body)!
    return { id: user.id, email: body.user.email, phone: body.user.phone as string, code }
  })

const wrongCode = (code: string) => (code === "000000" ? "111111" : "000000")
const confirm = (userId: number, code: string) =>
  request("POST", "/v1/users/confirmation", { body: { user_id: userId, confirmation_code: code } })

const tooManyRequests = { errors: "Too many requests; try again later" }

layer(TestApp())("sign-in: atomic attempts, per-account back-off, per-address limit", (it) => {
  it.effect("40 concurrent wrong passwords for one email: only the 5 free attempts are checked", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* seededUser
      const responses = yield* together(40, () => signInAs(user.email, "wrong-password"))
      expect(statuses(responses)).toEqual({ 401: 5, 429: 35 })
      expect(yield* auditCount("user.sign_in_failed", user.id)).toBe(5)
      // Even the right password is refused now: the decision comes before the check.
      expect((yield* signInAs(user.email, user.password)).status).toBe(429)
      yield* TestClock.adjust("1 minute")
      expect((yield* signInAs(user.email, user.password)).status).toBe(200)
    }))

  it.effect("unknown emails are throttled the same way, so the throttle does not reveal accounts", () =>
    Effect.gen(function*() {
      yield* nextHour
      const email = uniqueEmail("nobody")
      const responses = yield* together(8, () => signInAs(email, "wrong-password"))
      expect(statuses(responses)).toEqual({ 401: 5, 429: 3 })
    }))

  it.effect("back-off, not a lock: after 10 wrong tries the owner gets in once the delay (32 s) has passed", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* seededUser
      // Waits out each delay (1 s, 2 s, 4 s, 8 s, 16 s after the 5th to 9th failures). The first wait
      // is a minute rather than 1 s so the attempts spread over two windows of the per-address limit.
      const waits = [0, 0, 0, 0, 0, 60, 2, 4, 8, 16]
      for (const wait of waits) {
        yield* TestClock.adjust(`${wait} seconds`)
        expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      }
      const early = yield* signInAs(user.email, user.password)
      expect(early).toMatchObject({ status: 429, body: { errors: "Too many failed sign-in attempts; try again in 32 seconds" } })
      yield* TestClock.adjust("31 seconds")
      expect((yield* signInAs(user.email, user.password)).status).toBe(429)
      yield* TestClock.adjust("1 second")
      expect((yield* signInAs(user.email, user.password)).status).toBe(200)
      // A success forgets the failures: the next mistake is a plain 401 again.
      expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      expect(yield* auditCount("user.sign_in_failed", user.id)).toBe(12)
    }))

  it.effect("the delay doubles up to 15 minutes, never more", () =>
    Effect.gen(function*() {
      const user = yield* seededUser
      // 20 failures so far for this email, the last one just now: far past the cap.
      const now = new Date(yield* TestClock.currentTimeMillis)
      yield* insertSignInThrottle({ email: user.email, attempts: 20, notBefore: new Date(now.getTime() + 15 * 60_000), lastAttemptAt: now })
      yield* nextHour
      expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
      expect(yield* signInAs(user.email, user.password))
        .toMatchObject({ status: 429, body: { errors: "Too many failed sign-in attempts; try again in 15 minutes" } })
      yield* TestClock.adjust("15 minutes")
      expect((yield* signInAs(user.email, user.password)).status).toBe(200)
    }))

  it.effect("30 different emails from one address: only 10 are checked (password spraying)", () =>
    Effect.gen(function*() {
      yield* nextHour
      const before = yield* auditCount("user.sign_in_failed")
      const responses = yield* together(30, (i) => signInAs(`sprayed.${i}.${Date.now()}@example.test`, "Password1!"))
      expect(statuses(responses)).toEqual({ 401: 10, 429: 20 })
      expect(responses.filter((r) => r.status === 429).map((r) => r.body)).toEqual(Array(20).fill(tooManyRequests))
      expect((yield* auditCount("user.sign_in_failed")) - before).toBe(10)
      yield* TestClock.adjust("1 minute")
      expect((yield* signInAs("sprayed.late@example.test", "Password1!")).status).toBe(401)
    }))

  it.effect("successful sign-ins do not use up the address budget (many users behind one office address)", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* seededUser
      for (let i = 0; i < 30; i++) expect((yield* signInAs(user.email, user.password)).status).toBe(200)
      expect((yield* signInAs(user.email, "wrong-password")).status).toBe(401)
    }))
})

layer(TestApp({ addressLimits: { ...addressLimitDefaults, registrationsPerHour: 25, signInsPerMinute: 3 } }))(
  "per-address limits are settings (a front desk behind one NAT address)",
  (it) => {
    it.effect("RATE_LIMIT_REGISTRATIONS_PER_HOUR=25: 25 registrations an hour from one address, not 20", () =>
      Effect.gen(function*() {
        yield* nextHour
        const responses = yield* together(26, () => request("POST", "/v1/users", { body: registration() }))
        expect(statuses(responses)).toEqual({ 201: 25, 429: 1 })
      }))

    it.effect("RATE_LIMIT_SIGN_INS_PER_MINUTE=3: the fourth failed sign-in of a minute is refused", () =>
      Effect.gen(function*() {
        yield* nextHour
        const responses = yield* together(5, (i) => signInAs(`tuned.${i}.${Date.now()}@example.test`, "Password1!"))
        expect(statuses(responses)).toEqual({ 401: 3, 429: 2 })
      }))
  }
)

layer(TestApp())("confirmation codes: claimed atomically", (it) => {
  it.effect("30 concurrent wrong codes get exactly 5 checks", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* registered()
      const responses = yield* together(30, () => confirm(user.id, wrongCode(user.code)))
      expect(statuses(responses)).toEqual({ 401: 30 })
      const bodies = responses.map((r) => (r.body as { errors: string }).errors)
      expect(bodies.filter((b) => b === "Invalid confirmation code")).toHaveLength(5)
      expect(bodies.filter((b) => b.startsWith("Too many wrong confirmation codes"))).toHaveLength(25)
      expect(yield* auditCount("user.confirm_failed", user.id)).toBe(5)
      expect((yield* confirm(user.id, user.code)).status).toBe(401)
    }))

  it.effect("20 concurrent confirmations with the right code succeed exactly once", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* registered()
      const responses = yield* together(20, () => confirm(user.id, user.code))
      expect(statuses(responses)).toEqual({ 200: 1, 401: 19 })
      expect(yield* auditCount("user.confirm", user.id)).toBe(1)
      expect(yield* auditCount("user.confirm_failed", user.id)).toBe(0)
    }))
})

layer(TestApp())("resend: one code a minute, the wrong-try count kept", (it) => {
  it.effect("20 concurrent resends send exactly 1 SMS (signed in as staff)", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* registered()
      const token = yield* signIn()
      yield* TestClock.adjust("61 seconds")
      const before = yield* smsCount
      const responses = yield* together(20, () => request("POST", "/v1/users/resend_confirmation", { token, body: { user_id: user.id } }))
      expect(statuses(responses)).toEqual({ 200: 1, 429: 19 })
      expect((yield* smsCount) - before).toBe(1)
      expect(yield* auditCount("user.resend_confirmation", user.id)).toBe(1)
    }))

  it.effect("20 concurrent unauthenticated resends send exactly 1 SMS", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* registered()
      yield* TestClock.adjust("61 seconds")
      const before = yield* smsCount
      const responses = yield* together(20, () =>
        request("POST", "/v1/users/resend_confirmation", { body: { user_id: user.id, email: user.email } }))
      expect(statuses(responses)).toEqual({ 200: 1, 429: 19 })
      expect((yield* smsCount) - before).toBe(1)
    }))

  it.effect("resending does not reset the wrong-try count; the count is per 15 minutes", () =>
    Effect.gen(function*() {
      yield* nextHour
      const user = yield* registered()
      for (let i = 0; i < 5; i++) expect((yield* confirm(user.id, wrongCode(user.code))).status).toBe(401)
      yield* TestClock.adjust("61 seconds")
      const resent = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: user.id, email: user.email } })
      expect(resent.status).toBe(200)
      const fresh = codeIn((yield* Effect.flatMap(MemoryTelephony, (t) => t.sent)).at(-1)?.body)!
      expect(yield* confirm(user.id, fresh)).toMatchObject({
        status: 401, body: { errors: "Too many wrong confirmation codes; request a new one in 14 minutes" }
      })
      yield* TestClock.adjust("14 minutes")
      const again = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: user.id, email: user.email } })
      expect(again.status).toBe(200)
      const last = codeIn((yield* Effect.flatMap(MemoryTelephony, (t) => t.sent)).at(-1)?.body)!
      const confirmed = yield* (yield* clientAs()).users.confirm({ payload: { user_id: user.id, confirmation_code: last } })
      expect(confirmed).toMatchObject({ verified: true, user: { id: user.id, confirmed: true } })
    }))

  it.effect("unauthenticated resends are limited per client address (they tell which id goes with an email)", () =>
    Effect.gen(function*() {
      yield* nextHour
      const responses = yield* together(12, (i) =>
        request("POST", "/v1/users/resend_confirmation", { body: { user_id: 900000 + i, email: "guess@example.test" } }))
      expect(statuses(responses)).toEqual({ 401: 10, 429: 2 })
      expect(responses.filter((r) => r.status === 429).map((r) => r.body)).toEqual([tooManyRequests, tooManyRequests])
    }))

  it.effect("codes to one phone number are limited to 5 an hour, across registrations and resends", () =>
    Effect.gen(function*() {
      yield* nextHour
      const sql = yield* SqlClient.SqlClient
      const phone = uniquePhone()
      const before = yield* smsCount
      const first = yield* registered({ phone })
      for (let i = 0; i < 4; i++) yield* registered({ phone })
      const count = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`)[0]!.n
      const sixth = yield* request("POST", "/v1/users", { body: registration({ phone }) })
      expect(sixth).toMatchObject({ status: 429, body: tooManyRequests })
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users`)[0]!.n).toBe(count)
      yield* TestClock.adjust("61 seconds")
      const codeBefore = yield* sql<{ code_hash: Buffer }>`SELECT code_hash FROM confirmation_codes WHERE user_id = ${first.id}`
      const resend = yield* request("POST", "/v1/users/resend_confirmation", { body: { user_id: first.id, email: first.email } })
      expect(resend).toMatchObject({ status: 429, body: tooManyRequests })
      // Refused means nothing changed: the code the user holds still works.
      expect(yield* sql<{ code_hash: Buffer }>`SELECT code_hash FROM confirmation_codes WHERE user_id = ${first.id}`).toEqual(codeBefore)
      expect((yield* smsCount) - before).toBe(5)
      expect((yield* confirm(first.id, first.code)).status).toBe(200)
    }))
})

layer(TestApp())("registration: one account per email, whatever the race or the spelling", (it) => {
  it.effect("20 concurrent registrations with one email: exactly 1 × 201 and 19 × 422", () =>
    Effect.gen(function*() {
      yield* nextHour
      const body = registration()
      const before = yield* smsCount
      const responses = yield* together(20, () => request("POST", "/v1/users", { body }))
      expect(statuses(responses)).toEqual({ 201: 1, 422: 19 })
      for (const r of responses.filter((r) => r.status === 422)) {
        expect(r.body).toEqual({ errors: { email: ["has already been taken"] } })
      }
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE lower(email) = ${body.user.email}`)[0]!.n).toBe(1)
      expect((yield* smsCount) - before).toBe(1)
    }))

  it.effect("registrations are limited to 20 an hour per client address", () =>
    Effect.gen(function*() {
      yield* nextHour
      const responses = yield* together(21, () => request("POST", "/v1/users", { body: registration() }))
      expect(statuses(responses)).toEqual({ 201: 20, 429: 1 })
      expect(responses.find((r) => r.status === 429)!.body).toEqual(tooManyRequests)
      yield* nextHour
      expect((yield* request("POST", "/v1/users", { body: registration() })).status).toBe(201)
    }))

  it.effect("a padded or differently-cased duplicate email is 422 on register and update; emails are stored trimmed and lower-cased", () =>
    Effect.gen(function*() {
      yield* nextHour
      const first = yield* registered({ email: "  Mixed.Case@Example.TEST " })
      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${first.id}`
      expect(stored!.email).toBe("mixed.case@example.test")
      for (const email of ["mixed.case@example.test", " MIXED.CASE@example.test", "\tmixed.case@EXAMPLE.test  "]) {
        const again = yield* request("POST", "/v1/users", { body: registration({ email }) })
        expect(again).toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
      }
      const other = yield* seededUser
      const token = yield* signIn(other.email, other.password)
      const update = yield* request("PUT", `/v1/users/${other.id}`, {
        token, body: { user: { email: "  MIXED.Case@example.test", current_password: other.password } }
      })
      expect(update).toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
    }))
})
