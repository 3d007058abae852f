/**
 * Sessions that end: idle timeout, absolute lifetime, the once-a-minute
 * touch of `last_used_at`, sign-out of every session, and revocation when an admin deactivates,
 * archives or changes the role of a user. Time moves with the TestClock the server reads.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, TestClock } from "effect"
import { appConfig } from "../../../src/Layers/Config.js"
import { hashPassword } from "../../../src/Services/Accounts/Passwords.js"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { Sessions, sessionCutoffs, touchInterval } from "../../../src/Services/Accounts/Sessions.js"
import { sweepExpiredSessions } from "../../../src/Services/Accounts/SessionTasks.js"
import { Jobs } from "../../../src/Services/Jobs.js"
import { hashToken } from "../../../src/Services/Tokens.js"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertAccount } from "../../support/fixtures.js"

const password = "session-password-1"
let passwordHash: string | undefined
let counter = 0

/** A confirmed, active user of the role, signed in once. */
const member = (role: Role = "parent") =>
  Effect.gen(function*() {
    passwordHash ??= yield* hashPassword(password)
    const email = `member.${++counter}.${Date.now()}@sessions.test`
    const id = yield* insertAccount({ email, password_hash: passwordHash, first_name: "Sam", last_name: "Member", role, confirmed: true })
    return { id, email, token: yield* signIn(email, password) }
  })

/** Status of an authenticated call that changes nothing. */
const statusWith = (token: string) => Effect.map(request("GET", "/v1/users", { token }), (r) => r.status)

const tokenRow = (token: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ created_at: Date; last_used_at: Date; xmin: string }>`SELECT created_at, last_used_at, xmin::text AS xmin
      FROM user_tokens WHERE token_hash = ${hashToken(token)}`).pipe(Effect.map((rows) => rows[0]))

const auditActions = (targetId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string }>`SELECT action FROM audit_events WHERE target_id = ${targetId} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => r.action))
  )

const unauthorizedBody = { errors: "You are not authorized to perform this action." }

layer(TestApp())("session lifetime, default limits", (it) => {
  it.effect("the hourly sweep job deletes expired tokens nobody presents again, and only those", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Jobs
      const idle = yield* member()
      yield* TestClock.adjust("20 minutes")
      const active = yield* member()
      yield* TestClock.adjust("15 minutes")
      // `idle` is 35 minutes unused, `active` 15: neither has been presented since.
      yield* jobs.enqueue(sweepExpiredSessions, {})
      yield* runDueJobs([sweepExpiredSessions]).pipe(Effect.provide(Sessions.Default))
      expect(yield* tokenRow(idle.token)).toBeUndefined()
      expect(yield* tokenRow(active.token)).toBeDefined()
      const [queued] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs`
      expect(queued?.n).toBe(0)
    }))

  it.effect("an unused session ends after 30 minutes: 401 like an unknown token, and the token is deleted", () =>
    Effect.gen(function*() {
      const user = yield* member()
      yield* TestClock.adjust("29 minutes")
      expect(yield* statusWith(user.token)).toBe(200)
      yield* TestClock.adjust("30 minutes")
      const expired = yield* request("GET", "/v1/users", { token: user.token })
      const unknown = yield* request("GET", "/v1/users", { token: "never-issued-token" })
      expect(expired).toMatchObject({ status: 401, body: unauthorizedBody })
      expect(expired.body).toEqual(unknown.body)
      expect(yield* tokenRow(user.token)).toBeUndefined()
      // Signing in again works: only the session ended.
      expect(yield* statusWith(yield* signIn(user.email, password))).toBe(200)
    }))

  it.effect("a session in use stays alive past the idle timeout", () =>
    Effect.gen(function*() {
      const user = yield* member()
      for (let i = 0; i < 6; i++) {
        yield* TestClock.adjust("20 minutes")
        expect(yield* statusWith(user.token), `after ${(i + 1) * 20} minutes`).toBe(200)
      }
    }))

  it.effect("last_used_at is written at most once a minute per token", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const issued = (yield* tokenRow(user.token))!
      expect(issued.last_used_at.getTime()).toBe(issued.created_at.getTime())
      // Within the minute: no write at all (the row version, xmin, stays the same).
      for (let i = 0; i < 3; i++) expect(yield* statusWith(user.token)).toBe(200)
      yield* TestClock.adjust("59 seconds")
      expect(yield* statusWith(user.token)).toBe(200)
      expect(yield* tokenRow(user.token)).toEqual(issued)
      // Past the minute: this use is recorded, once.
      yield* TestClock.adjust("2 seconds")
      expect(yield* statusWith(user.token)).toBe(200)
      const touched = (yield* tokenRow(user.token))!
      expect(touched.last_used_at.getTime()).toBe(issued.created_at.getTime() + 61_000)
      expect(touched.xmin).not.toBe(issued.xmin)
      expect(yield* statusWith(user.token)).toBe(200)
      expect(yield* tokenRow(user.token)).toEqual(touched)
      // Concurrent requests with one token: all authenticated, the time recorded is the clock's.
      yield* TestClock.adjust("5 minutes")
      const statuses = yield* Effect.all(Array.from({ length: 10 }, () => statusWith(user.token)), { concurrency: "unbounded" })
      expect(statuses).toEqual(Array(10).fill(200))
      expect((yield* tokenRow(user.token))!.last_used_at.getTime()).toBe(issued.created_at.getTime() + 361_000)
    }))

  it.effect("a session ends 12 hours after sign-in, however busy", () =>
    Effect.gen(function*() {
      const user = yield* member()
      for (let i = 0; i < 35; i++) {
        yield* TestClock.adjust("20 minutes")
        expect(yield* statusWith(user.token)).toBe(200)
      }
      yield* TestClock.adjust("20 minutes") // 12 hours since sign-in
      expect(yield* request("GET", "/v1/users", { token: user.token })).toMatchObject({ status: 401, body: unauthorizedBody })
      expect(yield* tokenRow(user.token)).toBeUndefined()
    }))

  it.effect("signing in drops the user's expired tokens that were never presented again", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const other = yield* member()
      yield* TestClock.adjust("31 minutes")
      yield* signIn(user.email, password)
      expect(yield* tokenRow(user.token)).toBeUndefined()
      // Another user's expired token waits for its own owner (or its next use).
      expect(yield* tokenRow(other.token)).toBeDefined()
    }))
})

layer(TestApp({ sessionIdleMinutes: 5, sessionMaxHours: 1 }))("session lifetime, configured limits", (it) => {
  it.effect("SESSION_IDLE_MINUTES=5: five unused minutes end the session", () =>
    Effect.gen(function*() {
      const user = yield* member()
      yield* TestClock.adjust("4 minutes")
      expect(yield* statusWith(user.token)).toBe(200)
      yield* TestClock.adjust("5 minutes")
      expect(yield* statusWith(user.token)).toBe(401)
    }))

  it.effect("SESSION_MAX_HOURS=1: the session ends an hour after sign-in", () =>
    Effect.gen(function*() {
      const user = yield* member()
      for (let i = 0; i < 14; i++) {
        yield* TestClock.adjust("4 minutes")
        expect(yield* statusWith(user.token)).toBe(200)
      }
      yield* TestClock.adjust("4 minutes")
      expect(yield* statusWith(user.token)).toBe(401)
    }))
})

describe("session settings", () => {
  const read = (env: Record<string, string>) =>
    Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it.effect("SESSION_IDLE_MINUTES and SESSION_MAX_HOURS default to 30 minutes and 12 hours", () =>
    Effect.gen(function*() {
      const settings = Either.getOrThrow(yield* read({}))
      expect([settings.sessionIdleMinutes, settings.sessionMaxHours]).toEqual([30, 12])
      const set = Either.getOrThrow(yield* read({ SESSION_IDLE_MINUTES: "15", SESSION_MAX_HOURS: "8" }))
      expect([set.sessionIdleMinutes, set.sessionMaxHours]).toEqual([15, 8])
    }))

  it.effect("refuses values that are not whole numbers of at least 1", () =>
    Effect.gen(function*() {
      for (const env of [{ SESSION_IDLE_MINUTES: "0" }, { SESSION_IDLE_MINUTES: "abc" }, { SESSION_MAX_HOURS: "-2" }, { SESSION_MAX_HOURS: "1.5" }]) {
        expect(Either.isLeft(yield* read(env)), JSON.stringify(env)).toBe(true)
      }
    }))

  it("touches once a minute, or at half a shorter idle timeout", () => {
    expect(Duration.toMillis(touchInterval({ idle: Duration.minutes(30), maxAge: Duration.hours(12) }))).toBe(60_000)
    expect(Duration.toMillis(touchInterval({ idle: Duration.minutes(1), maxAge: Duration.hours(1) }))).toBe(30_000)
    const at = sessionCutoffs({ idle: Duration.minutes(30), maxAge: Duration.hours(12) }, Date.parse("2026-01-01T12:00:00Z"))
    expect([at.idleBefore, at.createdBefore, at.touchBefore].map((d) => d.toISOString()))
      .toEqual(["2026-01-01T11:30:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-01T11:59:00.000Z"])
  })
})

layer(TestApp())("ending sessions", (it) => {
  it.effect("DELETE /v1/users/sign_out?all=true ends every session of the caller and no one else's", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const laptop = yield* signIn(user.email, password)
      const phone = yield* signIn(user.email, password)
      const other = yield* member()
      const out = yield* request("DELETE", "/v1/users/sign_out?all=true", { token: phone })
      expect(out.status).toBe(204)
      for (const token of [user.token, laptop, phone]) expect(yield* statusWith(token)).toBe(401)
      expect(yield* statusWith(other.token)).toBe(200)
      expect(yield* auditActions(user.id)).toContain("user.sign_out_all")
    }))

  it.effect("sign_out without all (or all=false) ends only the session presented; a bad value is 422", () =>
    Effect.gen(function*() {
      const user = yield* member()
      const second = yield* signIn(user.email, password)
      expect((yield* request("DELETE", "/v1/users/sign_out?all=false", { token: user.token })).status).toBe(204)
      expect(yield* statusWith(user.token)).toBe(401)
      expect(yield* statusWith(second)).toBe(200)
      const bad = yield* request("DELETE", "/v1/users/sign_out?all=yes", { token: second })
      expect(bad.status).toBe(422)
      expect(Object.keys((bad.body as { errors: object }).errors)).toEqual(["all"])
      expect(yield* statusWith(second)).toBe(200)
    }))

  it.effect("an admin changing a user's role ends that user's sessions (admin and self-service endpoints)", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const client = yield* clientAs(admin)
      const viaAdmin = yield* member("provider")
      yield* client.adminUsers.update({ path: { id: viaAdmin.id }, payload: { user: { role: "provider", first_name: "Same" } } })
      expect(yield* statusWith(viaAdmin.token)).toBe(200)
      yield* client.adminUsers.update({ path: { id: viaAdmin.id }, payload: { user: { role: "billing" } } })
      expect(yield* statusWith(viaAdmin.token)).toBe(401)
      const viaUsers = yield* member("provider")
      yield* client.users.update({ path: { id: viaUsers.id }, payload: { user: { role: "supervisor" } } })
      expect(yield* statusWith(viaUsers.token)).toBe(401)
      expect(yield* statusWith(admin)).toBe(200)
    }))

  it.effect("deactivating or archiving ends the sessions: reactivating or unarchiving does not bring them back", () =>
    Effect.gen(function*() {
      const client = yield* clientAs(yield* signIn())
      const deactivated = yield* member()
      for (const active of [false, true]) {
        yield* client.adminUsers.update({ path: { id: deactivated.id }, payload: { user: { active } } })
      }
      expect(yield* statusWith(deactivated.token)).toBe(401)
      const archived = yield* member()
      yield* client.adminUsers.archive({ path: { id: archived.id } })
      yield* client.adminUsers.unarchive({ path: { id: archived.id } })
      expect(yield* statusWith(archived.token)).toBe(401)
      const sql = yield* SqlClient.SqlClient
      const left = yield* sql`SELECT 1 FROM user_tokens WHERE user_id IN (${deactivated.id}, ${archived.id})`
      expect(left).toHaveLength(0)
    }))
})
