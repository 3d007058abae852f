/**
 * Appointments (general §2.13, §4.14, §4.9, §4.2): lists, the status machine, rescheduling and
 * cancelling (which free the slot), and video tokens. A provider's overlapping appointments are
 * refused by the exclusion constraint `appointments_provider_no_overlap`, never by looking first.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import { type Conflict, conflict, invalidField, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  AppointmentFilters, AppointmentList, appointmentMessages, type AppointmentSortColumn, OnCallAppointment, onCallLeadMinutes,
  TelephonyTokens, type UpdateAppointmentRequest, VideoTokens as VideoTokenPair, videoTokenTtlSeconds
} from "../../Api/Scheduling/Appointments.js"
import type { AppointmentId } from "../../Domain/Ids.js"
import {
  activeStatuses, type AppointmentStatus, appointmentStatuses, type AppointmentType, appointmentTypes, canMove, isFinal, PersonName
} from "../../Domain/Scheduling/Scheduling.js"
import { likePattern, nameMatches as sharedNameMatches } from "../SqlSearch.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { isExclusionViolation, isForeignKeyViolation } from "../SqlErrors.js"
import { appointmentColumns, appointmentFrom, type AppointmentRow, blankToNull, toAppointment } from "./SchedulingRepo.js"
import { Access, type Viewer } from "../Access/Access.js"
import { VideoTokens } from "./VideoTokens.js"
import { ReminderSchedule } from "./ReminderSchedule.js"

export interface AppointmentCriteria {
  readonly search?: string | null | undefined
  readonly providerId?: number | undefined
  readonly patientId?: number | undefined
  readonly status?: AppointmentStatus | null | undefined
  readonly appointmentType?: AppointmentType | null | undefined
  readonly patientName?: string | null | undefined
  readonly providerName?: string | null | undefined
  readonly startDate?: string | null | undefined
  readonly endDate?: string | null | undefined
  readonly noShows?: boolean | undefined
  readonly sortBy?: AppointmentSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
}

const videoNotConfigured = () => invalidField("video", appointmentMessages.videoNotConfigured)
const minuteMs = 60_000

export class Appointments extends Effect.Service<Appointments>()("app/Appointments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const video = yield* VideoTokens
    const reminders = yield* ReminderSchedule
    const access = yield* Access
    const zone = (yield* AppConfig).clinicTimeZone
    const columns = sql.literal(appointmentColumns)
    const from = sql.literal(appointmentFrom)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const sortColumns: Record<AppointmentSortColumn, Statement.Fragment> = {
      id: sql`a.id`,
      scheduled_at: sql`a.scheduled_at`,
      status: sql`a.status`,
      appointment_type: sql`a.appointment_type`,
      duration_minutes: sql`a.duration_minutes`,
      patient_id: sql`a.patient_id`,
      provider_id: sql`a.provider_id`,
      created_at: sql`a.created_at`,
      updated_at: sql`a.updated_at`
    }
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const

    const nameMatches = (first: string, last: string, text: string) => sharedNameMatches(sql, first, last, text)

    const whereOf = (criteria: AppointmentCriteria) => {
      const clauses: Array<Statement.Fragment> = []
      if (criteria.providerId !== undefined) clauses.push(sql`a.provider_id = ${criteria.providerId}`)
      if (criteria.patientId !== undefined) clauses.push(sql`a.patient_id = ${criteria.patientId}`)
      if (criteria.status != null) clauses.push(sql`a.status = ${criteria.status}`)
      if (criteria.appointmentType != null) clauses.push(sql`a.appointment_type = ${criteria.appointmentType}`)
      if (criteria.noShows === true) clauses.push(sql`(a.status = 'no_show' OR a.no_show)`)
      if (criteria.startDate != null) clauses.push(sql`a.scheduled_at >= ((${criteria.startDate}::date)::timestamp AT TIME ZONE ${zone})`)
      if (criteria.endDate != null) clauses.push(sql`a.scheduled_at < (((${criteria.endDate}::date) + 1)::timestamp AT TIME ZONE ${zone})`)
      const patientName = blankToNull(criteria.patientName)
      if (patientName !== null) clauses.push(nameMatches("pa.first_name", "pa.last_name", patientName))
      const providerName = blankToNull(criteria.providerName)
      if (providerName !== null) clauses.push(nameMatches("pu.first_name", "pu.last_name", providerName))
      const search = blankToNull(criteria.search)
      if (search !== null) {
        clauses.push(sql`(${nameMatches("pa.first_name", "pa.last_name", search)} OR ${nameMatches("pu.first_name", "pu.last_name", search)}
          OR a.notes ILIKE ${likePattern(search)} ESCAPE '\\')`)
      }
      return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
    }

    const list = (criteria: AppointmentCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const where = whereOf(criteria)
        const dir = directions[criteria.sortDir ?? (criteria.noShows === true ? "DESC" : "ASC")]
        const order = sql`ORDER BY ${sortColumns[criteria.sortBy ?? "scheduled_at"]} ${dir} NULLS LAST, a.id ${dir}`
        const rows = yield* sql<AppointmentRow>`SELECT ${columns} FROM ${from} WHERE ${where} ${order}
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${from} WHERE ${where}`
        yield* Effect.annotateCurrentSpan({ "appointments.count": rows.length })
        return AppointmentList.make({ appointments: rows.map(toAppointment), pagination: paginationOf(request, counted?.count ?? 0) })
      }).pipe(Effect.orDie, Effect.withSpan("Appointments.list"))

    const findRow = (id: number, scope: Statement.Fragment = sql`TRUE`, lock = false) =>
      sql<AppointmentRow>`SELECT ${columns} FROM ${from} WHERE a.id = ${id} AND ${scope} ${lock ? sql`FOR UPDATE OF a` : sql``}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Appointment")) : Effect.succeed(rows[0]))
      )

    const show = (id: number) => Effect.map(findRow(id), toAppointment).pipe(Effect.withSpan("Appointments.show", { attributes: { "appointment.id": id } }))

    const providerList = (providerId: number, status: AppointmentStatus | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const [provider] = yield* sql`SELECT 1 FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.id = ${providerId} AND u.deleted_at IS NULL`.pipe(Effect.orDie)
        if (provider === undefined) return yield* Effect.fail(notFound("Provider"))
        return yield* list({ providerId, status }, request)
      })

    const providerShow = (providerId: number, id: number) =>
      Effect.map(findRow(id, sql`a.provider_id = ${providerId}`), toAppointment)

    /** Frees the slot an appointment held (its book is cancelled): on cancel and on reschedule. */
    const releaseSlot = (row: AppointmentRow) =>
      row.available_slot_id === null ? Effect.void : Effect.gen(function*() {
        yield* sql`UPDATE available_slots SET available = true, booked = false, updated_at = now() WHERE id = ${row.available_slot_id}`
        yield* sql`UPDATE books SET status = 'cancelled', updated_at = now()
          WHERE available_slot_id = ${row.available_slot_id} AND appointment_id = ${row.id} AND status = 'confirmed'`
      })

    type Changes = UpdateAppointmentRequest["appointment"]

    const update = (actorId: number, id: number, changes: Changes) =>
      Effect.gen(function*() {
        yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findRow(id, sql`TRUE`, true)
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
          yield* sql`UPDATE appointments SET
              scheduled_at = ${scheduledAt},
              provider_id = ${providerId},
              duration_minutes = ${duration},
              patient_id = ${changes.patient_id ?? current.patient_id},
              status = ${status},
              no_show = ${status === "no_show" ? true : current.no_show},
              notes = ${changes.notes === undefined ? current.notes : blankToNull(changes.notes)},
              available_slot_id = ${releases ? null : current.available_slot_id},
              updated_at = now()
            WHERE id = ${id}`
          if (moves || status !== current.status) {
            yield* sql`INSERT INTO appointment_changes (appointment_id, actor_id, old_scheduled_at, new_scheduled_at,
                old_duration_minutes, new_duration_minutes, old_provider_id, new_provider_id, old_status, new_status)
              VALUES (${id}, ${actorId}, ${current.scheduled_at}, ${scheduledAt}, ${current.duration_minutes}, ${duration},
                ${current.provider_id}, ${providerId}, ${current.status}, ${status})`
          }
          const record = (action: string) => audit.record({ actorId, action, targetType: "appointment", targetId: id })
          yield* record("appointment.update")
          if (moves) yield* record("appointment.reschedule")
          if (status !== current.status) yield* record(`appointment.${status}`)
          // Issue 17: pending reminders follow a move, and stop with a cancel or the end.
          if (moves || status !== current.status) yield* reminders.appointmentChanged(id)
        })).pipe(
          Effect.catchTag("SqlError", (error): Effect.Effect<never, Conflict | ValidationFailed> =>
            isExclusionViolation(error, "appointments_provider_no_overlap")
              ? Effect.fail(conflict(appointmentMessages.conflict))
              : isForeignKeyViolation(error, "appointments_provider_id_fkey")
              ? Effect.fail(invalidField("provider_id", "must exist"))
              : isForeignKeyViolation(error, "appointments_patient_id_fkey")
              ? Effect.fail(invalidField("patient_id", "must exist"))
              : Effect.die(error))
        )
        return toAppointment(yield* findRow(id))
      }).pipe(Effect.withSpan("Appointments.update", { attributes: { "appointment.id": id, "actor.id": actorId } }))

    /** DELETE: cancels (the record stays) and frees the slot; cancelling twice is harmless. */
    const cancel = (actorId: number, id: number) =>
      Effect.gen(function*() {
        const current = yield* findRow(id)
        if (current.status === "cancelled") return
        // Cancelled appointments hold no time: the overlap constraint cannot refuse this.
        yield* update(actorId, id, { status: "cancelled" }).pipe(Effect.catchTag("Conflict", Effect.die))
      }).pipe(Effect.asVoid, Effect.withSpan("Appointments.cancel", { attributes: { "appointment.id": id, "actor.id": actorId } }))

    const filters = Effect.gen(function*() {
      const providers = yield* sql<{ id: number; first_name: string; last_name: string }>`
        SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
        WHERE p.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), p.id LIMIT 1000`
      return AppointmentFilters.make({
        statuses: appointmentStatuses,
        appointment_types: appointmentTypes,
        providers: providers.map((p) => PersonName.make(p))
      })
    }).pipe(Effect.orDie, Effect.withSpan("Appointments.filters"))

    const roomOf = (id: number) => `appointment-${id}`

    const refreshTokens = (actorId: number, id: number) =>
      Effect.gen(function*() {
        const row = yield* findRow(id)
        if (!video.configured) return yield* Effect.fail(videoNotConfigured())
        const room = roomOf(id)
        const at = yield* now
        yield* sql`UPDATE appointments SET telephony_room_sid = ${room}, updated_at = now() WHERE id = ${id}`.pipe(Effect.orDie)
        const provider = yield* video.issue({ identity: `provider-${row.provider_id}`, room, ttlSeconds: videoTokenTtlSeconds })
        const patient = yield* video.issue({ identity: `patient-${row.patient_id}`, room, ttlSeconds: videoTokenTtlSeconds })
        yield* audit.record({ actorId, action: "appointment.refresh_telephony_tokens", targetType: "appointment", targetId: id })
        return TelephonyTokens.make({
          appointment_id: id as AppointmentId,
          room_name: room,
          tokens: VideoTokenPair.make({ provider, patient }),
          expires_at: new Date(at.getTime() + videoTokenTtlSeconds * 1000)
        })
      }).pipe(Effect.withSpan("Appointments.refreshTokens", { attributes: { "appointment.id": id } }))

    // Clinic (§4.2). Who sees which appointment is Access's rule; anything else answers 404 as if it did not exist.

    const clinicList = (viewer: Viewer, patientId: number | undefined, request: PageRequest) =>
      Effect.flatMap(access.defaultPatientFor(viewer, patientId), (id) => list({ patientId: id }, request))

    const clinicShow = (viewer: Viewer, id: number) => Effect.map(Effect.zipRight(access.visibleAppointment(viewer, id), findRow(id)), toAppointment)

    /** The appointment and a video token for its patient's parent or its provider, while the call is open. */
    const onCall = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* findRow(id, Access.scope.appointmentCalls(sql, viewer))
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
          yield* sql`UPDATE appointments SET telephony_room_sid = ${room}, updated_at = now() WHERE id = ${id}`.pipe(Effect.orDie)
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
      }).pipe(Effect.withSpan("Appointments.onCall", { attributes: { "appointment.id": id } }))

    return {
      list, show, providerList, providerShow, update, cancel, filters, refreshTokens, clinicList, clinicShow, onCall
    } as const
  })
}) {}
