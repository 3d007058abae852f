/**
 * Books (general §2.5, §4.5): booking a slot makes an appointment, in one transaction. Exactly one
 * of concurrent bookings of a slot wins: the conditional UPDATE (`available AND NOT booked`) is
 * settled by the slot's row lock, and the unique index `books_confirmed_slot_key` and the
 * appointments' exclusion constraint back it up — nothing is checked before it is written.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import { type CreateBookRequest, slotMessages, BookList } from "../../Api/Scheduling/Availability.js"
import { appointmentMessages } from "../../Api/Scheduling/Appointments.js"
import { type Conflict, conflict, invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import type { AppointmentType } from "../../Domain/Scheduling/Scheduling.js"
import { AuditLog } from "../AuditLog.js"
import { isExclusionViolation, isForeignKeyViolation, isUniqueViolation } from "../SqlErrors.js"
import { blankToNull, bookColumns, type BookRow, toBook } from "./SchedulingRepo.js"

export interface BookCriteria {
  readonly patientId?: number | undefined
  readonly slotId?: number | undefined
}

export class Books extends Effect.Service<Books>()("app/Books", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const columns = sql.literal(bookColumns)

    const list = (criteria: BookCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = []
        if (criteria.patientId !== undefined) clauses.push(sql`b.patient_id = ${criteria.patientId}`)
        if (criteria.slotId !== undefined) clauses.push(sql`b.available_slot_id = ${criteria.slotId}`)
        const where = clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
        const rows = yield* sql<BookRow>`SELECT ${columns} FROM books b WHERE ${where}
          ORDER BY b.created_at DESC, b.id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM books b WHERE ${where}`
        return BookList.make({ books: rows.map(toBook), pagination: paginationOf(request, counted?.count ?? 0) })
      }).pipe(Effect.orDie, Effect.withSpan("Books.list"))

    /** Why a slot could not be taken: read only after the conditional update took nothing. */
    const refusal = (slotId: number, at: Date) =>
      Effect.gen(function*() {
        const [slot] = yield* sql<{ available: boolean; booked: boolean; start_time: Date }>`
          SELECT available, booked, start_time FROM available_slots WHERE id = ${slotId}`
        if (slot === undefined) return invalidField("available_slot_id", "must exist")
        if (slot.booked) return conflict(slotMessages.booked)
        if (!slot.available) return conflict(slotMessages.unavailable)
        return slot.start_time.getTime() <= at.getTime() ? conflict(slotMessages.pastSlot) : conflict(slotMessages.booked)
      }).pipe(Effect.orDie)

    const create = (actorId: number, input: CreateBookRequest["book"]) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        const notes = blankToNull(input.notes)
        const bookId = yield* sql.withTransaction(Effect.gen(function*() {
          const [slot] = yield* sql<{ id: number; provider_id: number; start_time: Date; end_time: Date; appointment_type: AppointmentType | null }>`
            UPDATE available_slots SET available = false, booked = true, updated_at = now()
            WHERE id = ${input.available_slot_id} AND available AND NOT booked AND start_time > ${at}
            RETURNING id, provider_id, start_time, end_time, appointment_type`
          if (slot === undefined) return yield* Effect.fail(yield* refusal(input.available_slot_id, at))
          const type = input.appointment_type ?? slot.appointment_type
          const minutes = Math.max(1, Math.round((slot.end_time.getTime() - slot.start_time.getTime()) / 60_000))
          const [appointment] = yield* sql<{ id: number }>`INSERT INTO appointments
            (patient_id, provider_id, available_slot_id, scheduled_at, duration_minutes, status, appointment_type, notes)
            VALUES (${input.patient_id}, ${slot.provider_id}, ${slot.id}, ${slot.start_time}, ${minutes}, 'scheduled', ${type}, ${notes})
            RETURNING id`
          const [book] = yield* sql<{ id: number }>`INSERT INTO books (available_slot_id, patient_id, appointment_id, appointment_type, notes)
            VALUES (${slot.id}, ${input.patient_id}, ${appointment!.id}, ${type}, ${notes}) RETURNING id`
          yield* audit.record({ actorId, action: "book.create", targetType: "book", targetId: book!.id })
          yield* audit.record({ actorId, action: "appointment.create", targetType: "appointment", targetId: appointment!.id })
          return book!.id
        })).pipe(
          Effect.catchTag("SqlError", (error): Effect.Effect<never, Conflict | ValidationFailed> =>
            isForeignKeyViolation(error, "appointments_patient_id_fkey")
              ? Effect.fail(invalidField("patient_id", "must exist"))
              : isExclusionViolation(error, "appointments_provider_no_overlap")
              ? Effect.fail(conflict(appointmentMessages.conflict))
              : isUniqueViolation(error, "books_confirmed_slot_key")
              ? Effect.fail(conflict(slotMessages.booked))
              : Effect.die(error))
        )
        const [row] = yield* sql<BookRow>`SELECT ${columns} FROM books b WHERE b.id = ${bookId}`.pipe(Effect.orDie)
        return toBook(row!)
      }).pipe(Effect.withSpan("Books.create", { attributes: { "slot.id": input.available_slot_id, "actor.id": actorId } }))

    return { list, create } as const
  })
}) {}
