/**
 * The job queue on graphile-worker. Jobs are added with
 * plain SQL through the app's own connection, so they join the caller's transaction; the worker
 * runs the task list inside the app with its own small pool, and several instances share the queue
 * (graphile-worker locks each job with SKIP LOCKED, and each cron tick is taken by one instance).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Redacted, Runtime, Schema, Scope } from "effect"
import type { CronItem, Runner, TaskList, WorkerEvents } from "graphile-worker"
import { EventEmitter } from "node:events"
import { AppConfig } from "../Services/AppConfig.js"
import { keepAlive } from "../Services/Heartbeats.js"
import { type AnyJobTask, type JobContext, Jobs } from "../Services/Jobs.js"
import { DatabaseUrl } from "./Database.js"
import { graphileWorker, workerLogger } from "./GraphileWorker.js"

/** `Jobs` over the app's SqlClient: `graphile_worker.add_job` / `remove_job`. */
export const PgJobsLive = Layer.effect(
  Jobs,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Jobs.of({
      enqueue: Effect.fn("Jobs.enqueue")(function*(task, payload, options = {}) {
        yield* Effect.annotateCurrentSpan({ "job.task": task.name })
        const encoded = yield* Schema.encode(task.payload)(payload)
        yield* sql`SELECT graphile_worker.add_job(
            ${task.name}::text,
            ${JSON.stringify(encoded)}::json,
            run_at => ${options.runAt ?? null}::timestamptz,
            max_attempts => ${options.maxAttempts ?? null}::int,
            job_key => ${options.jobKey ?? null}::text
          )`
      }, Effect.orDie),
      cancel: Effect.fn("Jobs.cancel")(function*(jobKey) {
        yield* sql`SELECT graphile_worker.remove_job(${jobKey}::text)`
      }, Effect.orDie)
    })
  })
)

/** A recurring job: `pattern` is a crontab time (UTC), e.g. `0 * * * *` for hourly. */
export interface JobSchedule {
  readonly task: AnyJobTask
  readonly pattern: string
}

/**
 * The worker's own pool, ended (and waited for) when its scope closes: graphile-worker ends a pool
 * it made without waiting, which could cut the recording of a job that just finished.
 */
const workerPool = (url: Redacted.Redacted, max: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const { default: pg } = await import("pg")
      const pool = new pg.Pool({ connectionString: Redacted.value(url), max })
      // A client losing its connection must not crash the process; graphile-worker reconnects.
      pool.on("error", () => {})
      pool.on("connect", (client) => client.on("error", () => {}))
      return pool
    }),
    (pool) => Effect.promise(() => pool.end())
  )

/**
 * Completions and failures through graphile-worker's batchers, which a stop flushes: unbatched they
 * are fire-and-forget, and a stop right after a job could lose its completion (it would run again).
 */
const flushedOnStop = { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } }

/** One job run: the payload decoded by the task's schema, a span with ids only, failures logged with the trace. */
const runJob = <R>(task: AnyJobTask<R>, payload: unknown, job: JobContext) =>
  Schema.decodeUnknown(task.payload)(payload).pipe(
    Effect.flatMap((decoded) => task.run(decoded, job)),
    Effect.tapErrorCause((cause) => Effect.logError("job failed", cause)),
    Effect.annotateLogs({ "job.id": job.id, "job.task": task.name, "job.attempt": job.attempt }),
    Effect.withSpan(`job ${task.name}`, {
      kind: "consumer",
      attributes: { "job.id": job.id, "job.task": task.name, "job.attempt": job.attempt, "job.max_attempts": job.maxAttempts }
    })
  )

/** The tasks as graphile-worker calls them: each run is an Effect on the app's runtime. */
export const taskList = <R>(tasks: ReadonlyArray<AnyJobTask<R>>, runtime: Runtime.Runtime<R>): TaskList =>
  Object.fromEntries(tasks.map((task) => [
    task.name,
    (payload, helpers) =>
      Runtime.runPromise(runtime)(runJob(task, payload, {
        id: helpers.job.id,
        attempt: helpers.job.attempts,
        maxAttempts: helpers.job.max_attempts
      }))
  ]))

/**
 * Runs the queue inside this instance (unless `JOBS_ENABLED=false`: an API-only instance). On
 * shutdown the runner stops taking jobs; jobs in flight finish, or are released for another
 * instance when they outlast graphile-worker's grace period. The worker pool beats a heartbeat
 * under the id its job locks carry, from its start until it has stopped: should the process die,
 * other instances release its locks once that heartbeat is stale (../Services/Recovery.ts).
 */
export const JobWorkerLive = <R>(
  tasks: ReadonlyArray<AnyJobTask<R>>,
  schedules: ReadonlyArray<JobSchedule> = []
): Layer.Layer<never, never, R | AppConfig | DatabaseUrl | SqlClient.SqlClient> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const config = yield* AppConfig
    if (!config.jobs.enabled) return
    const url = yield* DatabaseUrl
    const runtime = yield* Effect.runtime<R>()
    const { parseCronItems, run } = yield* graphileWorker
    const logger = yield* workerLogger(runtime)
    const crontab: Array<CronItem> = schedules.map(({ pattern, task }) => ({ task: task.name, match: pattern, identifier: task.name }))
    const pgPool = yield* workerPool(url, config.jobs.concurrency + 2)
    // graphile-worker locks jobs with its pool's id, which only its `pool:create` event tells.
    const events: WorkerEvents = new EventEmitter()
    let poolId: string | undefined
    events.on("pool:create", ({ workerPool }) => (poolId ??= workerPool.id))
    // The heartbeat's scope is closed after the runner has stopped (finalizers run in reverse).
    const heartbeat = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(heartbeat, Exit.void))
    yield* Effect.acquireRelease(
      Effect.tryPromise(() =>
        run({
          pgPool,
          concurrency: config.jobs.concurrency,
          pollInterval: config.jobs.pollIntervalMs,
          noHandleSignals: true,
          logger,
          taskList: taskList(tasks, runtime),
          parsedCronItems: parseCronItems(crontab),
          preset: flushedOnStop,
          events
        })
      ).pipe(Effect.orDie),
      (runner: Runner) =>
        Effect.promise(() => runner.stop()).pipe(Effect.zipRight(Effect.logInfo("job worker stopped")))
    )
    if (poolId === undefined) return yield* Effect.dieMessage("graphile-worker started without announcing its pool")
    yield* keepAlive(poolId).pipe(Scope.extend(heartbeat))
    yield* Effect.logInfo("job worker started").pipe(Effect.annotateLogs("jobs.concurrency", config.jobs.concurrency))
  }))

/**
 * Runs every job that is due now, once, then returns (graphile-worker's `runOnce`): for tests and
 * one-off maintenance; jobs that fail are left for their retry as usual.
 */
export const runDueJobs = <R>(tasks: ReadonlyArray<AnyJobTask<R>>) =>
  Effect.gen(function*() {
    const pgPool = yield* workerPool(yield* DatabaseUrl, 2)
    const runtime = yield* Effect.runtime<R>()
    const { runOnce } = yield* graphileWorker
    const logger = yield* workerLogger(runtime)
    yield* Effect.tryPromise(() =>
      runOnce({ pgPool, noHandleSignals: true, logger, taskList: taskList(tasks, runtime), preset: flushedOnStop })
    ).pipe(Effect.orDie)
  }).pipe(Effect.scoped)
