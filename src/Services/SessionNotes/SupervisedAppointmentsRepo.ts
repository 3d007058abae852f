/**
 * Reads of supervised appointments (ARCHITECTURE "Persistence"): appointments of providers who
 * have a supervisor, or whose note was written under supervision, with their note's id, status and
 * supervision status. Rows are decoded with schemas; SQL errors are defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { AppointmentStatus } from "../../Domain/Scheduling/Scheduling.js"
import { SessionNoteStatus, SupervisionStatus } from "../../Domain/SessionNotes/SessionNote.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

const Timestamp = Schema.DateFromSelf

export const SupervisedAppointmentRow = Schema.Struct({
  id: Schema.Number,
  patient_id: Schema.Number,
  provider_id: Schema.Number,
  supervisor_id: Schema.NullOr(Schema.Number),
  scheduled_at: Timestamp,
  status: Schema.String,
  supervision_status: Schema.NullOr(SupervisionStatus),
  supervision_notes: Schema.NullOr(Schema.String),
  note_id: Schema.NullOr(Schema.Number),
  note_status: Schema.NullOr(SessionNoteStatus),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type SupervisedAppointmentRow = typeof SupervisedAppointmentRow.Type

export const SupervisedAppointmentCriteria = Schema.Struct({
  supervisorId: Schema.optional(Schema.Number),
  providerId: Schema.optional(Schema.Number),
  status: Schema.optional(AppointmentStatus),
  supervisionStatus: Schema.optional(SupervisionStatus)
})
export type SupervisedAppointmentCriteria = typeof SupervisedAppointmentCriteria.Type

const columns = `a.id, a.patient_id, a.provider_id, COALESCE(n.supervisor_id, p.supervisor_id) AS supervisor_id, a.scheduled_at,
  a.status, n.supervision_status, n.supervision_notes, n.id AS note_id, n.status AS note_status, a.created_at, a.updated_at`
const from = `appointments a JOIN providers p ON p.id = a.provider_id LEFT JOIN session_notes n ON n.appointment_id = a.id`

export class SupervisedAppointmentsRepo extends Effect.Service<SupervisedAppointmentsRepo>()("app/SupervisedAppointmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)
    const source = sql.literal(from)
    const supervised = sql`COALESCE(n.supervisor_id, p.supervisor_id) IS NOT NULL`

    const byTime = { scheduled_at: sql`a.scheduled_at` }
    /** A page of supervised appointments, by time. */
    const list = (criteria: SupervisedAppointmentCriteria, page: PageRequest) =>
      listPage({
        select: cols,
        from: source,
        row: SupervisedAppointmentRow,
        scope: supervised,
        filters: [
          criteria.supervisorId !== undefined && sql`COALESCE(n.supervisor_id, p.supervisor_id) = ${criteria.supervisorId}`,
          criteria.providerId !== undefined && sql`a.provider_id = ${criteria.providerId}`,
          criteria.status !== undefined && sql`a.status = ${criteria.status}`,
          criteria.supervisionStatus !== undefined && sql`n.supervision_status = ${criteria.supervisionStatus}`
        ],
        sort: { columns: byTime, by: "scheduled_at", dir: "ASC", id: sql`a.id` }
      }, page)

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number }),
      Result: SupervisedAppointmentRow,
      execute: ({ id }) => sql`SELECT ${cols} FROM ${source} WHERE a.id = ${id} AND ${supervised}`
    })

    return {
      list,
      /** The appointment if it is supervised. */
      findById: (id: number) => orDefect(findOne({ id }))
    } as const
  })
}) {}
