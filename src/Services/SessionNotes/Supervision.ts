/**
 * Supervised appointments (general §2.7, §4.15): appointments of providers who have a supervisor
 * (or whose note was written under supervision), in the supervisor appointment representation with
 * the note's id, status and supervision status.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { SupervisorAppointmentList } from "../../Api/SessionNotes/SessionNotes.js"
import type { AppointmentStatus } from "../../Domain/Scheduling/Scheduling.js"
import { type SessionNoteStatus, type SupervisionStatus, SupervisorAppointment } from "../../Domain/SessionNotes/SessionNote.js"

export interface SupervisedAppointmentCriteria {
  readonly supervisorId?: number | undefined
  readonly providerId?: number | undefined
  readonly status?: AppointmentStatus | undefined
  readonly supervisionStatus?: SupervisionStatus | undefined
}

interface Row {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number
  readonly supervisor_id: number | null
  readonly scheduled_at: Date
  readonly status: string
  readonly supervision_status: SupervisionStatus | null
  readonly supervision_notes: string | null
  readonly note_id: number | null
  readonly note_status: SessionNoteStatus | null
  readonly created_at: Date
  readonly updated_at: Date
}

const columns = `a.id, a.patient_id, a.provider_id, COALESCE(n.supervisor_id, p.supervisor_id) AS supervisor_id, a.scheduled_at,
  a.status, n.supervision_status, n.supervision_notes, n.id AS note_id, n.status AS note_status, a.created_at, a.updated_at`
const from = `appointments a JOIN providers p ON p.id = a.provider_id LEFT JOIN session_notes n ON n.appointment_id = a.id`

const toAppointment = (row: Row) =>
  SupervisorAppointment.make({
    id: row.id,
    patient_id: row.patient_id,
    provider_id: row.provider_id,
    supervisor_id: row.supervisor_id,
    scheduled_at: row.scheduled_at,
    status: row.status,
    supervision_status: row.supervision_status,
    supervision_notes: row.supervision_notes,
    session_note: row.note_id === null || row.note_status === null ? null : { id: row.note_id, status: row.note_status },
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

export class SupervisedAppointments extends Effect.Service<SupervisedAppointments>()("app/SupervisedAppointments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const source = sql.literal(from)
    const supervised = sql`COALESCE(n.supervisor_id, p.supervisor_id) IS NOT NULL`

    const list = (criteria: SupervisedAppointmentCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = [supervised]
        if (criteria.supervisorId !== undefined) clauses.push(sql`COALESCE(n.supervisor_id, p.supervisor_id) = ${criteria.supervisorId}`)
        if (criteria.providerId !== undefined) clauses.push(sql`a.provider_id = ${criteria.providerId}`)
        if (criteria.status !== undefined) clauses.push(sql`a.status = ${criteria.status}`)
        if (criteria.supervisionStatus !== undefined) clauses.push(sql`n.supervision_status = ${criteria.supervisionStatus}`)
        const where = sql.and(clauses)
        const rows = yield* sql<Row>`SELECT ${cols} FROM ${source} WHERE ${where}
          ORDER BY a.scheduled_at, a.id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${source} WHERE ${where}`
        return SupervisorAppointmentList.make({ appointments: rows.map(toAppointment), pagination: paginationOf(request, counted?.count ?? 0) }, true)
      }).pipe(Effect.orDie, Effect.withSpan("SupervisedAppointments.list"))

    const show = (id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<Row>`SELECT ${cols} FROM ${source} WHERE a.id = ${id} AND ${supervised}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("Appointment"))
        return toAppointment(row)
      }).pipe(Effect.withSpan("SupervisedAppointments.show", { attributes: { "appointment.id": id } }))

    return { list, show } as const
  })
}) {}
