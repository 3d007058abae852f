/**
 * The machine's tools first (scripts/test-prerequisites.sh), then one PostgreSQL for the whole
 * run: DATABASE_URL when set, else an embedded server in a temp directory. Migrations are applied
 * once to a template database; each test file clones it.
 */
import { Effect, Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtemp, chmod, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import type { TestProject } from "vitest/node"
import { pgClientLayer, runMigrations } from "../../src/Layers/Database.js"
import { startEmbeddedPostgres } from "../../src/Layers/EmbeddedPostgres.js"
import { runJobQueueMigrations } from "../../src/Layers/GraphileWorker.js"
import { UsersRepo } from "../../src/Services/Accounts/UsersRepo.js"
import { Catalogue } from "../../src/Services/Questionnaires/Catalogue.js"
import { withDatabase } from "./databaseUrl.js"
import { admin, fixtureHash } from "./fixtures.js"

/**
 * What every test app would do at its first start, done once here: the questionnaire catalogue
 * seeded, and the bootstrap admin created (with a fixture hash, so signing in as the admin costs
 * little). Each app still runs both steps at start-up and finds them done.
 */
const firstStart = Effect.gen(function*() {
  yield* Effect.flatMap(Catalogue, (catalogue) => catalogue.seed())
  const users = yield* UsersRepo
  yield* users.insertIfAbsent({
    email: admin.email, password_hash: fixtureHash(admin.password), first_name: "Admin", last_name: "User", role: "admin", confirmed: true
  })
}).pipe(Effect.provide(Layer.merge(Catalogue.Default, UsersRepo.Default)))

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string
    templateDatabase: string
    /** Every test database of this run starts with it, so the teardown finds what is left. */
    testDatabasePrefix: string
  }
}

/** ffmpeg and Chromium: installed when missing and possible, else the run stops here saying what to install. */
const ensureMachineTools = () => {
  const script = fileURLToPath(new URL("../../scripts/test-prerequisites.sh", import.meta.url))
  const run = spawnSync("sh", [script], { stdio: "inherit" })
  if (run.status !== 0) throw new Error("The tests' prerequisites are missing (see the message above)")
}

export default async function setup(project: TestProject) {
  ensureMachineTools()
  let serverUrl = process.env.DATABASE_URL
  let stopServer: (() => Promise<void>) | undefined
  let tempDir: string | undefined
  if (!serverUrl) {
    tempDir = await mkdtemp(path.join(os.tmpdir(), "cc-api-test-"))
    // The embedded server may run as the `postgres` user, which must be able to enter the directory.
    await chmod(tempDir, 0o755)
    const server = await startEmbeddedPostgres({ dataDir: path.join(tempDir, "pg"), persistent: false })
    serverUrl = server.url
    stopServer = server.stop
  }
  const template = `cc_template_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${template}`)
  const templateUrl = Redacted.make(withDatabase(serverUrl, template))
  await Effect.runPromise(
    Effect.zipRight(runMigrations(), runJobQueueMigrations(templateUrl)).pipe(
      Effect.zipRight(firstStart),
      Effect.provide(pgClientLayer(templateUrl, 2))
    )
  )
  project.provide("databaseUrl", serverUrl)
  project.provide("templateDatabase", template)
  const testDatabasePrefix = `cc_test_${process.pid}_`
  project.provide("testDatabasePrefix", testDatabasePrefix)

  return async () => {
    // Test files drop their databases in the background; the last ones may still be there.
    const left = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [testDatabasePrefix])
    for (const { datname } of left.rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`)
    await admin.end()
    await stopServer?.()
    if (tempDir) await rm(tempDir, { recursive: true, force: true })
  }
}
