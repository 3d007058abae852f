/**
 * The append-only audit trail. Every issue records its create/update/delete of clinical records
 * here. Entries hold ids and action names only, plus the request's trace id.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"

export interface AuditEntry {
  /** Who did it; null for the system or an anonymous caller. */
  readonly actorId: number | null
  /** Dotted verb, e.g. `user.sign_in`, `user.archive`. */
  readonly action: string
  readonly targetType: string
  readonly targetId: number | null
}

export class AuditLog extends Effect.Service<AuditLog>()("app/AuditLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const record = (entry: AuditEntry) =>
      Effect.gen(function*() {
        const traceId = Option.getOrNull(Option.map(yield* Effect.option(Effect.currentSpan), (s) => s.traceId))
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
          VALUES (${entry.actorId}, ${entry.action}, ${entry.targetType}, ${entry.targetId}, ${traceId}, ${now})`
      }).pipe(Effect.orDie, Effect.withSpan("AuditLog.record", { attributes: { "audit.action": entry.action } }))

    /** Many entries in one statement (a batch acting on many records: one round trip, not one per record). */
    const recordMany = (entries: ReadonlyArray<AuditEntry>) =>
      Effect.gen(function*() {
        if (entries.length === 0) return
        const traceId = Option.getOrNull(Option.map(yield* Effect.option(Effect.currentSpan), (s) => s.traceId))
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO audit_events ${sql.insert(entries.map((entry) => ({
          actor_id: entry.actorId, action: entry.action, target_type: entry.targetType, target_id: entry.targetId, trace_id: traceId, created_at: now
        })))}`
      }).pipe(Effect.orDie, Effect.withSpan("AuditLog.recordMany", { attributes: { "audit.count": entries.length } }))

    const recent = (limit: number) =>
      sql<{ user_id: number | null; action: string; timestamp: Date }>`
        SELECT actor_id AS user_id, action, created_at AS timestamp FROM audit_events
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)

    return { record, recordMany, recent } as const
  })
}) {}
