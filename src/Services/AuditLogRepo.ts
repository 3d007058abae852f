/** The only SQL on `audit_events` (ARCHITECTURE "Persistence"): append and read back, nothing else. */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, prepared, SqlSchema } from "./Repository.js"

/** One entry as stored. */
export const AuditEventRow = Schema.Struct({
  actor_id: Schema.NullOr(Schema.Number),
  action: Schema.String,
  target_type: Schema.String,
  target_id: Schema.NullOr(Schema.Number),
  trace_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type AuditEventRow = typeof AuditEventRow.Type

/** The admin dashboard's recent activity. */
export const RecentActivity = Schema.Struct({
  user_id: Schema.NullOr(Schema.Number),
  action: Schema.String,
  timestamp: Schema.DateFromSelf
})
export type RecentActivity = typeof RecentActivity.Type

/** An entry of a write whose target is the row that write makes (`auditInsertOf`). */
export const AuditEntryOfWrite = AuditEventRow.omit("target_id")
export type AuditEntryOfWrite = typeof AuditEntryOfWrite.Type

/**
 * The append of one entry as a statement of its own (a `WITH` part of another repository's write,
 * so a change, its entry and the read back are one round trip), its target given as SQL: the id
 * the write's `RETURNING` names.
 */
export const auditInsertOf = (sql: SqlClient.SqlClient, row: AuditEntryOfWrite, targetId: Statement.Fragment) =>
  sql`INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
    VALUES (${row.actor_id}, ${row.action}, ${row.target_type}, ${targetId}, ${row.trace_id}, ${row.created_at})`

export class AuditLogRepo extends Effect.Service<AuditLogRepo>()("app/AuditLogRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Every audited change sends this one fixed statement: prepared.
    const insertPrepared = prepared("audit_insert")

    const insertOne = SqlSchema.void({
      Request: AuditEventRow,
      execute: (row) =>
        insertPrepared(sql`INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
          VALUES (${row.actor_id}, ${row.action}, ${row.target_type}, ${row.target_id}, ${row.trace_id}, ${row.created_at})`)
    })

    const insertMany = SqlSchema.void({
      Request: Schema.Array(AuditEventRow),
      execute: (rows) => sql`INSERT INTO audit_events ${sql.insert(rows)}`
    })

    const recent = SqlSchema.findAll({
      Request: Schema.Number,
      Result: RecentActivity,
      execute: (limit) =>
        sql`SELECT actor_id AS user_id, action, created_at AS timestamp FROM audit_events
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    return {
      insert: (row: AuditEventRow) => orDefect(insertOne(row)),
      insertMany: (rows: ReadonlyArray<AuditEventRow>) => rows.length === 0 ? Effect.void : orDefect(insertMany(rows)),
      recent: (limit: number) => orDefect(recent(limit))
    } as const
  })
}) {}
