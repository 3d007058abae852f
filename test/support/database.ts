/** A database of this test file's own, cloned from the migrated template and dropped after it (in the background). */
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"
import { pgClientLayer } from "../../src/Layers/Database.js"
import { withDatabase } from "./databaseUrl.js"

/** One statement on the server's maintenance connection (CREATE/DROP DATABASE cannot run in a pool's transaction). */
export const adminQuery = async (text: string): Promise<void> => {
  const client = new pg.Client({ connectionString: inject("databaseUrl") })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

let drops: Promise<void> = Promise.resolve()

/**
 * Drops in the background, one at a time: every DROP DATABASE forces a checkpoint of the whole
 * server, which the next test file need not wait for. The global teardown drops what is left
 * when the run ends (test/support/globalSetup.ts).
 */
const dropLater = (name: string) => {
  drops = drops.then(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {})
}

/** Creates an empty (`template: false`) or migrated database; yields its URL; drops it after release. */
export const freshDatabase = (options: { readonly migrated: boolean } = { migrated: true }) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = `${inject("testDatabasePrefix")}${randomBytes(6).toString("hex")}`
      yield* Effect.promise(() => adminQuery(`CREATE DATABASE ${name}${options.migrated ? ` TEMPLATE ${inject("templateDatabase")}` : ""}`))
      return { name, url: withDatabase(inject("databaseUrl"), name) }
    }),
    ({ name }) => Effect.sync(() => dropLater(name))
  )

/** SqlClient on a fresh migrated database. */
export const TestSqlLive = Layer.unwrapScoped(
  Effect.map(freshDatabase(), ({ url }) => pgClientLayer(Redacted.make(url), 4))
)
