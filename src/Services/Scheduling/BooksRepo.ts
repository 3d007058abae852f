/**
 * The only SQL on `books` (ARCHITECTURE "Persistence"). Rows are decoded with schemas; SQL errors
 * are defects except the unique index `books_confirmed_slot_key` (a slot is booked at most once at
 * a time), which a second concurrent booking meets: 409.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { conflict, type Conflict } from "../../Api/Errors.js"
import { slotMessages } from "../../Api/Scheduling/Availability.js"
import { AppointmentId, AvailableSlotId, BookId, PatientId } from "../../Domain/Ids.js"
import { AppointmentType, Book, BookStatus } from "../../Domain/Scheduling/Scheduling.js"
import { orDefect } from "../Repository.js"
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

const Count = Schema.Struct({ count: Schema.Int })

const insertErrors = (error: unknown): Effect.Effect<never, Conflict> =>
  isUniqueViolation(error, "books_confirmed_slot_key") ? Effect.fail(conflict(slotMessages.booked)) : Effect.die(error)

const bookColumns = `b.id, b.available_slot_id, b.patient_id, b.appointment_type, b.notes, b.status, b.appointment_id,
  b.created_at, b.updated_at`

export class BooksRepo extends Effect.Service<BooksRepo>()("app/BooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(bookColumns)

    const whereOf = (criteria: BookCriteria) => {
      const clauses: Array<Statement.Fragment> = []
      if (criteria.patientId !== undefined) clauses.push(sql`b.patient_id = ${criteria.patientId}`)
      if (criteria.slotId !== undefined) clauses.push(sql`b.available_slot_id = ${criteria.slotId}`)
      return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
    }

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ criteria: BookCriteria, limit: Schema.Int, offset: Schema.Int }),
      Result: BookRow,
      execute: ({ criteria, limit, offset }) =>
        sql`SELECT ${columns} FROM books b WHERE ${whereOf(criteria)}
          ORDER BY b.created_at DESC, b.id DESC LIMIT ${limit} OFFSET ${offset}`
    })

    const findCount = SqlSchema.single({
      Request: BookCriteria,
      Result: Count,
      execute: (criteria) => sql`SELECT count(*)::int AS count FROM books b WHERE ${whereOf(criteria)}`
    })

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
      /** One page of books, newest first. */
      page: (criteria: BookCriteria, limit: number, offset: number) => orDefect(findPage({ criteria, limit, offset })),
      count: (criteria: BookCriteria) => Effect.map(orDefect(findCount(criteria)), (row) => row.count),
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
