/**
 * In-memory `Jobs` for handler tests: records what was enqueued (a job key replaces the pending job
 * with that key, as the real queue does) without a database or a worker.
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { type EnqueueOptions, Jobs } from "../Services/Jobs.js"

export interface EnqueuedJob {
  readonly task: string
  /** As stored: the payload encoded by the task's schema. */
  readonly payload: unknown
  readonly options: EnqueueOptions
}

/** The test's handle on the in-memory queue. */
export class MemoryJobs extends Context.Tag("app/MemoryJobs")<MemoryJobs, {
  /** Pending jobs, oldest first. */
  readonly pending: Effect.Effect<ReadonlyArray<EnqueuedJob>>
  readonly clear: Effect.Effect<void>
}>() {
  static readonly layer: Layer.Layer<Jobs | MemoryJobs> = Layer.effectContext(Effect.gen(function*() {
    const pending = yield* Ref.make<ReadonlyArray<EnqueuedJob>>([])
    const withoutKey = (key: string | undefined) => (jobs: ReadonlyArray<EnqueuedJob>) =>
      key === undefined ? jobs : jobs.filter((job) => job.options.jobKey !== key)

    return Context.make(Jobs, Jobs.of({
      enqueue: (task, payload, options = {}) =>
        Schema.encode(task.payload)(payload).pipe(
          Effect.orDie,
          Effect.flatMap((encoded) =>
            Ref.update(pending, (jobs) => [...withoutKey(options.jobKey)(jobs), { task: task.name, payload: encoded, options }]))
        ),
      cancel: (jobKey) => Ref.update(pending, withoutKey(jobKey))
    })).pipe(Context.add(MemoryJobs, { pending: Ref.get(pending), clear: Ref.set(pending, []) }))
  }))
}
