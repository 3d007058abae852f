/**
 * Work that must happen later, or exactly once across instances and restarts: a PostgreSQL-backed
 * queue (graphile-worker in production, `src/Layers/Jobs.ts`). Never an in-process timer.
 */
import { Context, type Effect, type Schema } from "effect"

/**
 * A kind of job: its name, the schema of its payload (stored as JSON) and what running it does.
 * `run` must be idempotent — claim the job's own row first (compare-and-swap on its status) — since
 * a job may run again after a crash between its work and its completion being recorded.
 */
export interface JobTask<A, I, R> {
  readonly name: string
  readonly payload: Schema.Schema<A, I>
  readonly run: (payload: A, job: JobContext) => Effect.Effect<void, unknown, R>
}

/** What a running job knows about itself (ids and counts only: these become span attributes). */
export interface JobContext {
  readonly id: string
  /** 1 on the first run, then one more per retry. */
  readonly attempt: number
  readonly maxAttempts: number
}

/** A task of any payload and requirement, as the worker's task list holds them. */
export type AnyJobTask<R = any> = JobTask<any, any, R>

export const defineTask = <A, I, R>(task: JobTask<A, I, R>): JobTask<A, I, R> => task

export interface EnqueueOptions {
  /** Not before this time (default: now). */
  readonly runAt?: Date
  /**
   * At most one pending job per key: enqueueing again with the same key replaces the pending one
   * (its payload and time), so a rescheduled reminder moves rather than duplicates.
   */
  readonly jobKey?: string
  /** Runs, first included, before the job is given up (default 25, graphile-worker's). */
  readonly maxAttempts?: number
}

export interface JobsShape {
  /**
   * Adds a job. Inside `sql.withTransaction` it joins that transaction: the job and the rows it
   * is about commit together or not at all.
   */
  readonly enqueue: <A, I, R>(task: JobTask<A, I, R>, payload: A, options?: EnqueueOptions) => Effect.Effect<void>
  /** Removes a pending job by its key (a cancelled reminder); a job already running is not stopped. */
  readonly cancel: (jobKey: string) => Effect.Effect<void>
}

export class Jobs extends Context.Tag("app/Jobs")<Jobs, JobsShape>() {}
