/**
 * The system account: an ordinary users row of its own kind that performs what the service records
 * by itself. It is created at start-up after the bootstrap admin, can never sign in or be changed,
 * and no list or count shows it. The upgrade from the fixed id 2147483647 moves its work.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { migrationsDir, pgClientLayer, runMigrations } from "../../../src/Layers/Database.js"
import { UsersRepo } from "../../../src/Services/Accounts/UsersRepo.js"
import { admin, clientAs, request, signIn, TestApp } from "../../support/app.js"
import { seedDatabaseBeforeSystemAccount } from "../../support/fixtures.js"
import { freshDatabase } from "../../support/database.js"

const systemEmail = "system@care-coordination.invalid"

const systemRow = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ id: number; email: string; status: string; deleted: boolean; password_hash: string }>`
    SELECT id, email, status, deleted_at IS NOT NULL AS deleted, password_hash FROM users WHERE system`).pipe(Effect.orDie)

layer(TestApp())("system account", (it) => {
  it.effect("exists once, with an ordinary id taken after the bootstrap admin's; creating it again changes nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [system] = yield* systemRow
      expect(system).toEqual({ id: expect.any(Number), email: systemEmail, status: "inactive", deleted: true, password_hash: "!" })
      const [first] = yield* sql<{ id: number; email: string }>`SELECT id, email FROM users ORDER BY id LIMIT 1`
      expect(first).toEqual({ id: 1, email: admin.email })
      expect(system!.id).toBeGreaterThan(1)
      expect(system!.id).toBeLessThan(2147483647)
      expect(yield* sql`SELECT 1 FROM users WHERE id = 2147483647`).toEqual([])
      const again = yield* Effect.flatMap(UsersRepo, (users) => users.ensureSystemAccount)
      expect(again).toBe(system!.id)
      expect(yield* systemRow).toHaveLength(1)
    }))

  it.effect("cannot sign in, reset its password, or be found, changed or counted by the admin endpoints", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const token = yield* signIn()
      const [system] = yield* systemRow
      for (const password of ["!", "anything-at-all"]) {
        const refused = yield* request("POST", "/v1/users/sign_in", { body: { user: { email: systemEmail, password } } })
        expect(refused.status).toBe(401)
      }
      yield* request("POST", "/v1/users/passwords", { body: { email: systemEmail } })
      expect(yield* sql`SELECT 1 FROM password_reset_tokens WHERE user_id = ${system!.id}`).toEqual([])
      for (const [method, url] of [["GET", `/v1/admin/clinic/users/${system!.id}`], ["PUT", `/v1/admin/clinic/users/${system!.id}`],
        ["POST", `/v1/admin/clinic/users/${system!.id}/unarchive`], ["DELETE", `/v1/admin/clinic/users/${system!.id}`]] as const) {
        const response = yield* request(method, url, { token, body: method === "PUT" ? { user: { active: true } } : undefined })
        expect(response.status, `${method} ${url}`).toBe(404)
      }
      const client = yield* clientAs(token)
      const listed = yield* client.adminUsers.list({ urlParams: { search: "care-coordination.invalid" } })
      expect(listed.users).toEqual([])
      const dashboard = yield* client.adminUsers.dashboard()
      const [live] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM users WHERE deleted_at IS NULL AND NOT system`
      expect(dashboard.total_users).toBe(live!.count)
      // The database itself refuses to make it an account that could sign in.
      for (const change of [sql`UPDATE users SET deleted_at = NULL WHERE system`, sql`UPDATE users SET status = 'active' WHERE system`,
        sql`UPDATE users SET password_hash = 'scrypt$x' WHERE system`]) {
        const failed = yield* Effect.flip(change)
        expect(String((failed.cause as { code?: string }).code)).toBe("23514")
      }
    }))
})

describe("upgrade from the system user of id 2147483647", () => {
  it.scoped("moves its work to the new account and removes the old row; the append-only audit trail keeps the old id", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabase({ migrated: false })
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "cc-migrations-"))),
        (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
      )
      const files = yield* Effect.promise(() => readdir(migrationsDir))
      const copy = (keep: (n: number) => boolean) =>
        Effect.promise(() => Promise.all(files.filter((f) => /^\d+_.*\.sql$/.test(f) && keep(parseInt(f, 10)))
          .map((f) => copyFile(path.join(migrationsDir, f), path.join(dir, f)))))
      const migrate = runMigrations(dir)
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* copy((n) => n < 31)
        yield* migrate
        // A database in use: an admin, a case load whose outreach coordinator slot holds the old id, an audit entry.
        const patient = yield* seedDatabaseBeforeSystemAccount

        yield* copy(() => true)
        yield* migrate
        const [system] = yield* systemRow
        expect(system).toMatchObject({ email: systemEmail, status: "inactive", deleted: true, password_hash: "!" })
        expect(system!.id).toBeLessThan(2147483647)
        expect(yield* sql`SELECT 1 FROM users WHERE id = 2147483647`).toEqual([])
        expect(yield* sql`SELECT olcm_user_id FROM case_loads WHERE patient_id = ${patient}`).toEqual([{ olcm_user_id: system!.id }])
        expect(yield* sql`SELECT actor_id FROM audit_events WHERE action = 'ecm_sms.receive'`).toEqual([{ actor_id: 2147483647 }])
      }).pipe(Effect.provide(pgClientLayer(Redacted.make(url), 2)))
    }))
})
