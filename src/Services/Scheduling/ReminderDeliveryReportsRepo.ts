/**
 * The `reminder_delivery_reports` table: provider reports that came before their reminder had
 * recorded the SID (ReminderDeliveries says when), and the per-SID lock both sides take.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Delivery = Schema.Literal("delivered", "failed", "bounced", "unsubscribed")
const EarlyReport = Schema.Struct({ delivery_status: Delivery, status_reason: Schema.NullOr(Schema.String) })

/** Holds the SID's transaction-scoped advisory lock until the transaction ends. */
export const lockSid = (sid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.void({
      Request: Schema.String,
      execute: (s) => sql`SELECT pg_advisory_xact_lock(hashtext('reminder-delivery:' || ${s}))`
    })(sid)
  ).pipe(orDefect)

/** Keeps a report for `sid` (the first one wins), after dropping those received before `staleBefore`. */
export const keepEarlyReport = (report: {
  readonly sid: string
  readonly delivery: typeof Delivery.Type
  readonly reason: string | null
  readonly at: Date
  readonly staleBefore: Date
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.void({
      Request: Schema.Struct({
        sid: Schema.String, delivery: Delivery, reason: Schema.NullOr(Schema.String), at: Schema.DateFromSelf, staleBefore: Schema.DateFromSelf
      }),
      execute: (r) =>
        sql`WITH forgotten AS (DELETE FROM reminder_delivery_reports WHERE received_at < ${r.staleBefore})
          INSERT INTO reminder_delivery_reports (provider_message_id, delivery_status, status_reason, received_at)
          VALUES (${r.sid}, ${r.delivery}, ${r.reason}, ${r.at}) ON CONFLICT (provider_message_id) DO NOTHING`
    })(report)
  ).pipe(orDefect)

/** Removes and returns the report kept for `sid`, if any. */
export const takeEarlyReport = (sid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: EarlyReport,
      execute: (s) => sql`DELETE FROM reminder_delivery_reports WHERE provider_message_id = ${s} RETURNING delivery_status, status_reason`
    })(sid)
  ).pipe(Effect.map((rows) => rows[0]), orDefect)
