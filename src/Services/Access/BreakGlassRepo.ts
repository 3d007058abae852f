/**
 * The only SQL on `break_glass_accesses` (ARCHITECTURE "Persistence"): each access is written with
 * its audit entry in one statement, and listed for admins newest first.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Role } from "../../Domain/Accounts/User.js"
import { PatientId, UserId } from "../../Domain/Ids.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const NewBreakGlassAccess = Schema.Struct({
  user_id: Schema.Number,
  patient_id: Schema.Number,
  reason: Schema.String,
  request_method: Schema.String,
  request_path: Schema.String,
  trace_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})

export const BreakGlassRow = Schema.Struct({
  id: Schema.NumberFromString,
  audit_event_id: Schema.NumberFromString,
  user_id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  role: Role,
  patient_id: PatientId,
  reason: Schema.String,
  request_method: Schema.String,
  request_path: Schema.String,
  created_at: Schema.DateFromSelf
})
export type BreakGlassRow = typeof BreakGlassRow.Type

export const BreakGlassFilter = Schema.Struct({
  user_id: Schema.NullOr(Schema.Number),
  patient_id: Schema.NullOr(Schema.Number)
})

export class BreakGlassRepo extends Effect.Service<BreakGlassRepo>()("app/BreakGlassRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const byCreation = { created_at: sql`b.created_at` }

    /** The audit entry (`patient.break_glass`, ids only) and the access with its reason, in one statement. */
    const insert = SqlSchema.void({
      Request: NewBreakGlassAccess,
      execute: (a) =>
        sql`WITH event AS (
            INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
            VALUES (${a.user_id}, 'patient.break_glass', 'patient', ${a.patient_id}, ${a.trace_id}, ${a.created_at}) RETURNING id)
          INSERT INTO break_glass_accesses (audit_event_id, user_id, patient_id, reason, request_method, request_path, created_at)
          SELECT id, ${a.user_id}, ${a.patient_id}, ${a.reason}, ${a.request_method}, ${a.request_path}, ${a.created_at} FROM event`
    })

    /** A page of the accesses, newest first, narrowed by the filter. */
    const list = (filter: typeof BreakGlassFilter.Type, page: PageRequest) =>
      listPage({
        select: sql`b.id::text AS id, b.audit_event_id::text AS audit_event_id, b.user_id, u.first_name, u.last_name, u.role,
          b.patient_id, b.reason, b.request_method, b.request_path, b.created_at`,
        from: sql`break_glass_accesses b JOIN users u ON u.id = b.user_id`,
        row: BreakGlassRow,
        filters: [
          filter.user_id !== null && sql`b.user_id = ${filter.user_id}`,
          filter.patient_id !== null && sql`b.patient_id = ${filter.patient_id}`
        ],
        sort: { columns: byCreation, by: "created_at", dir: "DESC", id: sql`b.id` }
      }, page)

    return {
      insert: (access: typeof NewBreakGlassAccess.Type) => orDefect(insert(access)),
      list
    } as const
  })
}) {}
