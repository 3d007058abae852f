/**
 * The only SQL on `books` (ARCHITECTURE "Persistence"). Rows are decoded with schemas; SQL errors
 * are defects except the unique index `books_confirmed_slot_key` (a slot is booked at most once at
 * a time), which a second concurrent booking meets: 409.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { conflict, type Conflict } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { slotMessages } from "../../Api/Scheduling/Availability.js"
import { AppointmentId, AvailableSlotId, BookId, PatientId } from "../../Domain/Ids.js"
import { AppointmentType, Book, BookStatus } from "../../Domain/Scheduling/Scheduling.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { now } from "../Time.js"

const Timestamp = Schema.DateFromSelf

export const BookRow = Schema.Struct({
  id: BookId,
  available_slot_id: Schema.NullOr(AvailableSlotId),
  patient_id: PatientId,
  appointment_type: Schema.NullOr(AppointmentType),
  notes: Schema.NullOr(Schema.String),
  status: BookStatus,
  appointment_id: Schema.NullOr(AppointmentId),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type BookRow = typeof BookRow.Type

export const toBook = (row: BookRow): Book => Book.make(row, true)

/** What a book list may be narrowed by (general §4.5). */
export const BookCriteria = Schema.Struct({
  patientId: Schema.optional(Schema.Number),
  slotId: Schema.optional(Schema.Number)
})
export type BookCriteria = typeof BookCriteria.Type

/** A confirmed book of a slot and the appointment it made. */
export const NewBook = Schema.Struct({
  available_slot_id: Schema.Number,
  patient_id: Schema.Number,
  appointment_id: Schema.Number,
  appointment_type: Schema.NullOr(AppointmentType),
  notes: Schema.NullOr(Schema.String)
})
export type NewBook = typeof NewBook.Type

const insertErrors = (error: unknown): Effect.Effect<never, Conflict> =>
  isUniqueViolation(error, "books_confirmed_slot_key") ? Effect.fail(conflict(slotMessages.booked)) : Effect.die(error)

const bookColumns = `b.id, b.available_slot_id, b.patient_id, b.appointment_type, b.notes, b.status, b.appointment_id,
  b.created_at, b.updated_at`

export class BooksRepo extends Effect.Service<BooksRepo>()("app/BooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(bookColumns)

    const byCreated = { created_at: sql`b.created_at` }
    /** A page of books, newest first. */
    const list = (criteria: BookCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from: sql`books b`,
        row: BookRow,
        filters: [
          criteria.patientId !== undefined && sql`b.patient_id = ${criteria.patientId}`,
          criteria.slotId !== undefined && sql`b.available_slot_id = ${criteria.slotId}`
        ],
        sort: { columns: byCreated, by: "created_at", dir: "DESC", id: sql`b.id` }
      }, page)

    const findById = SqlSchema.single({
      Request: Schema.Number,
      Result: BookRow,
      execute: (id) => sql`SELECT ${columns} FROM books b WHERE b.id = ${id}`
    })

    const insertOne = SqlSchema.single({
      Request: NewBook,
      Result: Schema.Struct({ id: BookId }),
      execute: (book) => sql`INSERT INTO books ${sql.insert(book)} RETURNING id`
    })

    const cancelOfAppointment = SqlSchema.void({
      Request: Schema.Struct({ slotId: Schema.Number, appointmentId: Schema.Number, at: Timestamp }),
      execute: ({ appointmentId, at, slotId }) =>
        sql`UPDATE books SET status = 'cancelled', updated_at = ${at}
          WHERE available_slot_id = ${slotId} AND appointment_id = ${appointmentId} AND status = 'confirmed'`
    })

    return {
      list,
      /** A book known to exist (a defect otherwise). */
      get: (id: number) => orDefect(findById(id)),
      /** A confirmed book; the slot's second confirmed book is a 409. */
      insert: (book: NewBook) => insertOne(book).pipe(Effect.map((row) => row.id), Effect.catchTag("SqlError", insertErrors), orDefect),
      /** Cancels the confirmed book that holds the slot for the appointment (it was cancelled or moved). */
      cancelOfAppointment: (slotId: number, appointmentId: number) =>
        Effect.flatMap(now, (at) => cancelOfAppointment({ slotId, appointmentId, at })).pipe(orDefect)
    } as const
  })
}) {}
