/**
 * Appointments (general §2.13, §4.14, §4.9, §4.2): lists, the status machine, rescheduling and
 * cancelling (which free the slot), and video tokens. A provider's overlapping appointments are
 * refused by the exclusion constraint `appointments_provider_no_overlap`, never by looking first.
 */
import { Effect, type Option } from "effect"
import { invalidField, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  AppointmentFilters, AppointmentList, appointmentMessages, OnCallAppointment, onCallLeadMinutes, TelephonyTokens,
  type UpdateAppointmentRequest, VideoTokens as VideoTokenPair, videoTokenTtlSeconds
} from "../../Api/Scheduling/Appointments.js"
import {
  activeStatuses, type AppointmentStatus, appointmentStatuses, appointmentTypes, canMove, isFinal
} from "../../Domain/Scheduling/Scheduling.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { Access, type Viewer } from "../Access/Access.js"
import { type AppointmentCriteria, type AppointmentRow, AppointmentsRepo, toAppointment } from "./AppointmentsRepo.js"
import { BooksRepo } from "./BooksRepo.js"
import { SlotsRepo } from "./SlotsRepo.js"
import { VideoTokens } from "./VideoTokens.js"
import { ReminderSchedule } from "./ReminderSchedule.js"

export type { AppointmentCriteria } from "./AppointmentsRepo.js"

const videoNotConfigured = () => invalidField("video", appointmentMessages.videoNotConfigured)
const minuteMs = 60_000

export class Appointments extends Effect.Service<Appointments>()("app/Appointments", {
  dependencies: [AppointmentsRepo.Default, SlotsRepo.Default, BooksRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* AppointmentsRepo
    const slots = yield* SlotsRepo
    const books = yield* BooksRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const video = yield* VideoTokens
    const reminders = yield* ReminderSchedule
    const access = yield* Access
    const zone = (yield* AppConfig).clinicTimeZone

    const list = Effect.fn("Appointments.list")(function*(criteria: AppointmentCriteria, request: PageRequest) {
      const { pagination, rows } = yield* repo.list(criteria, zone, request)
      yield* Effect.annotateCurrentSpan({ "appointments.count": rows.length })
      return AppointmentList.make({ appointments: rows.map(toAppointment), pagination })
    })

    const orNotFound = <E, R>(found: Effect.Effect<Option.Option<AppointmentRow>, E, R>) =>
      Effect.flatMap(found, (row) => row._tag === "None" ? Effect.fail(notFound("Appointment")) : Effect.succeed(row.value))

    const findRow = (id: number, lock = false) => orNotFound(repo.findById(id, lock))

    const show = Effect.fn("Appointments.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id })
      return toAppointment(yield* findRow(id))
    })

    const providerList = (providerId: number, status: AppointmentStatus | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        if (!(yield* repo.providerExists(providerId))) return yield* Effect.fail(notFound("Provider"))
        return yield* list({ providerId, status }, request)
      })

    const providerShow = (providerId: number, id: number) => Effect.map(orNotFound(repo.findOfProvider(providerId, id)), toAppointment)

    /** Frees the slot an appointment held (its book is cancelled): on cancel and on reschedule. */
    const releaseSlot = (row: AppointmentRow) => {
      const slotId = row.available_slot_id
      return slotId === null ? Effect.void : Effect.gen(function*() {
        yield* slots.release(slotId)
        yield* books.cancelOfAppointment(slotId, row.id)
      })
    }

    type Changes = UpdateAppointmentRequest["appointment"]

    const update = Effect.fn("Appointments.update")(function*(actorId: number, id: number, changes: Changes) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id, "actor.id": actorId })
      yield* transaction(Effect.gen(function*() {
        const current = yield* findRow(id, true)
        const scheduledAt = changes.scheduled_at ?? current.scheduled_at
        const providerId = changes.provider_id ?? current.provider_id
        const duration = changes.duration_minutes ?? current.duration_minutes
        const moves = scheduledAt.getTime() !== current.scheduled_at.getTime() || providerId !== current.provider_id ||
          duration !== current.duration_minutes
        if (isFinal(current.status) && (moves || (changes.status !== undefined && changes.status !== current.status))) {
          return yield* Effect.fail(invalidField("status", `is ${current.status}, which is final`))
        }
        const status: AppointmentStatus = changes.status ??
          (moves && canMove(current.status, "rescheduled") ? "rescheduled" : current.status)
        if (!canMove(current.status, status)) {
          return yield* Effect.fail(invalidField("status", `can't change from ${current.status} to ${status}`))
        }
        const releases = (moves || status === "cancelled") && current.available_slot_id !== null
        if (releases) yield* releaseSlot(current)
        yield* repo.update({
          id,
          scheduled_at: scheduledAt,
          provider_id: providerId,
          duration_minutes: duration,
          patient_id: changes.patient_id ?? current.patient_id,
          status,
          no_show: status === "no_show" ? true : current.no_show,
          notes: changes.notes === undefined ? current.notes : blankToNull(changes.notes),
          available_slot_id: releases ? null : current.available_slot_id
        })
        if (moves || status !== current.status) {
          yield* repo.recordHistory({
            appointment_id: id,
            actor_id: actorId,
            old_scheduled_at: current.scheduled_at,
            new_scheduled_at: scheduledAt,
            old_duration_minutes: current.duration_minutes,
            new_duration_minutes: duration,
            old_provider_id: current.provider_id,
            new_provider_id: providerId,
            old_status: current.status,
            new_status: status
          })
        }
        const record = (action: string) => audit.record({ actorId, action, targetType: "appointment", targetId: id })
        yield* record("appointment.update")
        if (moves) yield* record("appointment.reschedule")
        if (status !== current.status) yield* record(`appointment.${status}`)
        // Pending reminders follow a move, and stop with a cancel or the end.
        if (moves || status !== current.status) yield* reminders.appointmentChanged(id)
      }))
      return toAppointment(yield* findRow(id))
    })

    /** DELETE: cancels (the record stays) and frees the slot; cancelling twice is harmless. */
    const cancel = Effect.fn("Appointments.cancel")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id, "actor.id": actorId })
      const current = yield* findRow(id)
      if (current.status === "cancelled") return
      // Cancelled appointments hold no time: the overlap constraint cannot refuse this.
      yield* update(actorId, id, { status: "cancelled" }).pipe(Effect.catchTag("Conflict", Effect.die))
    }, Effect.asVoid)

    const filters = Effect.gen(function*() {
      const providers = yield* repo.activeProviders
      return AppointmentFilters.make({ statuses: appointmentStatuses, appointment_types: appointmentTypes, providers })
    }).pipe(Effect.withSpan("Appointments.filters"))

    const roomOf = (id: number) => `appointment-${id}`

    const refreshTokens = Effect.fn("Appointments.refreshTokens")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id })
      const row = yield* findRow(id)
      if (!video.configured) return yield* Effect.fail(videoNotConfigured())
      const room = roomOf(id)
      const at = yield* now
      yield* repo.setRoom(id, room)
      const provider = yield* video.issue({ identity: `provider-${row.provider_id}`, room, ttlSeconds: videoTokenTtlSeconds })
      const patient = yield* video.issue({ identity: `patient-${row.patient_id}`, room, ttlSeconds: videoTokenTtlSeconds })
      yield* audit.record({ actorId, action: "appointment.refresh_telephony_tokens", targetType: "appointment", targetId: id })
      return TelephonyTokens.make({
        appointment_id: row.id,
        room_name: room,
        tokens: VideoTokenPair.make({ provider, patient }),
        expires_at: new Date(at.getTime() + videoTokenTtlSeconds * 1000)
      })
    })

    // Clinic (§4.2). Who sees which appointment is Access's rule; anything else answers 404 as if it did not exist.

    const clinicList = (viewer: Viewer, patientId: number | undefined, request: PageRequest) =>
      Effect.flatMap(access.defaultPatientFor(viewer, patientId), (id) => list({ patientId: id }, request))

    const clinicShow = (viewer: Viewer, id: number) => Effect.map(Effect.zipRight(access.visibleAppointment(viewer, id), findRow(id)), toAppointment)

    /** The appointment and a video token for its patient's parent or its provider, while the call is open. */
    const onCall = Effect.fn("Appointments.onCall")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "appointment.id": id })
      const row = yield* orNotFound(repo.findForCall(viewer, id))
      const at = yield* now
      const opens = row.scheduled_at.getTime() - onCallLeadMinutes * minuteMs
      const ends = row.scheduled_at.getTime() + row.duration_minutes * minuteMs
      if (!activeStatuses.includes(row.status) || row.status === "completed") {
        return yield* Effect.fail(invalidField("status", `is ${row.status}: the call is closed`))
      }
      if (at.getTime() < opens) {
        return yield* Effect.fail(invalidField("scheduled_at", `the call opens at ${new Date(opens).toISOString()}, ${onCallLeadMinutes} minutes before the appointment`))
      }
      if (at.getTime() >= ends) {
        return yield* Effect.fail(invalidField("scheduled_at", `the appointment ended at ${new Date(ends).toISOString()}`))
      }
      if (!video.configured) return yield* Effect.fail(videoNotConfigured())
      const room = row.telephony_room_sid ?? roomOf(id)
      if (row.telephony_room_sid === null) {
        yield* repo.setRoom(id, room)
      }
      const identity = row.provider_user_id === viewer.id ? `provider-${row.provider_id}` : `patient-${row.patient_id}`
      const token = yield* video.issue({ identity, room, ttlSeconds: videoTokenTtlSeconds })
      return OnCallAppointment.make({
        appointment: toAppointment(yield* findRow(id)),
        room_name: room,
        token,
        identity,
        expires_at: new Date(at.getTime() + videoTokenTtlSeconds * 1000)
      })
    })

    return {
      list, show, providerList, providerShow, update, cancel, filters, refreshTokens, clinicList, clinicShow, onCall
    } as const
  })
}) {}
