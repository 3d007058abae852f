/**
 * The job queue against real PostgreSQL: jobs join the caller's transaction, job keys replace,
 * two workers never run a job twice, shutdown lets a running job finish, failures are logged with
 * their trace, and the in-memory layer behaves like the real one.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, FiberRef, FiberRefs, Layer, Logger, Option, Redacted, Ref, Schema, Scope, Tracer } from "effect"
import { DatabaseUrl, pgClientLayer } from "../../src/Layers/Database.js"
import { JobWorkerLive, PgJobsLive, runDueJobs } from "../../src/Layers/Jobs.js"
import { MemoryJobs } from "../../src/Layers/MemoryJobs.js"
import { defineTask, Jobs } from "../../src/Services/Jobs.js"
import { freshDatabase } from "../support/database.js"
import { testConfig } from "./fixtures.js"

/** A fresh migrated database (graphile_worker schema included), its SqlClient, URL and `Jobs`. */
const QueueLive = Layer.unwrapScoped(Effect.map(freshDatabase(), ({ url }) =>
  PgJobsLive.pipe(
    Layer.provideMerge(pgClientLayer(Redacted.make(url), 4)),
    Layer.merge(Layer.succeed(DatabaseUrl, Redacted.make(url)))
  )))

const Note = Schema.Struct({ note: Schema.String, at: Schema.DateFromString })

/** Records each run in a table, so runs are counted by PostgreSQL, not by the test. */
const record = defineTask({
  name: "test.record",
  payload: Note,
  run: (payload, job) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO test_job_runs (job_id, note, at) VALUES (${job.id}, ${payload.note}, ${payload.at})`)
})

const pendingJobs = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ task_identifier: string; payload: unknown; job_key: string | null; run_at: Date; attempts: number; last_error: string | null }>`
    SELECT t.identifier AS task_identifier, j.payload, j.key AS job_key, j.run_at, j.attempts, j.last_error
    FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id ORDER BY j.id`)

const runs = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ job_id: string; note: string }>`SELECT job_id, note FROM test_job_runs ORDER BY note`)

const createRunsTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`CREATE TABLE IF NOT EXISTS test_job_runs (job_id text NOT NULL, note text NOT NULL, at timestamptz NOT NULL)`)

const at = new Date("2030-01-02T03:04:05.000Z")

layer(QueueLive)("Jobs on PostgreSQL", (it) => {
  it.effect("a job joins the caller's transaction: rolled back with it, committed with it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Jobs
      yield* createRunsTable
      const rolledBack = yield* sql.withTransaction(
        Effect.zipRight(jobs.enqueue(record, { note: "rolled back", at }), Effect.fail("boom" as const))
      ).pipe(Effect.exit)
      expect(Exit.isFailure(rolledBack)).toBe(true)
      expect(yield* pendingJobs).toEqual([])

      yield* sql.withTransaction(jobs.enqueue(record, { note: "kept", at }, { maxAttempts: 3 }))
      const [job] = yield* pendingJobs
      expect(job?.task_identifier).toBe("test.record")
      // The payload is stored encoded by the task's schema (the date as text).
      expect(job?.payload).toEqual({ note: "kept", at: at.toISOString() })

      yield* runDueJobs([record])
      expect((yield* runs).map((run) => run.note)).toEqual(["kept"])
      expect(yield* pendingJobs).toEqual([])
    }))

  it.effect("a job key replaces the pending job (payload and time); cancel removes it", () =>
    Effect.gen(function*() {
      const jobs = yield* Jobs
      const later = new Date(Date.now() + 3_600_000)
      const latest = new Date(Date.now() + 7_200_000)
      yield* jobs.enqueue(record, { note: "first", at }, { jobKey: "reminder:1", runAt: later })
      yield* jobs.enqueue(record, { note: "moved", at }, { jobKey: "reminder:1", runAt: latest })
      yield* jobs.enqueue(record, { note: "other", at }, { jobKey: "reminder:2", runAt: later })
      const pending = yield* pendingJobs
      expect(pending.map((job) => [job.job_key, (job.payload as { note: string }).note, job.run_at.toISOString()])).toEqual([
        ["reminder:1", "moved", latest.toISOString()],
        ["reminder:2", "other", later.toISOString()]
      ])
      yield* jobs.cancel("reminder:1")
      expect((yield* pendingJobs).map((job) => job.job_key)).toEqual(["reminder:2"])
      yield* jobs.cancel("reminder:2")
      // A job not yet due is not run by a pass over the due ones.
      yield* jobs.enqueue(record, { note: "not yet", at }, { runAt: later })
      yield* runDueJobs([record])
      expect((yield* pendingJobs).map((job) => (job.payload as { note: string }).note)).toEqual(["not yet"])
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT graphile_worker.remove_job(key) FROM graphile_worker.jobs`)
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM graphile_worker._private_jobs`)
    }))

  it.effect("two workers on one database: 100 jobs run exactly 100 times", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Jobs
      yield* createRunsTable
      yield* sql`TRUNCATE test_job_runs`
      const done = yield* Deferred.make<void>()
      const count = yield* Ref.make(0)
      const counted = defineTask({
        name: "test.counted",
        payload: Note,
        run: (payload, job) =>
          Effect.zipRight(record.run(payload, job), Ref.updateAndGet(count, (n) => n + 1)).pipe(
            Effect.flatMap((n) => (n === 100 ? Deferred.succeed(done, undefined) : Effect.void))
          )
      })
      yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) =>
        jobs.enqueue(counted, { note: `job-${String(i).padStart(3, "0")}`, at }), { discard: true })

      const twoWorkers = Layer.merge(JobWorkerLive([counted]), JobWorkerLive([counted])).pipe(
        Layer.provide(testConfig({ jobs: { enabled: true, concurrency: 4, pollIntervalMs: 200 } }))
      )
      yield* Effect.scoped(Effect.zipRight(Layer.build(twoWorkers), Deferred.await(done)))

      const all = yield* runs
      expect(all).toHaveLength(100)
      expect(new Set(all.map((run) => run.job_id)).size).toBe(100)
      expect(new Set(all.map((run) => run.note)).size).toBe(100)
      expect(yield* Ref.get(count)).toBe(100)
      expect(yield* pendingJobs).toEqual([])
    }))

  it.effect("shutdown lets a running job finish before the worker stops", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Jobs
      yield* createRunsTable
      yield* sql`TRUNCATE test_job_runs`
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const slow = defineTask({
        name: "test.slow",
        payload: Note,
        run: (payload, job) =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Deferred.await(release)),
            Effect.zipRight(record.run(payload, job))
          )
      })
      yield* jobs.enqueue(slow, { note: "in flight", at })
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        JobWorkerLive([slow]).pipe(Layer.provide(testConfig({ jobs: { enabled: true, concurrency: 1, pollIntervalMs: 200 } }))),
        scope
      )
      yield* Deferred.await(started)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Deferred.succeed(release, undefined)
      yield* closing.await
      expect((yield* runs).map((run) => run.note)).toEqual(["in flight"])
      expect(yield* pendingJobs).toEqual([])
    }))

  it.effect("a failing job is kept for retry with its error, and logged with its trace and ids", () =>
    Effect.gen(function*() {
      const jobs = yield* Jobs
      const lines = yield* Ref.make<ReadonlyArray<{ message: unknown; annotations: Record<string, unknown>; traced: boolean }>>([])
      const capture = Logger.make(({ annotations, context, message }) => {
        // The line's trace: what the JSON logger writes as trace_id (src/Layers/Logging.ts).
        const traced = Option.isSome(Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan))
        Effect.runSync(Ref.update(lines, (all) => [...all, {
          message,
          annotations: Object.fromEntries([...annotations]),
          traced
        }]))
      })
      const failing = defineTask({
        name: "test.failing",
        payload: Note,
        run: () => Effect.fail(new Error("provider refused"))
      })
      yield* jobs.enqueue(failing, { note: "will fail", at }, { maxAttempts: 2 })
      yield* runDueJobs([failing]).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      const [job] = yield* pendingJobs
      expect(job?.attempts).toBe(1)
      expect(job?.last_error).toContain("provider refused")
      // Retried later, not at once.
      expect(job!.run_at.getTime()).toBeGreaterThan(Date.now())
      const failed = (yield* Ref.get(lines)).filter((line) => JSON.stringify(line.message).includes("job failed"))
      expect(failed).toHaveLength(1)
      expect(failed[0]?.traced).toBe(true)
      expect(failed[0]?.annotations).toMatchObject({ "job.task": "test.failing", "job.attempt": 1 })
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM graphile_worker._private_jobs`)
    }))

  it.effect("a schedule registers its crontab with the queue, once however many workers start", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const hourly = [{ task: record, pattern: "17 * * * *" }]
      const worker = JobWorkerLive([record], hourly).pipe(
        Layer.provide(testConfig({ jobs: { enabled: true, concurrency: 1, pollIntervalMs: 200 } }))
      )
      yield* Effect.scoped(Layer.build(Layer.merge(worker, worker.pipe(Layer.fresh))))
      const known = yield* sql<{ identifier: string }>`SELECT identifier FROM graphile_worker._private_known_crontabs`
      expect(known.map((row) => row.identifier)).toEqual(["test.record"])
    }))

  it.effect("with JOBS_ENABLED=false no worker runs: the job waits in the queue", () =>
    Effect.gen(function*() {
      const jobs = yield* Jobs
      yield* jobs.enqueue(record, { note: "waits", at })
      yield* Effect.scoped(Layer.build(JobWorkerLive([record]).pipe(Layer.provide(testConfig()))))
      expect((yield* pendingJobs).map((job) => job.task_identifier)).toEqual(["test.record"])
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM graphile_worker._private_jobs`)
    }))
})

describe("MemoryJobs", () => {
  it.effect("records encoded payloads; a job key replaces; cancel removes", () =>
    Effect.gen(function*() {
      const jobs = yield* Jobs
      const memory = yield* MemoryJobs
      yield* jobs.enqueue(record, { note: "a", at }, { jobKey: "k" })
      yield* jobs.enqueue(record, { note: "b", at }, { jobKey: "k" })
      yield* jobs.enqueue(record, { note: "c", at })
      expect((yield* memory.pending).map((job) => [job.task, job.payload])).toEqual([
        ["test.record", { note: "b", at: at.toISOString() }],
        ["test.record", { note: "c", at: at.toISOString() }]
      ])
      yield* jobs.cancel("k")
      expect(yield* memory.pending).toHaveLength(1)
    }).pipe(Effect.provide(MemoryJobs.layer)))
})
