/**
 * The append-only audit trail. Every issue records its create/update/delete of clinical records
 * here. Entries hold ids and action names only, plus the request's trace id.
 */
import { Clock, Effect } from "effect"
import { type AuditEntryOfWrite, AuditLogRepo, type AuditEventRow } from "./AuditLogRepo.js"
import { currentTraceId } from "./Spans.js"

export interface AuditEntry {
  /** Who did it; null for the system or an anonymous caller. */
  readonly actorId: number | null
  /** Dotted verb, e.g. `user.sign_in`, `user.archive`. */
  readonly action: string
  readonly targetType: string
  readonly targetId: number | null
}

/** The current span's trace id, or null outside any span. */

const rowOf = (entry: AuditEntry, traceId: string | null, now: Date): AuditEventRow => ({
  actor_id: entry.actorId,
  action: entry.action,
  target_type: entry.targetType,
  target_id: entry.targetId,
  trace_id: traceId,
  created_at: now
})

export class AuditLog extends Effect.Service<AuditLog>()("app/AuditLog", {
  effect: Effect.gen(function*() {
    const repo = yield* AuditLogRepo

    const record = Effect.fn("AuditLog.record", { captureStackTrace: false })(function*(entry: AuditEntry) {
      yield* Effect.annotateCurrentSpan({ "audit.action": entry.action })
      const traceId = yield* currentTraceId
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.insert(rowOf(entry, traceId, now))
    })

    /** Many entries in one statement (a batch acting on many records: one round trip, not one per record). */
    const recordMany = Effect.fn("AuditLog.recordMany", { captureStackTrace: false })(function*(entries: ReadonlyArray<AuditEntry>) {
      yield* Effect.annotateCurrentSpan({ "audit.count": entries.length })
      if (entries.length === 0) return
      const traceId = yield* currentTraceId
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.insertMany(entries.map((entry) => rowOf(entry, traceId, now)))
    })

    const recent = (limit: number) => repo.recent(limit)

    /**
     * The row `record` would write for `entry`, for a repository that appends it within its own
     * statement (`auditInsertOf`), the target being the row that statement writes.
     */
    const rowFor = (entry: Omit<AuditEntry, "targetId">): Effect.Effect<AuditEntryOfWrite> =>
      Effect.gen(function*() {
        const traceId = yield* currentTraceId
        const now = new Date(yield* Clock.currentTimeMillis)
        const { target_id: _, ...row } = rowOf({ ...entry, targetId: null }, traceId, now)
        return row
      })

    return { record, recordMany, recent, rowFor } as const
  }),
  dependencies: [AuditLogRepo.Default]
}) {}
