/**
 * Supervised appointments (general §2.7, §4.15): appointments of providers who have a supervisor
 * (or whose note was written under supervision), in the supervisor appointment representation with
 * the note's id, status and supervision status.
 */
import { Effect, Option } from "effect"
import { notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { SupervisorAppointmentList } from "../../Api/SessionNotes/SessionNotes.js"
import { SupervisorAppointment } from "../../Domain/SessionNotes/SessionNote.js"
import { type SupervisedAppointmentCriteria, type SupervisedAppointmentRow as Row, SupervisedAppointmentsRepo } from "./SupervisedAppointmentsRepo.js"

export type { SupervisedAppointmentCriteria } from "./SupervisedAppointmentsRepo.js"

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
    const repo = yield* SupervisedAppointmentsRepo

    const list = Effect.fn("SupervisedAppointments.list")(function*(criteria: SupervisedAppointmentCriteria, request: PageRequest) {
      const { pagination, rows } = yield* repo.list(criteria, request)
      return SupervisorAppointmentList.make({ appointments: rows.map(toAppointment), pagination }, true)
    })

    const show = Effect.fn("SupervisedAppointments.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id })
      const row = yield* repo.findById(id)
      if (Option.isNone(row)) return yield* Effect.fail(notFound("Appointment"))
      return toAppointment(row.value)
    })

    return { list, show } as const
  }),
  dependencies: [SupervisedAppointmentsRepo.Default]
}) {}
