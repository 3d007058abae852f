/**
 * graphile-worker (0.17: the last line that runs on Node 20), loaded with its first use, and its
 * messages routed through Effect's logger.
 */
import { Effect, Redacted, Runtime } from "effect"
import type { Logger } from "graphile-worker"

type GraphileWorker = typeof import("graphile-worker")

/**
 * The CommonJS module's exports: Node's ESM loader and the esbuild bundle both put them on
 * `default`, while only Node also names them (the bundle misses re-exported getters like `Logger`).
 */
export const graphileWorker = Effect.promise(() =>
  import("graphile-worker").then((module) => (module as GraphileWorker & { default?: GraphileWorker }).default ?? module))

/** graphile-worker's messages as the app's log lines (`component: jobs`); its debug chatter is dropped. */
export const workerLogger = <R>(runtime: Runtime.Runtime<R>) =>
  Effect.map(graphileWorker, ({ Logger }): Logger =>
    new Logger(() => (level, message) => {
      const log = level === "error" ? Effect.logError : level === "warning" ? Effect.logWarning : level === "info" ? Effect.logInfo : undefined
      if (log) Runtime.runSync(runtime)(log(message).pipe(Effect.annotateLogs("component", "jobs")))
    }))

/**
 * Installs or upgrades graphile-worker's own schema (`graphile_worker`), after the app's
 * migrations. Instances starting together are safe: graphile-worker detects a migration another
 * instance applied first and carries on.
 */
export const runJobQueueMigrations = (url: Redacted.Redacted) =>
  Effect.gen(function*() {
    const { runMigrations } = yield* graphileWorker
    const logger = yield* workerLogger(yield* Effect.runtime<never>())
    yield* Effect.tryPromise(() => runMigrations({ connectionString: Redacted.value(url), logger }))
  }).pipe(Effect.orDie, Effect.withSpan("Jobs.migrate"))
