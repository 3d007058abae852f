import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { adminToken, auditActions, insertUser, makeProvider, put } from "./helpers.js"

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const notFoundBody = { errors: "Invite not found" }

/** Rate-limit windows are per client address and the test clock stands still: start each test afresh. */
const forgetLimits = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM rate_limits`).pipe(Effect.orDie)

/** The token of the last invite link mailed to `email`. */
const mailedToken = (email: string) =>
  Effect.gen(function*() {
    const sent = yield* (yield* MemoryMailer).sent
    const texts = sent.filter((m) => m.to.includes(email)).map((m) => m.text)
    const match = /[?&]token=([^\s&]+)/.exec(texts.at(-1) ?? "")
    if (match === null) return yield* Effect.dieMessage(`no invite link mailed to ${email}`)
    return decodeURIComponent(match[1]!)
  })

const invite = (token: string, body: Record<string, unknown>) =>
  request("POST", "/v1/admin/clinic/providers/invites", { token, body: { invite: body } })
const validate = (token: string) => request("GET", `/v1/admin/clinic/providers/invites/validate?token=${encodeURIComponent(token)}`)
const accept = (body: Record<string, unknown>) => request("POST", "/v1/admin/clinic/providers/invites/accept", { body })

layer(TestApp())("provider invites", (it) => {
  it.effect("the full flow: invite, email with a link, validate, accept (signed in, profile with supervisor), then the token is spent", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      const admin = yield* adminToken
      const supervisor = yield* makeProvider(admin, "supervisor")
      const created = yield* invite(admin, { email: " New.Provider@Invites.test ", first_name: " Nia ", last_name: "Okafor", role: "provider", supervisor_id: supervisor.id })
      expect(created.status).toBe(201)
      const body = created.body as { invite: { id: number; expires_at: string; created_at: string } }
      expect(body).toEqual({
        invite: {
          id: expect.any(Number), email: "new.provider@invites.test", first_name: "Nia", last_name: "Okafor", role: "provider",
          supervisor_id: supervisor.id, status: "pending", expires_at: expect.stringMatching(iso), created_at: expect.stringMatching(iso)
        }
      })
      expect(Date.parse(body.invite.expires_at) - Date.parse(body.invite.created_at)).toBe(7 * 24 * 60 * 60 * 1000)
      const mails = (yield* (yield* MemoryMailer).sent).filter((m) => m.to.includes("new.provider@invites.test"))
      expect(mails).toHaveLength(1)
      expect(mails[0]!.subject).toBe("You're invited to Care Coordination")
      expect(mails[0]!.text).toContain("http://localhost/v1/admin/clinic/providers/invites/validate?token=")
      const token = yield* mailedToken("new.provider@invites.test")
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      // Only the hash is stored.
      const sql = yield* SqlClient.SqlClient
      const stored = yield* sql<{ token_hash: Buffer }>`SELECT token_hash FROM provider_invites WHERE id = ${body.invite.id}`
      expect(stored[0]!.token_hash.toString("hex")).not.toContain(Buffer.from(token).toString("hex"))

      const valid = yield* validate(token)
      expect(valid.status).toBe(200)
      expect(valid.body).toEqual({
        valid: true,
        invite: { email: "new.provider@invites.test", first_name: "Nia", last_name: "Okafor", role: "provider", expires_at: body.invite.expires_at }
      })

      const accepted = yield* accept({ token, password: "a good passphrase", phone: "(415) 555-0132" })
      expect(accepted.status).toBe(201)
      const signedIn = accepted.body as { token: string; user: Record<string, unknown> & { id: number } }
      expect(signedIn.user).toEqual({
        id: expect.any(Number), email: "new.provider@invites.test", first_name: "Nia", last_name: "Okafor", phone: "+14155550132",
        date_of_birth: null, language: "en", role: "provider", active: true, clinical: false, confirmed: true,
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      // Signed in: the token works, and the password signs in too.
      expect((yield* request("GET", "/v1/users", { token: signedIn.token })).status).toBe(200)
      expect((yield* request("POST", "/v1/users/sign_in", { body: { user: { email: "new.provider@invites.test", password: "a good passphrase" } } })).status).toBe(200)
      const [profile] = yield* sql<{ id: number; roles: Array<string>; supervisor_id: number; active: boolean }>`
        SELECT id, roles, supervisor_id, active FROM providers WHERE user_id = ${signedIn.user.id}`
      expect(profile).toEqual({ id: expect.any(Number), roles: ["provider"], supervisor_id: supervisor.id, active: true })
      const shown = yield* request("GET", `/v1/admin/clinic/providers/${profile!.id}`, { token: admin })
      expect(shown.body).toMatchObject({ provider: { user_id: signedIn.user.id, email: "new.provider@invites.test", has_supervisor: true, supervisor_id: supervisor.id } })

      // Spent: validate and accept both answer 404, nothing more is created.
      expect(yield* validate(token)).toMatchObject({ status: 404, body: notFoundBody })
      expect(yield* accept({ token, password: "another passphrase" })).toMatchObject({ status: 404, body: notFoundBody })
      expect(yield* auditActions("provider_invite", body.invite.id)).toEqual(["provider_invite.create", "provider_invite.accept"])
      expect(yield* auditActions("provider", profile!.id)).toEqual(["provider.create"])
      // The address now has an account: a new invite is refused.
      const again = yield* invite(admin, { email: "new.provider@invites.test", first_name: "N", last_name: "O", role: "provider" })
      expect(again.status).toBe(422)
      expect(again.body).toEqual({ errors: { email: ["has already been taken"] } })
    }))

  it.effect("an email that has an account is refused; a second invite replaces the first, whose link stops working", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      const admin = yield* adminToken
      yield* insertUser({ email: "taken@invites.test" })
      const taken = yield* invite(admin, { email: "TAKEN@invites.test", first_name: "T", last_name: "K", role: "supervisor" })
      expect(taken.status).toBe(422)
      expect(taken.body).toEqual({ errors: { email: ["has already been taken"] } })

      const client = yield* clientAs(admin)
      const { invite: a } = yield* client.providerInvites.create({ payload: { invite: { email: "twice@invites.test", first_name: "First", last_name: "Try", role: "provider" } } })
      const firstToken = yield* mailedToken("twice@invites.test")
      yield* TestClock.adjust("20 minutes")
      const [{ invite: b }, second] = yield* client.providerInvites.create({
        payload: { invite: { email: "Twice@invites.test", first_name: "Second", last_name: "Try", role: "supervisor" } }, withResponse: true
      })
      expect(second.status).toBe(201)
      const secondToken = yield* mailedToken("twice@invites.test")
      expect(secondToken).not.toBe(firstToken)
      expect(b.id).toBe(a.id)
      expect(b.created_at.getTime() - a.created_at.getTime()).toBe(20 * 60 * 1000)
      expect(b.role).toBe("supervisor")
      expect(yield* validate(firstToken)).toMatchObject({ status: 404, body: notFoundBody })
      expect(yield* accept({ token: firstToken, password: "a good passphrase" })).toMatchObject({ status: 404, body: notFoundBody })
      expect((yield* validate(secondToken)).body).toMatchObject({ invite: { first_name: "Second", role: "supervisor" } })
      const accepted = yield* accept({ token: secondToken, password: "a good passphrase" })
      expect(accepted.status).toBe(201)
      expect(accepted.body).toMatchObject({ user: { role: "supervisor", first_name: "Second" } })
      expect(yield* auditActions("provider_invite", a.id)).toEqual(["provider_invite.create", "provider_invite.replace", "provider_invite.accept"])
      // A supervisor invitee's profile holds the role: listed as a supervisor.
      const supervisors = yield* client.supervisors.list({ urlParams: { page_size: 100 } })
      expect(supervisors.supervisors.map((s) => s.email)).toContain("twice@invites.test")
    }))

  it.effect("an invite expires after 7 days: validate and accept answer 404", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      const admin = yield* adminToken
      yield* invite(admin, { email: "late@invites.test", first_name: "Late", last_name: "Comer", role: "provider" })
      const token = yield* mailedToken("late@invites.test")
      yield* TestClock.adjust(7 * 24 * 60 * 60 * 1000 - 1)
      expect((yield* validate(token)).status).toBe(200)
      yield* TestClock.adjust("1 millis")
      expect(yield* validate(token)).toMatchObject({ status: 404, body: notFoundBody })
      expect(yield* accept({ token, password: "a good passphrase" })).toMatchObject({ status: 404, body: notFoundBody })
      // A new invite to the address works again (the admin signs in again: days have passed).
      yield* invite(yield* adminToken, { email: "late@invites.test", first_name: "Late", last_name: "Comer", role: "provider" })
      expect((yield* accept({ token: yield* mailedToken("late@invites.test"), password: "a good passphrase" })).status).toBe(201)
    }))

  it.effect("two concurrent accepts of one invite: exactly one 201, one account", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const sql = yield* SqlClient.SqlClient
      for (let round = 0; round < 3; round++) {
        yield* forgetLimits
        const email = `race${round}@invites.test`
        yield* invite(admin, { email, first_name: "Race", last_name: "Condition", role: "provider" })
        const token = yield* mailedToken(email)
        const responses = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => accept({ token, password: `passphrase number ${i}` })),
          { concurrency: "unbounded" }
        )
        expect(responses.map((r) => r.status).sort()).toEqual([201, 404, 404, 404, 404, 404, 404, 404])
        expect(responses.filter((r) => r.status === 404).every((r) => JSON.stringify(r.body) === JSON.stringify(notFoundBody))).toBe(true)
        const users = yield* sql`SELECT 1 FROM users WHERE email = ${email}`
        expect(users).toHaveLength(1)
        const profiles = yield* sql`SELECT 1 FROM providers p JOIN users u ON u.id = p.user_id WHERE u.email = ${email}`
        expect(profiles).toHaveLength(1)
      }
    }))

  it.effect("refuses bad input with the general 422 shape, changing nothing", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      const admin = yield* adminToken
      const missing = yield* request("POST", "/v1/admin/clinic/providers/invites", { token: admin, body: { invite: { email: "x@invites.test" } } })
      expect(missing.status).toBe(422)
      expect(missing.body).toEqual({ errors: { first_name: ["can't be blank"], last_name: ["can't be blank"], role: ["can't be blank"] } })
      const role = yield* invite(admin, { email: "role@invites.test", first_name: "R", last_name: "L", role: "admin" })
      expect(role.body).toEqual({ errors: { role: ["is not included in the list"] } })
      const email = yield* invite(admin, { email: "not-an-email", first_name: "R", last_name: "L", role: "provider" })
      expect(email.body).toEqual({ errors: { email: ["is invalid"] } })
      const plain = yield* makeProvider(admin, "provider")
      const notSupervisor = yield* invite(admin, { email: "sup@invites.test", first_name: "R", last_name: "L", role: "provider", supervisor_id: plain.id })
      expect(notSupervisor.status).toBe(422)
      expect(notSupervisor.body).toEqual({ errors: { supervisor_id: ["must exist"] } })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM provider_invites WHERE email IN ('role@invites.test', 'sup@invites.test')`).toHaveLength(0)

      yield* invite(admin, { email: "input@invites.test", first_name: "In", last_name: "Put", role: "provider" })
      const token = yield* mailedToken("input@invites.test")
      const short = yield* accept({ token, password: "short" })
      expect(short.status).toBe(422)
      expect(short.body).toEqual({ errors: { password: ["is too short (minimum is 8 characters)"] } })
      const phone = yield* accept({ token, password: "a good passphrase", phone: "12" })
      expect(phone.status).toBe(422)
      expect(phone.body).toEqual({ errors: { phone: ["is invalid"] } })
      const noToken = yield* accept({ password: "a good passphrase" })
      expect(noToken.body).toEqual({ errors: { token: ["can't be blank"] } })
      const noQuery = yield* request("GET", "/v1/admin/clinic/providers/invites/validate")
      expect(noQuery.status).toBe(422)
      expect(noQuery.body).toEqual({ errors: { token: ["can't be blank"] } })
      // Still pending and usable.
      expect((yield* accept({ token, password: "a good passphrase" })).status).toBe(201)
    }))

  it.effect("the invite's supervisor is dropped at acceptance when it no longer supervises", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      const admin = yield* adminToken
      const supervisor = yield* makeProvider(admin, "supervisor")
      yield* invite(admin, { email: "orphan@invites.test", first_name: "Or", last_name: "Phan", role: "provider", supervisor_id: supervisor.id })
      expect((yield* put(admin, supervisor.id, { active: false })).status).toBe(200)
      const accepted = yield* accept({ token: yield* mailedToken("orphan@invites.test"), password: "a good passphrase" })
      expect(accepted.status).toBe(201)
      const sql = yield* SqlClient.SqlClient
      const [profile] = yield* sql<{ supervisor_id: number | null }>`SELECT supervisor_id FROM providers p JOIN users u ON u.id = p.user_id WHERE u.email = 'orphan@invites.test'`
      expect(profile?.supervisor_id).toBeNull()
      const inactive = yield* invite(admin, { email: "orphan2@invites.test", first_name: "Or", last_name: "Phan", role: "provider", supervisor_id: supervisor.id })
      expect(inactive.body).toEqual({ errors: { supervisor_id: ["must be an active supervisor"] } })
    }))

  it.effect("an invite whose email cannot be sent is not kept: 503 with Retry-After", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      yield* (yield* MemoryMailer).failNext("smtp down")
      const failed = yield* invite(admin, { email: "unsent@invites.test", first_name: "Un", last_name: "Sent", role: "provider" })
      expect(failed.status).toBe(503)
      expect(failed.body).toEqual({ errors: "Service temporarily unavailable" })
      expect(failed.headers["retry-after"]).toBe("5")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM provider_invites WHERE email = 'unsent@invites.test'`).toHaveLength(0)
    }))

  it.effect("validate and accept are rate-limited per client address (429 with Retry-After)", () =>
    Effect.gen(function*() {
      yield* forgetLimits
      for (let i = 0; i < 10; i++) expect((yield* validate(`unknown-token-${i}`)).status).toBe(404)
      const limited = yield* validate("unknown-token-x")
      expect(limited.status).toBe(429)
      expect(limited.body).toEqual({ errors: "Too many requests; try again later" })
      expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      for (let i = 0; i < 10; i++) expect((yield* accept({ token: `unknown-${i}`, password: "a good passphrase" })).status).toBe(404)
      expect((yield* accept({ token: "unknown-x", password: "a good passphrase" })).status).toBe(429)
      yield* TestClock.adjust("1 minute")
      expect((yield* validate("unknown-token-y")).status).toBe(404)
    }))
})

