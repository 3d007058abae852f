/**
 * The recovery sweep on PostgreSQL: what it releases and settles, and — as much — what it leaves
 * alone: the work of holders whose heartbeat is fresh, locks too young to judge, jobs with runs
 * left. (test/Recovery.test.ts kills a real server and restarts it.)
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer, Redacted, Schema, Scope } from "effect"
import { DatabaseUrl, pgClientLayer } from "../../src/Layers/Database.js"
import { JobWorkerLive, PgJobsLive } from "../../src/Layers/Jobs.js"
import { interruptedImportError } from "../../src/Services/Ecm/MifImport.js"
import { interruptedReason } from "../../src/Services/EcmExchange/ExchangeGenerator.js"
import { defineTask } from "../../src/Services/Jobs.js"
import { recoverInterruptedWork } from "../../src/Services/Recovery.js"
import { failureReasons } from "../../src/Services/Reports/ReportGenerator.js"
import { reminderReasons } from "../../src/Services/Scheduling/RemindersRepo.js"
import { freshDatabase } from "../support/database.js"
import {
  insertAppointment,
  insertExchangeReport,
  insertGeneratingReport,
  insertHealthPlan,
  insertHeartbeat,
  insertMifImport,
  insertPatient,
  insertProvider,
  insertReminder
} from "../support/fixtures.js"
import { testConfig } from "../Layers/fixtures.js"

const liveness = { heartbeatSeconds: 30, staleAfterSeconds: 120 }

const RecoveryTestLive = Layer.unwrapScoped(Effect.map(freshDatabase(), ({ url }) =>
  PgJobsLive.pipe(
    Layer.provideMerge(pgClientLayer(Redacted.make(url), 4)),
    Layer.merge(Layer.succeed(DatabaseUrl, Redacted.make(url))),
    Layer.merge(testConfig({ liveness, jobs: { enabled: true, concurrency: 1, pollIntervalMs: 200 } }))
  )))

const query = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params)).pipe(Effect.orDie)

/** A job, locked by `holder` `ageSeconds` ago when a holder is given; its id. */
const jobOf = (task: string, key: string, options: { holder?: string; ageSeconds?: number; attempts?: number; maxAttempts?: number } = {}) =>
  Effect.gen(function*() {
    const [job] = yield* query<{ id: string }>(
      `SELECT id::text FROM graphile_worker.add_job($1, '{}'::json, job_key => $2, max_attempts => $3)`, task, key, options.maxAttempts ?? 3)
    yield* query(`UPDATE graphile_worker._private_jobs SET attempts = $2, locked_by = $3,
        locked_at = CASE WHEN $3::text IS NULL THEN NULL ELSE now() - make_interval(secs => $4) END WHERE id = $1::bigint`,
      job!.id, options.attempts ?? 1, options.holder ?? null, options.ageSeconds ?? 0)
    return job!.id
  })

const lockOf = (jobId: string) =>
  Effect.map(query<{ locked_by: string | null }>(`SELECT locked_by FROM graphile_worker.jobs WHERE id = $1::bigint`, jobId), (rows) => rows[0]?.locked_by)

const clear = Effect.zipRight(
  query(`TRUNCATE heartbeats, mif_files, reports, exchange_reports, appointment_reminders CASCADE`),
  query(`DELETE FROM graphile_worker._private_jobs`)
)

layer(RecoveryTestLive)("recovery sweep", (it) => {
  it.effect("releases the job locks of gone worker pools only; forgets stale heartbeats", () =>
    Effect.gen(function*() {
      yield* clear
      yield* insertHeartbeat("pool-live", 10)
      yield* insertHeartbeat("pool-gone", 600)
      const gone = yield* jobOf("test.a", "a", { holder: "pool-gone", ageSeconds: 600 })
      const neverBeat = yield* jobOf("test.b", "b", { holder: "pool-vanished", ageSeconds: 3600 })
      const live = yield* jobOf("test.c", "c", { holder: "pool-live", ageSeconds: 3600 })
      // A pool may lock a job a moment before its first beat is recorded.
      const young = yield* jobOf("test.d", "d", { holder: "pool-starting", ageSeconds: 5 })

      const recovered = yield* recoverInterruptedWork
      expect(recovered).toMatchObject({ "recovery.gone_holders": 1, "recovery.released_pools": 2 })
      expect(yield* lockOf(gone)).toBeNull()
      expect(yield* lockOf(neverBeat)).toBeNull()
      expect(yield* lockOf(live)).toBe("pool-live")
      expect(yield* lockOf(young)).toBe("pool-starting")
      expect(yield* query(`SELECT holder_id FROM heartbeats`)).toEqual([{ holder_id: "pool-live" }])
    }))

  it.effect("fails the unfinished imports of gone instances; an import of a live instance is untouched", () =>
    Effect.gen(function*() {
      yield* clear
      yield* insertHeartbeat("instance-live", 10)
      const insert = insertMifImport
      const goneProcessing = yield* insert("processing", "instance-gone")
      const gonePending = yield* insert("pending", "instance-gone")
      const liveProcessing = yield* insert("processing", "instance-live")
      const goneCompleted = yield* insert("completed", "instance-gone")
      // Rows from before owners were recorded: judged by their age.
      const oldUnowned = yield* insert("processing", null, 600)
      const freshUnowned = yield* insert("processing", null, 5)

      expect((yield* recoverInterruptedWork)["recovery.failed_imports"]).toBe(3)
      const rows = yield* query<{ id: number; status: string; import_errors: string | null }>(`SELECT id, status, import_errors FROM mif_files ORDER BY id`)
      const byId = new Map(rows.map((row) => [row.id, row]))
      for (const id of [goneProcessing, gonePending, oldUnowned]) {
        expect(byId.get(id)).toMatchObject({ status: "failed", import_errors: interruptedImportError })
      }
      expect(byId.get(liveProcessing)).toMatchObject({ status: "processing", import_errors: null })
      expect(byId.get(goneCompleted)).toMatchObject({ status: "completed" })
      expect(byId.get(freshUnowned)).toMatchObject({ status: "processing" })
    }))

  it.effect("fails a generating report whose job is out of runs; one whose job can still run is left to the queue", () =>
    Effect.gen(function*() {
      yield* clear
      const insert = (n: number) => insertGeneratingReport(`recovery-report-${n}-0123456789`)
      const exhausted = yield* insert(1)
      const retrying = yield* insert(2)
      const running = yield* insert(3)
      yield* jobOf("reports.generate", `report:${exhausted}`, { holder: "pool-gone", ageSeconds: 600, attempts: 3 })
      const retry = yield* jobOf("reports.generate", `report:${retrying}`, { holder: "pool-gone", ageSeconds: 600, attempts: 1 })
      yield* insertHeartbeat("pool-live")
      yield* jobOf("reports.generate", `report:${running}`, { holder: "pool-live", ageSeconds: 600, attempts: 3 })

      expect((yield* recoverInterruptedWork)["recovery.failed_reports"]).toBe(1)
      expect(yield* query(`SELECT id, status, failure_reason FROM reports ORDER BY id`)).toEqual([
        { id: exhausted, status: "failed", failure_reason: failureReasons.interrupted },
        { id: retrying, status: "generating", failure_reason: null },
        { id: running, status: "generating", failure_reason: null }
      ])
      // The released job runs again at once.
      expect(yield* lockOf(retry)).toBeNull()
    }))

  it.effect("fails a generating return file whose job is out of runs or gone; one whose job can still run is left to the queue", () =>
    Effect.gen(function*() {
      yield* clear
      const plan = yield* insertHealthPlan("Recovery Plan", "RECOVERY")
      const insert = (status: string, ageSeconds?: number) => insertExchangeReport(plan, status, ageSeconds)
      const exhausted = yield* insert("generating")
      const jobless = yield* insert("generating")
      const retrying = yield* insert("generating")
      const running = yield* insert("generating")
      const fresh = yield* insert("generating", 5)
      const queued = yield* insert("queued")
      yield* jobOf("ecm_exchange.generate", `ecm-exchange:${exhausted}`, { holder: "pool-gone", ageSeconds: 600, attempts: 3 })
      const retry = yield* jobOf("ecm_exchange.generate", `ecm-exchange:${retrying}`, { holder: "pool-gone", ageSeconds: 600, attempts: 1 })
      yield* insertHeartbeat("pool-live")
      yield* jobOf("ecm_exchange.generate", `ecm-exchange:${running}`, { holder: "pool-live", ageSeconds: 600, attempts: 3 })
      yield* jobOf("ecm_exchange.generate", `ecm-exchange:${fresh}`, { attempts: 3 })
      yield* jobOf("ecm_exchange.generate", `ecm-exchange:${queued}`, { attempts: 3 })

      const recovered = yield* recoverInterruptedWork
      expect(recovered).toMatchObject({ "recovery.failed_exchange_reports": 2 })
      expect(yield* query(`SELECT id, status, failure_reason FROM exchange_reports ORDER BY id`)).toEqual([
        { id: exhausted, status: "failed", failure_reason: interruptedReason },
        { id: jobless, status: "failed", failure_reason: interruptedReason },
        { id: retrying, status: "generating", failure_reason: null },
        { id: running, status: "generating", failure_reason: null },
        { id: fresh, status: "generating", failure_reason: null },
        { id: queued, status: "queued", failure_reason: null }
      ])
      // The released job runs again at once: its next run claims the report and starts over.
      expect(yield* lockOf(retry)).toBeNull()
    }))

  it.effect("fails a reminder left sending whose job is out of runs, without sending it", () =>
    Effect.gen(function*() {
      yield* clear
      const provider = yield* insertProvider()
      const patientId = yield* insertPatient()
      const hour = 3_600_000
      const appointment = yield* insertAppointment({
        patientId, providerId: provider.id, scheduledAt: new Date(Date.now() + 2 * hour), minutes: 60, status: "scheduled"
      })
      const anHourAgo = new Date(Date.now() - hour)
      const reminder = yield* insertReminder({
        appointmentId: appointment.id, channel: "sms", sendAt: anHourAgo, leadSeconds: 7200, claimed: { by: "1", at: anHourAgo }
      })
      yield* jobOf("reminders.send", `appointment_reminder:${reminder}`, { holder: "pool-gone", ageSeconds: 3600, attempts: 5, maxAttempts: 5 })

      expect((yield* recoverInterruptedWork)["recovery.failed_reminders"]).toBe(1)
      expect(yield* query(`SELECT status, delivery_status, status_reason, sent_at, claimed_by FROM appointment_reminders`)).toEqual([
        { status: "failed", delivery_status: "failed", status_reason: reminderReasons.interrupted, sent_at: null, claimed_by: null }
      ])
    }))

  it.effect("a running worker's pool beats under the id its locks carry: its job is never released; a clean stop forgets it", () =>
    Effect.gen(function*() {
      yield* clear
      const started = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const slow = defineTask({
        name: "test.slow",
        payload: Schema.Struct({}),
        run: () => Deferred.succeed(started, undefined).pipe(Effect.zipRight(Deferred.await(finish)))
      })
      yield* query(`SELECT graphile_worker.add_job('test.slow', '{}'::json)`)
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(JobWorkerLive([slow]), scope)
      yield* Deferred.await(started)
      // However long ago it was locked, a lock of a live pool stays.
      yield* query(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 hour'`)
      expect((yield* recoverInterruptedWork)["recovery.released_pools"]).toBe(0)
      const [held] = yield* query<{ locked_by: string }>(`SELECT locked_by FROM graphile_worker.jobs`)
      expect(yield* query(`SELECT holder_id FROM heartbeats`)).toEqual([{ holder_id: held!.locked_by }])

      yield* Deferred.succeed(finish, undefined)
      yield* Scope.close(scope, Exit.void)
      expect(yield* query(`SELECT count(*)::int AS n FROM heartbeats`)).toEqual([{ n: 0 }])
      expect(yield* query(`SELECT count(*)::int AS n FROM graphile_worker.jobs`)).toEqual([{ n: 0 }])
    }))
})
