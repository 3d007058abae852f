/**
 * The `heartbeats` table (./Heartbeats.ts says who beats and why), the one statement that reads
 * it against the job queue's locks, and the conditions the recovery sweeps (./Recovery.ts) share:
 * how long a row may sit unmoved, and whether its job can still run. Times are the database's
 * clock, the one graphile-worker stamps its locks with.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "./Repository.js"

/** `beat_at` older than this (SQL, the database's clock) is a gone holder. */
export const staleCutoff = (sql: SqlClient.SqlClient, staleAfterSeconds: number) =>
  sql`now() - make_interval(secs => ${staleAfterSeconds})`

/**
 * A `failStale` condition (./Repository.ts) for rows a keyed job finishes: the job of row `r` (key
 * `jobKeyPrefix` and the row id) can no longer run — gone, or out of runs and not locked. A locked
 * job (running, or held by a crashed worker not yet released) or one with runs left is the queue's
 * to finish.
 */
export const jobCanNoLongerRun = (sql: SqlClient.SqlClient, jobKeyPrefix: string) =>
  sql`NOT EXISTS (SELECT 1 FROM graphile_worker.jobs j
    WHERE j.key = ${jobKeyPrefix} || r.id AND (j.locked_at IS NOT NULL OR j.attempts < j.max_attempts))`

/** `holderId` is alive now (its row is written anew if a sweep removed it). */
export const recordBeat = (holderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`INSERT INTO heartbeats (holder_id, started_at, beat_at) VALUES (${id}, now(), now())
        ON CONFLICT (holder_id) DO UPDATE SET beat_at = now()`
    })(holderId)
  )

/** A clean stop: nothing left for the others to sweep (a failure is the caller's to ignore). */
export const removeHolder = (holderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.void({ Request: Schema.String, execute: (id) => sql`DELETE FROM heartbeats WHERE holder_id = ${id}` })(holderId)
  )

/** Forgets holders silent for `staleAfterSeconds`; how many. */
export const forgetGoneHolders = (staleAfterSeconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Number,
      Result: Schema.Struct({ holder_id: Schema.String }),
      execute: (stale) => sql`DELETE FROM heartbeats WHERE beat_at < ${staleCutoff(sql, stale)} RETURNING holder_id`
    })(staleAfterSeconds)
  ).pipe(Effect.map((rows) => rows.length), orDefect)

/**
 * Releases, with graphile-worker's own `force_unlock_workers`, the job locks of worker pools that
 * have no heartbeat, leaving locks younger than the stale time alone (their pool may not have
 * beaten yet); how many pools.
 */
export const releaseJobsOfGoneWorkers = (staleAfterSeconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.single({
      Request: Schema.Number,
      Result: Schema.Struct({ pools: Schema.Int, calls: Schema.Int }),
      execute: (stale) => sql`WITH gone AS (
          SELECT DISTINCT j.locked_by FROM graphile_worker.jobs j
          WHERE j.locked_by IS NOT NULL AND j.locked_at < ${staleCutoff(sql, stale)}
            AND NOT EXISTS (SELECT 1 FROM heartbeats h WHERE h.holder_id = j.locked_by)),
        released AS (
          SELECT graphile_worker.force_unlock_workers(array_agg(locked_by)) FROM gone HAVING count(*) > 0)
        SELECT (SELECT count(*) FROM gone)::int AS pools, (SELECT count(*) FROM released)::int AS calls`
    })(staleAfterSeconds)
  ).pipe(Effect.map((row) => row.pools), orDefect)
