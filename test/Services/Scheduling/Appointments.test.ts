/**
 * The appointment status machine (general §2.13, docs/spec-decisions.md) through the
 * `Appointments` service over fake repositories: every move, the ones refused, rescheduling and
 * cancelling (which free the slot), and what each writes (the row, its history, the audit trail,
 * the slot, the reminders told). The database's side (the exclusion constraint under concurrency,
 * bookings, reminders sent) is test/Http/Scheduling.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { conflict } from "../../../src/Api/Errors.js"
import { AppointmentId, AvailableSlotId, PatientId, ProviderId } from "../../../src/Domain/Ids.js"
import { type AppointmentStatus, appointmentStatuses } from "../../../src/Domain/Scheduling/Scheduling.js"
import { Appointments } from "../../../src/Services/Scheduling/Appointments.js"
import { type AppointmentRow, AppointmentsRepo, type HistoryEntry } from "../../../src/Services/Scheduling/AppointmentsRepo.js"
import { BooksRepo } from "../../../src/Services/Scheduling/BooksRepo.js"
import { ReminderSchedule } from "../../../src/Services/Scheduling/ReminderSchedule.js"
import { SlotsRepo } from "../../../src/Services/Scheduling/SlotsRepo.js"
import { VideoTokens } from "../../../src/Services/Scheduling/VideoTokens.js"
import { now } from "../../../src/Services/Time.js"
import { testConfig } from "../../Layers/fixtures.js"
import {
  auditActions, type AuditRow, type BreakGlassAccess, FakeDatabase, fakeAccess, fakeAuditLog, type Table, unused
} from "../../support/fakes.js"

const admin = 1
const patient = 10
const provider = 20
const slot = 40
const nowMs = Date.UTC(2026, 2, 10, 16, 0)
const hour = 3_600_000
/** Tomorrow 09:00 and 10:00 in Los Angeles. */
const nine = new Date(Date.UTC(2026, 2, 11, 16, 0))
const ten = new Date(nine.getTime() + hour)

/** The statuses that hold the provider's time (the exclusion constraint's `WHERE`). */
const holdingTime: ReadonlyArray<AppointmentStatus> = ["scheduled", "confirmed", "in_progress", "completed", "rescheduled"]

/** A slot as the appointments see it: freed or not. */
interface SlotState { readonly id: number; readonly released: boolean }
/** A book of a slot, cancelled with its appointment. */
interface BookState { readonly id: number; readonly slotId: number; readonly appointmentId: number; readonly cancelled: boolean }
type History = HistoryEntry & { readonly id: number }

/** `appointments` with the provider-overlap exclusion constraint, and its history. */
const fakeAppointmentsRepo = (appointments: Table<AppointmentRow>, history: Table<History>) => {
  const end = (a: { scheduled_at: Date; duration_minutes: number }) => a.scheduled_at.getTime() + a.duration_minutes * 60_000
  return AppointmentsRepo.make({
    list: unused("AppointmentsRepo.list"),
    findById: (id) => Effect.succeed(appointments.find(id)),
    findOfProvider: (providerId, id) => Effect.succeed(Option.filter(appointments.find(id), (a) => a.provider_id === providerId)),
    findForCall: unused("AppointmentsRepo.findForCall"),
    insert: unused("AppointmentsRepo.insert"),
    update: (change) =>
      Effect.gen(function*() {
        const overlaps = holdingTime.includes(change.status) && appointments.all().some((other) =>
          other.id !== change.id && other.provider_id === change.provider_id && holdingTime.includes(other.status) &&
          other.scheduled_at.getTime() < end(change) && change.scheduled_at.getTime() < end(other))
        if (overlaps) return yield* Effect.fail(conflict("Appointment conflicts with another appointment of the provider"))
        const at = yield* now
        appointments.update(change.id, (row) => ({
          ...row, ...change, id: row.id, patient_id: PatientId.make(change.patient_id), provider_id: ProviderId.make(change.provider_id),
          available_slot_id: change.available_slot_id === null ? null : AvailableSlotId.make(change.available_slot_id), updated_at: at
        }))
      }),
    recordHistory: (entry) => Effect.sync(() => void history.insert((id) => ({ ...entry, id }))),
    setRoom: unused("AppointmentsRepo.setRoom"),
    providerExists: (id) => Effect.succeed(id === provider),
    activeProviders: Effect.succeed([])
  })
}

const fakeSlotsRepo = (slots: Table<SlotState>) =>
  SlotsRepo.make({
    list: unused("SlotsRepo.list"),
    searchFree: unused("SlotsRepo.searchFree"),
    findById: unused("SlotsRepo.findById"),
    insert: unused("SlotsRepo.insert"),
    update: unused("SlotsRepo.update"),
    delete: unused("SlotsRepo.delete"),
    deleteOfProvider: unused("SlotsRepo.deleteOfProvider"),
    ownersOf: unused("SlotsRepo.ownersOf"),
    take: unused("SlotsRepo.take"),
    stateOf: unused("SlotsRepo.stateOf"),
    release: (id) => Effect.sync(() => void slots.update(id, (s) => ({ ...s, released: true }))),
    insertSeries: unused("SlotsRepo.insertSeries"),
    dueSeries: unused("SlotsRepo.dueSeries"),
    lockDueSeries: unused("SlotsRepo.lockDueSeries"),
    markGenerated: unused("SlotsRepo.markGenerated")
  })

const fakeBooksRepo = (books: Table<BookState>) =>
  BooksRepo.make({
    list: unused("BooksRepo.list"),
    get: unused("BooksRepo.get"),
    insert: unused("BooksRepo.insert"),
    cancelOfAppointment: (slotId, appointmentId) =>
      Effect.sync(() => books.where((b) => b.slotId === slotId && b.appointmentId === appointmentId).forEach((b) =>
        books.update(b.id, (row) => ({ ...row, cancelled: true }))))
  })

/** Reminders are their own tests: here, which appointments they were told changed. */
const fakeReminders = (told: Array<number>) =>
  ReminderSchedule.make({
    reachabilityOf: unused("ReminderSchedule.reachabilityOf"),
    insert: unused("ReminderSchedule.insert"),
    scheduleForBooking: unused("ReminderSchedule.scheduleForBooking"),
    appointmentChanged: (id) => Effect.sync(() => void told.push(id)),
    cancelOne: unused("ReminderSchedule.cancelOne")
  })

const appointmentRow = (id: number, status: AppointmentStatus, scheduledAt = nine): AppointmentRow => ({
  id: AppointmentId.make(id), patient_id: PatientId.make(patient), provider_id: ProviderId.make(provider),
  available_slot_id: id === 1 ? AvailableSlotId.make(slot) : null, scheduled_at: scheduledAt, status, appointment_type: "therapy",
  duration_minutes: 60, notes: null, no_show: false, telephony_room_sid: null, created_at: new Date(nowMs - hour),
  updated_at: new Date(nowMs - hour), patient_first_name: "Pat", patient_last_name: "Doe", patient_user_id: null,
  provider_first_name: "Lee", provider_last_name: "Roe", provider_user_id: 21
})

/** A fresh world: appointment 1 holds slot 40 (booked), and `Appointments` over it. */
const world = (status: AppointmentStatus) => {
  const db = new FakeDatabase()
  const appointments = db.table<AppointmentRow>()
  const history = db.table<History>()
  const slots = db.table<SlotState>()
  const books = db.table<BookState>()
  const audit = db.table<AuditRow>()
  const told: Array<number> = []
  const before = appointments.put(appointmentRow(1, status))
  slots.put({ id: slot, released: false })
  books.put({ id: 1, slotId: slot, appointmentId: 1, cancelled: false })
  const layer = Appointments.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(AppointmentsRepo, fakeAppointmentsRepo(appointments, history)),
      Layer.succeed(SlotsRepo, fakeSlotsRepo(slots)),
      Layer.succeed(BooksRepo, fakeBooksRepo(books)),
      Layer.succeed(ReminderSchedule, fakeReminders(told)),
      Layer.succeed(VideoTokens, { configured: false, issue: unused("VideoTokens.issue") }),
      fakeAccess({ patients: [patient], related: () => true }, db.table<BreakGlassAccess>()),
      fakeAuditLog(audit),
      testConfig()
    )),
    Layer.provide(db.sqlClient)
  )
  const run = <A, E>(f: (service: Appointments) => Effect.Effect<A, E>) =>
    Effect.zipRight(TestClock.setTime(nowMs), Effect.provide(Effect.flatMap(Appointments, f), layer))
  /** Nothing written anywhere: the row, its history, the slot and its book, the audit trail, the reminders. */
  const untouched = () => {
    expect(appointments.all()).toEqual([before])
    expect(history.all()).toEqual([])
    expect(slots.all()).toEqual([{ id: slot, released: false }])
    expect(books.all()).toEqual([{ id: 1, slotId: slot, appointmentId: 1, cancelled: false }])
    expect(audit.all()).toEqual([])
    expect(told).toEqual([])
  }
  return { appointments, history, slots, books, audit, told, run, untouched }
}

/** The moves a PUT may make by status; final statuses move no more. */
const allowed: ReadonlyArray<readonly [AppointmentStatus, AppointmentStatus]> = [
  ["scheduled", "confirmed"], ["scheduled", "cancelled"], ["scheduled", "no_show"], ["scheduled", "rescheduled"],
  ["confirmed", "in_progress"], ["confirmed", "cancelled"], ["confirmed", "no_show"], ["confirmed", "rescheduled"],
  ["rescheduled", "confirmed"], ["rescheduled", "cancelled"], ["rescheduled", "no_show"], ["in_progress", "completed"]
]
const final: ReadonlyArray<AppointmentStatus> = ["completed", "cancelled", "no_show"]

const refusal = (message: string) => ({ _tag: "ValidationFailed", errors: { status: [message] } })

describe("Appointments over fake repositories", () => {
  describe("every move between two statuses", () => {
    for (const from of appointmentStatuses) {
      for (const to of appointmentStatuses.filter((s) => s !== from)) {
        const allows = allowed.some(([a, b]) => a === from && b === to)
        it.effect(`${from} → ${to}: ${allows ? "moves, recorded" : "refused, nothing written"}`, () =>
          Effect.gen(function*() {
            const w = world(from)
            const result = yield* Effect.either(w.run((service) => service.update(admin, 1, { status: to })))
            if (!allows) {
              const message = final.includes(from) ? `is ${from}, which is final` : `can't change from ${from} to ${to}`
              expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(refusal(message))))
              return w.untouched()
            }
            expect(Option.map(Option.getRight(result), (a) => a.status)).toEqual(Option.some(to))
            const cancelled = to === "cancelled"
            expect(w.appointments.get(1)).toMatchObject({
              status: to, no_show: to === "no_show", available_slot_id: cancelled ? null : slot, updated_at: new Date(nowMs)
            })
            expect(w.history.all()).toMatchObject([{ appointment_id: 1, actor_id: admin, old_status: from, new_status: to }])
            expect(auditActions(w.audit, "appointment", 1)).toEqual(["appointment.update", `appointment.${to}`])
            expect(w.told).toEqual([1])
            // Only a cancel (or a move in time) frees the slot and cancels its book.
            expect(w.slots.get(slot)?.released).toBe(cancelled)
            expect(w.books.get(1)?.cancelled).toBe(cancelled)
          }))
      }
    }
  })

  it.effect("a new time reschedules: status rescheduled, the slot freed, old and new time in the history", () =>
    Effect.gen(function*() {
      const w = world("confirmed")
      const moved = yield* w.run((service) => service.update(admin, 1, { scheduled_at: ten, duration_minutes: 45 }))
      expect(moved).toMatchObject({ status: "rescheduled", scheduled_at: ten, duration_minutes: 45 })
      expect(w.appointments.get(1)).toMatchObject({ status: "rescheduled", scheduled_at: ten, available_slot_id: null })
      expect(w.history.all()).toMatchObject([{
        old_scheduled_at: nine, new_scheduled_at: ten, old_duration_minutes: 60, new_duration_minutes: 45,
        old_status: "confirmed", new_status: "rescheduled"
      }])
      expect(auditActions(w.audit, "appointment", 1)).toEqual(["appointment.update", "appointment.reschedule", "appointment.rescheduled"])
      expect(w.slots.get(slot)).toEqual({ id: slot, released: true })
      expect(w.books.get(1)?.cancelled).toBe(true)
      expect(w.told).toEqual([1])
    }))

  it.effect("an appointment in progress moves in time without becoming rescheduled", () =>
    Effect.gen(function*() {
      const w = world("in_progress")
      yield* w.run((service) => service.update(admin, 1, { scheduled_at: ten }))
      expect(w.appointments.get(1)).toMatchObject({ status: "in_progress", scheduled_at: ten })
      expect(auditActions(w.audit, "appointment", 1)).toEqual(["appointment.update", "appointment.reschedule"])
    }))

  it.effect("a final appointment neither moves in time nor changes provider", () =>
    Effect.gen(function*() {
      for (const status of final) {
        const w = world(status)
        for (const change of [{ scheduled_at: ten }, { provider_id: ProviderId.make(22) }, { duration_minutes: 30 }]) {
          const error = yield* Effect.flip(w.run((service) => service.update(admin, 1, change)))
          expect(error).toMatchObject(refusal(`is ${status}, which is final`))
        }
        w.untouched()
      }
    }))

  it.effect("a move onto another appointment of the provider is 409 and frees nothing (the transaction rolls back)", () =>
    Effect.gen(function*() {
      const w = world("scheduled")
      const other = w.appointments.put(appointmentRow(2, "confirmed", ten))
      const error = yield* Effect.flip(w.run((service) => service.update(admin, 1, { scheduled_at: new Date(ten.getTime() + 30 * 60_000) })))
      expect(error).toMatchObject({ _tag: "Conflict", errors: "Appointment conflicts with another appointment of the provider" })
      expect(w.appointments.all()).toEqual([appointmentRow(1, "scheduled"), other])
      // The slot was freed before the write failed: the rollback gives it back.
      expect(w.slots.get(slot)).toEqual({ id: slot, released: false })
      expect(w.books.get(1)?.cancelled).toBe(false)
      expect(w.history.all()).toEqual([])
      expect(w.audit.all()).toEqual([])
      // A cancelled appointment holds no time: the same move next to it is fine.
      w.appointments.update(2, (row) => ({ ...row, status: "cancelled" }))
      yield* w.run((service) => service.update(admin, 1, { scheduled_at: new Date(ten.getTime() + 30 * 60_000) }))
      expect(w.appointments.get(1)?.status).toBe("rescheduled")
    }))

  it.effect("notes alone change no status: no history, reminders left alone", () =>
    Effect.gen(function*() {
      const w = world("confirmed")
      yield* w.run((service) => service.update(admin, 1, { notes: "  Bring the forms  " }))
      expect(w.appointments.get(1)).toMatchObject({ status: "confirmed", notes: "Bring the forms", available_slot_id: slot })
      expect(w.history.all()).toEqual([])
      expect(auditActions(w.audit, "appointment", 1)).toEqual(["appointment.update"])
      expect(w.told).toEqual([])
    }))

  it.effect("cancel (DELETE): cancels and frees the slot once; twice is harmless; a final one refuses", () =>
    Effect.gen(function*() {
      const w = world("scheduled")
      yield* w.run((service) => service.cancel(admin, 1))
      yield* w.run((service) => service.cancel(admin, 1))
      expect(w.appointments.get(1)).toMatchObject({ status: "cancelled", available_slot_id: null })
      expect(w.history.all()).toHaveLength(1)
      expect(auditActions(w.audit, "appointment", 1)).toEqual(["appointment.update", "appointment.cancelled"])
      const completed = world("completed")
      const error = yield* Effect.flip(completed.run((service) => service.cancel(admin, 1)))
      expect(error).toMatchObject(refusal("is completed, which is final"))
      completed.untouched()
    }))

  it.effect("an unknown appointment is 404", () =>
    Effect.gen(function*() {
      const w = world("scheduled")
      const notFound = { _tag: "NotFound", errors: "Appointment not found" }
      expect(yield* Effect.flip(w.run((service) => service.update(admin, 9, { status: "confirmed" })))).toMatchObject(notFound)
      expect(yield* Effect.flip(w.run((service) => service.cancel(admin, 9)))).toMatchObject(notFound)
      w.untouched()
    }))
})
