import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { UserId } from "../../../src/Domain/Ids.js"
import { admin, clientAs, request, signIn, TestApp } from "../../support/app.js"

layer(TestApp())("sign in and sign out", (it) => {
  it.effect("signs the bootstrap admin in with a token and the user representation", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", "/v1/users/sign_in", {
        body: { user: { email: admin.email.toUpperCase(), password: admin.password } }
      })
      expect(response.status).toBe(200)
      const body = response.body as { token: string; user: Record<string, unknown> }
      expect(Buffer.from(body.token, "base64url").length).toBeGreaterThanOrEqual(32)
      expect(Object.keys(body.user).sort()).toEqual([
        "active", "clinical", "confirmed", "created_at", "date_of_birth", "email", "first_name", "id",
        "language", "last_name", "phone", "role", "updated_at"
      ])
      expect(body.user).toMatchObject({ email: admin.email, role: "admin", active: true, confirmed: true, language: "en" })
      expect(body.user.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    }))

  it.effect("wrong password and unknown email both give the same 401", () =>
    Effect.gen(function*() {
      for (const user of [{ email: admin.email, password: "nope-nope" }, { email: "nobody@example.test", password: "whatever1" }]) {
        const response = yield* request("POST", "/v1/users/sign_in", { body: { user } })
        expect(response.status).toBe(401)
        expect(response.body).toEqual({ errors: "Invalid email or password" })
      }
    }))

  it.effect("stores only the SHA-256 of a token", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ token_hash: Buffer }>`SELECT token_hash FROM user_tokens`
      const hashes = rows.map((r) => Buffer.from(r.token_hash).toString("hex"))
      expect(hashes).toContain(createHash("sha256").update(token).digest("hex"))
      const dump = JSON.stringify(yield* sql`SELECT * FROM user_tokens`)
      expect(dump).not.toContain(token)
    }))

  it.effect("a token authenticates until sign out revokes exactly that token", () =>
    Effect.gen(function*() {
      const first = yield* signIn()
      const second = yield* signIn()
      expect((yield* request("GET", "/v1/admin/clinic/users/1", { token: first })).status).toBe(200)
      const out = yield* request("DELETE", "/v1/users/sign_out", { token: first })
      expect(out.status).toBe(204)
      expect(out.body).toBeUndefined()
      const after = yield* request("GET", "/v1/admin/clinic/users/1", { token: first })
      expect(after.status).toBe(401)
      expect(after.body).toEqual({ errors: "You are not authorized to perform this action." })
      expect((yield* request("GET", "/v1/admin/clinic/users/1", { token: second })).status).toBe(200)
    }))

  it.effect("missing and unknown tokens give the 401 body", () =>
    Effect.gen(function*() {
      for (const token of [undefined, "", "not-a-token", "x".repeat(5000)]) {
        const response = yield* request("DELETE", "/v1/users/sign_out", token === undefined ? {} : { token })
        expect(response.status).toBe(401)
        expect(response.body).toEqual({ errors: "You are not authorized to perform this action." })
      }
    }))

  it.effect("records last_login at sign in", () =>
    Effect.gen(function*() {
      const { user } = yield* (yield* clientAs(yield* signIn())).adminUsers.show({ path: { id: UserId.make(1) } })
      expect(user.last_login).not.toBeNull()
      expect(Date.now() - user.last_login!.getTime()).toBeLessThan(60_000)
    }))
})

describe("bootstrap admin", () => {
  layer(TestApp())((it) => {
    it.effect("is created once, confirmed and active", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ role: string; confirmed: boolean; status: string }>`SELECT role, confirmed, status FROM users WHERE lower(email) = ${admin.email}`
        expect(rows).toEqual([{ role: "admin", confirmed: true, status: "active" }])
        // The admin's row (migration 0012's system user has no usable hash).
        expect((yield* sql`SELECT password_hash FROM users WHERE lower(email) = ${admin.email}`)[0]?.password_hash).toMatch(/^scrypt\$/)
      }))
  })
})
