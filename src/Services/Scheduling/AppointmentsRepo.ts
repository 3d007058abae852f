/**
 * The only SQL on `appointments` and its append-only history `appointment_changes` (ARCHITECTURE
 * "Persistence"). Rows are decoded with schemas; SQL errors are defects except the violations a
 * caller can act on: a provider's overlapping appointments are refused by the exclusion constraint
 * `appointments_provider_no_overlap` (409), unknown patients and providers by foreign keys (422).
 * It owns the appointment status machine's writes (`insert` as scheduled, `update` with a move
 * `Appointments` has checked). Who sees which appointment is the access module's scope
 * (`Access.scope.appointmentCalls`), applied here. The lookups on
 * `providers` that appointments need stay here until the providers area has a repository.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { conflict, type Conflict, invalidField, type ValidationFailed } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { appointmentMessages, AppointmentSortColumn } from "../../Api/Scheduling/Appointments.js"
import { AppointmentId, AvailableSlotId, PatientId, ProviderId } from "../../Domain/Ids.js"
import { Appointment, AppointmentStatus, AppointmentType, PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { Access, type Viewer } from "../Access/Access.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { participantFilters, visitCriteriaFields, zonedDayFilters } from "../SqlFilters.js"
import { isExclusionViolation, isForeignKeyViolation } from "../SqlErrors.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

/** An appointment with its patient's and provider's names and accounts. */
export const AppointmentRow = Schema.Struct({
  id: AppointmentId,
  patient_id: PatientId,
  provider_id: ProviderId,
  available_slot_id: Schema.NullOr(AvailableSlotId),
  scheduled_at: Timestamp,
  status: AppointmentStatus,
  appointment_type: Schema.NullOr(AppointmentType),
  duration_minutes: Schema.Int,
  notes: NullText,
  no_show: Schema.Boolean,
  telephony_room_sid: NullText,
  created_at: Timestamp,
  updated_at: Timestamp,
  patient_first_name: Text,
  patient_last_name: Text,
  patient_user_id: Schema.NullOr(Schema.Number),
  provider_first_name: Text,
  provider_last_name: Text,
  provider_user_id: Schema.Number
})
export type AppointmentRow = typeof AppointmentRow.Type

export const toAppointment = (row: AppointmentRow): Appointment =>
  Appointment.make({
    id: row.id,
    patient_id: row.patient_id,
    provider_id: row.provider_id,
    scheduled_at: row.scheduled_at,
    status: row.status,
    appointment_type: row.appointment_type,
    duration_minutes: row.duration_minutes,
    notes: row.notes,
    no_show: row.no_show,
    telephony_room_sid: row.telephony_room_sid,
    created_at: row.created_at,
    updated_at: row.updated_at,
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** What an appointment list may be narrowed and ordered by (general §4.14); dates are days on the clinic's wall clock. */
export const AppointmentCriteria = Schema.Struct({
  ...visitCriteriaFields,
  providerId: Schema.optional(Schema.Number),
  patientId: Schema.optional(Schema.Number),
  status: Schema.optional(Schema.NullOr(AppointmentStatus)),
  noShows: Schema.optional(Schema.Boolean),
  sortBy: Schema.optional(AppointmentSortColumn)
})
export type AppointmentCriteria = typeof AppointmentCriteria.Type

/** A booking's appointment: scheduled, holding its slot. */
export const NewAppointment = Schema.Struct({
  patient_id: Schema.Number,
  provider_id: Schema.Number,
  available_slot_id: Schema.Number,
  scheduled_at: Timestamp,
  duration_minutes: Schema.Int,
  appointment_type: Schema.NullOr(AppointmentType),
  notes: NullText
})
export type NewAppointment = typeof NewAppointment.Type

/** Every field an update writes (the service has merged the request into the current row and checked the move). */
export const AppointmentChange = Schema.Struct({
  id: Schema.Number,
  scheduled_at: Timestamp,
  provider_id: Schema.Number,
  duration_minutes: Schema.Int,
  patient_id: Schema.Number,
  status: AppointmentStatus,
  no_show: Schema.Boolean,
  notes: NullText,
  available_slot_id: Schema.NullOr(Schema.Number)
})
export type AppointmentChange = typeof AppointmentChange.Type

/** One line of an appointment's history: a move or a status change, with the old and new values. */
export const HistoryEntry = Schema.Struct({
  appointment_id: Schema.Number,
  actor_id: Schema.Number,
  old_scheduled_at: Timestamp,
  new_scheduled_at: Timestamp,
  old_duration_minutes: Schema.Int,
  new_duration_minutes: Schema.Int,
  old_provider_id: Schema.Number,
  new_provider_id: Schema.Number,
  old_status: AppointmentStatus,
  new_status: AppointmentStatus
})
export type HistoryEntry = typeof HistoryEntry.Type

const ById = Schema.Struct({ id: Schema.Number })
const One = Schema.Struct({})

const writeErrors = (error: unknown): Effect.Effect<never, Conflict | ValidationFailed> =>
  isExclusionViolation(error, "appointments_provider_no_overlap")
    ? Effect.fail(conflict(appointmentMessages.conflict))
    : isForeignKeyViolation(error, "appointments_provider_id_fkey")
    ? Effect.fail(invalidField("provider_id", "must exist"))
    : isForeignKeyViolation(error, "appointments_patient_id_fkey")
    ? Effect.fail(invalidField("patient_id", "must exist"))
    : Effect.die(error)

const appointmentColumns = `a.id, a.patient_id, a.provider_id, a.available_slot_id, a.scheduled_at, a.status,
  a.appointment_type, a.duration_minutes, a.notes, a.no_show, a.telephony_room_sid, a.created_at, a.updated_at,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name, pa.user_id AS patient_user_id,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.user_id AS provider_user_id`
const appointmentFrom = `appointments a JOIN patients pa ON pa.id = a.patient_id
  JOIN providers p ON p.id = a.provider_id JOIN users pu ON pu.id = p.user_id`

export class AppointmentsRepo extends Effect.Service<AppointmentsRepo>()("app/AppointmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(appointmentColumns)
    const from = sql.literal(appointmentFrom)

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
    const filtersOf = (criteria: AppointmentCriteria, zone: string): Array<ListFilter> => [
        criteria.providerId !== undefined && sql`a.provider_id = ${criteria.providerId}`,
        criteria.patientId !== undefined && sql`a.patient_id = ${criteria.patientId}`,
        criteria.status != null && sql`a.status = ${criteria.status}`,
        criteria.appointmentType != null && sql`a.appointment_type = ${criteria.appointmentType}`,
        criteria.noShows === true && sql`(a.status = 'no_show' OR a.no_show)`,
        ...zonedDayFilters(sql, "a.scheduled_at", criteria, zone),
        ...participantFilters(sql, criteria, (pattern) => sql`a.notes ILIKE ${pattern} ESCAPE '\\'`)
      ]

    /** A page of appointments in the criteria's order (no-shows newest first by default); dates are days in `zone`. */
    const list = (criteria: AppointmentCriteria, zone: string, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: AppointmentRow,
        filters: filtersOf(criteria, zone),
        sort: {
          columns: sortColumns,
          by: criteria.sortBy ?? "scheduled_at",
          dir: criteria.sortDir ?? (criteria.noShows === true ? "DESC" : "ASC"),
          id: sortColumns.id,
          nulls: "LAST"
        }
      }, page)

    /** The appointment by id, within `condition` (a filter or an access scope); locked `FOR UPDATE` when `lock`. */
    const findWhere = (id: number, condition: Statement.Fragment, lock: boolean) =>
      SqlSchema.findOne({
        Request: ById,
        Result: AppointmentRow,
        execute: (r) => sql`SELECT ${columns} FROM ${from} WHERE a.id = ${r.id} AND ${condition} ${lock ? sql`FOR UPDATE OF a` : sql``}`
      })({ id })

    const insertOne = SqlSchema.single({
      Request: NewAppointment,
      Result: Schema.Struct({ id: AppointmentId }),
      execute: (a) => sql`INSERT INTO appointments ${sql.insert({ ...a, status: "scheduled" })} RETURNING id`
    })

    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ change: AppointmentChange, at: Timestamp }),
      execute: ({ at, change: c }) =>
        sql`UPDATE appointments SET
            scheduled_at = ${c.scheduled_at},
            provider_id = ${c.provider_id},
            duration_minutes = ${c.duration_minutes},
            patient_id = ${c.patient_id},
            status = ${c.status},
            no_show = ${c.no_show},
            notes = ${c.notes},
            available_slot_id = ${c.available_slot_id},
            updated_at = ${at}
          WHERE id = ${c.id}`
    })

    const insertHistory = SqlSchema.void({
      Request: HistoryEntry,
      execute: (entry) => sql`INSERT INTO appointment_changes ${sql.insert(entry)}`
    })

    const updateRoom = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, room: Text, at: Timestamp }),
      execute: ({ at, id, room }) => sql`UPDATE appointments SET telephony_room_sid = ${room}, updated_at = ${at} WHERE id = ${id}`
    })

    const findProvider = SqlSchema.findOne({
      Request: ById,
      Result: One,
      execute: ({ id }) => sql`SELECT 1 FROM providers p JOIN users u ON u.id = p.user_id WHERE p.id = ${id} AND u.deleted_at IS NULL`
    })

    const findActiveProviders = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PersonName,
      execute: () =>
        sql`SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), p.id LIMIT 1000`
    })

    return {
      list,
      /** The appointment, locked `FOR UPDATE` inside a transaction when `lock`. */
      findById: (id: number, lock = false) => orDefect(findWhere(id, sql`TRUE`, lock)),
      /** The appointment if it is the provider's. */
      findOfProvider: (providerId: number, id: number) => orDefect(findWhere(id, sql`a.provider_id = ${providerId}`, false)),
      /** The appointment if the viewer joins its video call (`Access.scope.appointmentCalls`). */
      findForCall: (viewer: Viewer, id: number) => orDefect(findWhere(id, Access.scope.appointmentCalls(sql, viewer), false)),
      /** A booking's appointment, `scheduled`: overlapping another of the provider is a 409, an unknown patient a 422. */
      insert: (appointment: NewAppointment) =>
        insertOne(appointment).pipe(Effect.map((row) => row.id), Effect.catchTag("SqlError", writeErrors), orDefect),
      /** Writes a checked change (status, time, provider …): overlapping another appointment is a 409, unknown references 422. */
      update: (change: AppointmentChange) =>
        Effect.flatMap(now, (at) => updateOne({ change, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** Appends a move or status change to the appointment's history. */
      recordHistory: (entry: HistoryEntry) => orDefect(insertHistory(entry)),
      /** The appointment's video room. */
      setRoom: (id: number, room: string) => Effect.flatMap(now, (at) => updateRoom({ id, room, at })).pipe(orDefect),
      /** Whether a provider exists whose user is not deleted. */
      providerExists: (providerId: number) => Effect.map(orDefect(findProvider({ id: providerId })), Option.isSome),
      /** Active providers by name, for the appointment filters (at most 1000). */
      activeProviders: orDefect(findActiveProviders(undefined))
    } as const
  })
}) {}
