/**
 * Appointment reminders through the API (general §4.16): who may schedule, see and cancel them,
 * and the rules of a new reminder. The rows and jobs are `ReminderSchedule`'s.
 */
import { Effect } from "effect"
import { type Forbidden, forbidden, invalidField, messages, type NotFound, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type CreateReminderRequest, CreatedReminders, ReminderList, reminderMessages } from "../../Api/Scheduling/Reminders.js"
import type { Caller } from "../../Api/Security.js"
import { everyDayChannels, remindableStatuses, type ReminderChannel } from "../../Domain/Scheduling/Reminders.js"
import { Access, isParent } from "../Access/Access.js"
import { AuditLog } from "../AuditLog.js"
import { makeTransaction } from "../Repository.js"
import { now, nowMillis } from "../Time.js"
import { isReachable, type Reachability, ReminderSchedule } from "./ReminderSchedule.js"
import { reminderReasons, RemindersRepo, toReminder } from "./RemindersRepo.js"

const notAuthorized = () => forbidden(messages.unauthorized)
const unreachable: Record<ReminderChannel, string> = {
  sms: reminderMessages.noPhone,
  voice: reminderMessages.noPhone,
  email: reminderMessages.noEmail,
  push: reminderMessages.noDevice
}

export class Reminders extends Effect.Service<Reminders>()("app/Reminders", {
  dependencies: [RemindersRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* RemindersRepo
    const transaction = yield* makeTransaction
    const schedule = yield* ReminderSchedule
    const audit = yield* AuditLog
    const access = yield* Access

    /**
     * Whether the caller may act on an appointment's reminders: a parent on their own patients'
     * (another family's: 403, §5.4); staff on the patients they see (Access; else 404 "Appointment
     * not found").
     */
    const mayActOn = (caller: Caller, appointmentId: number, patientUserId: number | null): Effect.Effect<void, Forbidden | NotFound> =>
      isParent(caller)
        ? patientUserId === caller.id ? Effect.void : Effect.fail(notAuthorized())
        : Effect.asVoid(access.visibleAppointment(caller, appointmentId))

    /** The appointment, if the caller may act on it: 404 unknown, 403 another family's (§5.4). */
    const appointmentFor = (caller: Caller, appointmentId: number) =>
      Effect.gen(function*() {
        const reach = yield* schedule.reachabilityOf(appointmentId)
        if (reach === undefined) return yield* Effect.fail(notFound("Appointment"))
        yield* mayActOn(caller, appointmentId, reach.patient_user_id)
        return reach
      })

    const reminderFor = (caller: Caller, id: number) =>
      Effect.gen(function*() {
        const row = yield* repo.findWithPatient(id)
        if (row === undefined) return yield* Effect.fail(notFound("Appointment reminder"))
        yield* Effect.mapError(mayActOn(caller, row.appointment_id, row.patient_user_id), (e) =>
          e._tag === "NotFound" ? notFound("Appointment reminder") : e)
        return row
      })

    const channelsFor = (reach: Reachability, type: CreateReminderRequest["appointment_reminder"]["reminder_type"]) =>
      Effect.gen(function*() {
        if (type === "all") {
          const channels = everyDayChannels.filter((channel) => isReachable(reach, channel))
          if (channels.length === 0) return yield* Effect.fail(invalidField("reminder_type", reminderMessages.noChannel))
          return channels
        }
        if (!isReachable(reach, type)) return yield* Effect.fail(invalidField("reminder_type", unreachable[type]))
        return [type]
      })

    const create = Effect.fn("Reminders.create")(function*(caller: Caller, input: CreateReminderRequest["appointment_reminder"]) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": input.appointment_id })
      const reach = yield* appointmentFor(caller, input.appointment_id)
      if (!remindableStatuses.includes(reach.status)) {
        return yield* Effect.fail(invalidField("appointment_id", `is ${reach.status}: no reminder can be scheduled`))
      }
      const now = yield* nowMillis
      if (input.send_at !== undefined) {
        if (input.send_at.getTime() <= now) return yield* Effect.fail(invalidField("send_at", reminderMessages.inFuture))
        if (input.send_at.getTime() >= reach.scheduled_at.getTime()) {
          return yield* Effect.fail(invalidField("send_at", reminderMessages.beforeAppointment))
        }
      } else if (reach.scheduled_at.getTime() <= now) {
        return yield* Effect.fail(invalidField("appointment_id", "is in the past: no reminder can be scheduled"))
      }
      const channels = yield* channelsFor(reach, input.reminder_type)
      const message = input.message?.trim() ? input.message.trim() : null
      const language = input.language ?? reach.language
      const rows = yield* transaction(Effect.gen(function*() {
        const rows = yield* schedule.insert(
          input.appointment_id,
          reach,
          channels.map((channel) => ({ channel, sendAt: input.send_at, message, language })),
          { automatic: false, actorId: caller.id }
        )
        for (const row of rows) {
          yield* audit.record({ actorId: caller.id, action: "appointment_reminder.create", targetType: "appointment_reminder", targetId: row.id })
        }
        return rows
      }))
      const reminders = rows.map(toReminder)
      return CreatedReminders.make({ appointment_reminder: reminders[0]!, reminders })
    })

    const list = Effect.fn("Reminders.list")(function*(caller: Caller, appointmentId: number | undefined, request: PageRequest) {
      if (appointmentId !== undefined) yield* appointmentFor(caller, appointmentId)
      // Only the reminders of appointments the caller may see (`Access.scope.appointments`).
      const at = yield* now
      const { pagination, rows } = yield* repo.list(caller, at, appointmentId ?? null, request)
      return ReminderList.make({ appointment_reminders: rows.map(toReminder), pagination })
    })

    const show = Effect.fn("Reminders.show")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "reminder.id": id })
      return toReminder(yield* reminderFor(caller, id))
    })

    /** Cancels a scheduled reminder not yet being sent; a cancelled one again is harmless. */
    const cancel = Effect.fn("Reminders.cancel")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "reminder.id": id })
      const row = yield* reminderFor(caller, id)
      if (row.status === "cancelled") return toReminder(row)
      const cancelled = yield* transaction(Effect.gen(function*() {
        const done = yield* schedule.cancelOne(id, reminderReasons.cancelledByUser)
        if (done) yield* audit.record({ actorId: caller.id, action: "appointment_reminder.cancel", targetType: "appointment_reminder", targetId: id })
        return done
      }))
      if (!cancelled) return yield* Effect.fail(invalidField("status", reminderMessages.notScheduled))
      return toReminder(yield* reminderFor(caller, id))
    })

    return { create, list, show, cancel } as const
  })
}) {}
