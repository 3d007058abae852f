import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { mkdtemp, writeFile } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { pgClientLayer, runMigrations, sqlFileLoader, withSessionOptions } from "../../src/Layers/Database.js"
import { NodeFileSystem } from "@effect/platform-node"
import { freshDatabase } from "../support/database.js"

const emptyDatabase = Layer.unwrapScoped(
  Effect.map(freshDatabase({ migrated: false }), ({ url }) => pgClientLayer(Redacted.make(url), 6))
)

describe("migrations", () => {
  it.scoped("load numbered .sql files in numeric order, ignoring other files", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "cc-mig-")))
      for (const [name, text] of [["0010_later.sql", "SELECT 10"], ["0002_second.sql", "SELECT 2"], ["README.md", "x"], ["0001_first.sql", "SELECT 1"]]) {
        yield* Effect.promise(() => writeFile(path.join(dir, name!), text!))
      }
      const loaded = yield* sqlFileLoader(dir).pipe(Effect.provide(NodeFileSystem.layer))
      expect(loaded.map(([id, name]) => [id, name])).toEqual([[1, "first"], [2, "second"], [10, "later"]])
    }))

  it.scoped("apply once, are recorded, and a second run applies nothing", () =>
    Effect.gen(function*() {
      const first = yield* runMigrations()
      expect(first.length).toBeGreaterThan(0)
      expect(first[0]).toEqual([1, "foundation"])
      const second = yield* runMigrations()
      expect(second).toEqual([])
      const sql = yield* SqlClient.SqlClient
      const recorded = yield* sql<{ migration_id: number }>`SELECT migration_id FROM schema_migrations ORDER BY migration_id`
      expect(recorded.map((r) => r.migration_id)).toEqual(first.map(([id]) => id))
      const tables = yield* sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`
      expect(tables.map((t) => t.tablename)).toEqual(expect.arrayContaining(["schema_migrations", "user_tokens", "users"]))
    }).pipe(Effect.provide(emptyDatabase)))

  it.scoped("two instances starting at once apply each migration exactly once", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabase({ migrated: false })
      const instance = runMigrations().pipe(Effect.provide(pgClientLayer(Redacted.make(url), 2)))
      const [a, b] = yield* Effect.all([instance, instance], { concurrency: 2 })
      // One instance did the work; the other waited on the lock and found nothing left to do.
      expect([a.length === 0, b.length === 0].sort()).toEqual([false, true])
      const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM schema_migrations`
      ).pipe(Effect.provide(pgClientLayer(Redacted.make(url), 1)))
      expect(rows[0]!.n).toBe(Math.max(a.length, b.length))
    }))
})

describe("session settings", () => {
  const setting = (url: string, name: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ value: string }>`SELECT current_setting(${name}) AS value`
      return rows[0]!.value
    }).pipe(Effect.provide(pgClientLayer(Redacted.make(url), 1)))

  it.scoped("the app's connections run with JIT off, keeping options the URL already gives", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabase({ migrated: false })
      expect(yield* setting(url, "jit")).toBe("off")
      const withOptions = new URL(url)
      withOptions.searchParams.set("options", "-c statement_timeout=7000")
      expect(yield* setting(withOptions.toString(), "statement_timeout")).toBe("7s")
      expect(yield* setting(withOptions.toString(), "jit")).toBe("off")
    }))

  it("a URL that does not parse is used as it is", () => {
    expect(Redacted.value(withSessionOptions(Redacted.make("not a url")))).toBe("not a url")
  })
})
