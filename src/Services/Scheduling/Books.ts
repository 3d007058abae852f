/**
 * Books (general §2.5, §4.5): booking a slot makes an appointment, in one transaction. Exactly one
 * of concurrent bookings of a slot wins: the conditional update of the slot (`available AND NOT
 * booked`, `SlotsRepo.take`) is settled by the slot's row lock, and the unique index
 * `books_confirmed_slot_key` and the appointments' exclusion constraint back it up — nothing is
 * checked before it is written.
 */
import { Effect } from "effect"
import { type CreateBookRequest, slotMessages, BookList } from "../../Api/Scheduling/Availability.js"
import { conflict, invalidField } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { AppointmentsRepo } from "./AppointmentsRepo.js"
import { type BookCriteria, BooksRepo, toBook } from "./BooksRepo.js"
import { ReminderSchedule } from "./ReminderSchedule.js"
import { SlotsRepo } from "./SlotsRepo.js"

export type { BookCriteria } from "./BooksRepo.js"

export class Books extends Effect.Service<Books>()("app/Books", {
  dependencies: [BooksRepo.Default, SlotsRepo.Default, AppointmentsRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* BooksRepo
    const slots = yield* SlotsRepo
    const appointments = yield* AppointmentsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const reminders = yield* ReminderSchedule

    const list = Effect.fn("Books.list")(function*(criteria: BookCriteria, request: PageRequest) {
      const { pagination, rows } = yield* repo.list(criteria, request)
      return BookList.make({ books: rows.map(toBook), pagination })
    })

    /** Why a slot could not be taken: read only after the conditional update took nothing. */
    const refusal = (slotId: number, at: Date) =>
      Effect.map(slots.stateOf(slotId), (found) => {
        if (found._tag === "None") return invalidField("available_slot_id", "must exist")
        const slot = found.value
        if (slot.booked) return conflict(slotMessages.booked)
        if (!slot.available) return conflict(slotMessages.unavailable)
        return slot.start_time.getTime() <= at.getTime() ? conflict(slotMessages.pastSlot) : conflict(slotMessages.booked)
      })

    const create = Effect.fn("Books.create")(function*(actorId: number, input: CreateBookRequest["book"]) {
      yield* Effect.annotateCurrentSpan({ "slot.id": input.available_slot_id, "actor.id": actorId })
      const at = yield* now
      const notes = blankToNull(input.notes)
      const bookId = yield* transaction(Effect.gen(function*() {
        const taken = yield* slots.take(input.available_slot_id, at)
        if (taken._tag === "None") return yield* Effect.fail(yield* refusal(input.available_slot_id, at))
        const slot = taken.value
        const type = input.appointment_type ?? slot.appointment_type
        const minutes = Math.max(1, Math.round((slot.end_time.getTime() - slot.start_time.getTime()) / 60_000))
        const appointmentId = yield* appointments.insert({
          patient_id: input.patient_id,
          provider_id: slot.provider_id,
          available_slot_id: slot.id,
          scheduled_at: slot.start_time,
          duration_minutes: minutes,
          appointment_type: type,
          notes
        })
        const bookId = yield* repo.insert({
          available_slot_id: slot.id,
          patient_id: input.patient_id,
          appointment_id: appointmentId,
          appointment_type: type,
          notes
        })
        yield* audit.record({ actorId, action: "book.create", targetType: "book", targetId: bookId })
        yield* audit.record({ actorId, action: "appointment.create", targetType: "appointment", targetId: appointmentId })
        // Its default reminders, committed with the booking.
        yield* reminders.scheduleForBooking(appointmentId, actorId)
        return bookId
      }))
      return toBook(yield* repo.get(bookId))
    })

    return { list, create } as const
  })
}) {}
