/**
 * The only SQL on `available_slots` and `slot_series`, the recurring series that generate slots
 * (ARCHITECTURE "Persistence"). Rows are decoded with schemas; SQL errors are defects except the
 * violations a caller can act on. Overlaps are refused by the exclusion constraint
 * `available_slots_no_overlap`, never by looking first; a booked slot is protected by `NOT booked`
 * in the WHERE of every change, which the row lock re-checks.
 *
 * Inserts are `INSERT … ON CONFLICT DO NOTHING`: a plain INSERT (or an UPDATE of a slot's indexed
 * columns) checks the constraint against rows of transactions still in progress and waits for
 * them, so two writers of overlapping slots can wait for each other until PostgreSQL aborts one
 * (deadlock); ON CONFLICT's speculative insertion waits for the earlier writer and then skips the
 * row instead. An UPDATE of the times can still deadlock: `update` fails with `SlotsDeadlocked`
 * then, so that its caller runs the whole transaction again.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { conflict, invalid, type Conflict, type ValidationFailed } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { slotMessages } from "../../Api/Scheduling/Availability.js"
import { AvailableSlotId, ProviderId } from "../../Domain/Ids.js"
import { AppointmentType, AvailableSlot, PersonName, RecurrencePattern } from "../../Domain/Scheduling/Scheduling.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { dayEndIn, dayStartIn, zonedDayFilters } from "../SqlFilters.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isCheckViolation, isDeadlock, isExclusionViolation, isForeignKeyViolation } from "../SqlErrors.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

/** A slot with its provider's name. */
export const SlotRow = Schema.Struct({
  id: AvailableSlotId,
  provider_id: ProviderId,
  start_time: Timestamp,
  end_time: Timestamp,
  appointment_type: Schema.NullOr(AppointmentType),
  available: Schema.Boolean,
  recurring: Schema.Boolean,
  recurrence_pattern: Schema.NullOr(RecurrencePattern),
  created_at: Timestamp,
  updated_at: Timestamp,
  provider_first_name: Text,
  provider_last_name: Text
})
export type SlotRow = typeof SlotRow.Type

export const toSlot = (row: SlotRow): AvailableSlot =>
  AvailableSlot.make({
    id: row.id,
    provider_id: row.provider_id,
    start_time: row.start_time,
    end_time: row.end_time,
    appointment_type: row.appointment_type,
    available: row.available,
    recurring: row.recurring,
    recurrence_pattern: row.recurrence_pattern,
    created_at: row.created_at,
    updated_at: row.updated_at,
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** What a slot list may be narrowed by (general §4.5); dates are days on the clinic's wall clock. */
export const SlotCriteria = Schema.Struct({
  providerId: Schema.optional(Schema.Number),
  startDate: Schema.optional(Text),
  endDate: Schema.optional(Text),
  available: Schema.optional(Schema.Boolean)
})
export type SlotCriteria = typeof SlotCriteria.Type

/** The free slots a booking may take (general §4.5 search); no `date`: the clinic's today at `at`. */
export const SlotSearch = Schema.Struct({
  providerId: Schema.optional(Schema.Number),
  date: Schema.optional(Text),
  duration: Schema.optional(Schema.Number),
  appointmentType: Schema.optional(AppointmentType)
})
export type SlotSearch = typeof SlotSearch.Type

/** A slot to write; a recurring one names its series. */
export const NewSlot = Schema.Struct({
  provider_id: Schema.Number,
  start_time: Timestamp,
  end_time: Timestamp,
  appointment_type: Schema.NullOr(AppointmentType),
  recurring: Schema.Boolean,
  recurrence_pattern: Schema.NullOr(RecurrencePattern),
  recurrence_rule: NullText,
  series_id: Schema.NullOr(Schema.Number)
})
export type NewSlot = typeof NewSlot.Type

const InsertedSlot = Schema.Struct({ id: AvailableSlotId, start_time: Timestamp, end_time: Timestamp })

/** The fields an update sets; absent ones keep their value. */
export const SlotChanges = Schema.Struct({
  start_time: Schema.optional(Timestamp),
  end_time: Schema.optional(Timestamp),
  appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
  available: Schema.optional(Schema.Boolean)
})
export type SlotChanges = typeof SlotChanges.Type

/** A slot a booking took, with what its appointment copies. */
export const TakenSlot = Schema.Struct({
  id: AvailableSlotId,
  provider_id: ProviderId,
  start_time: Timestamp,
  end_time: Timestamp,
  appointment_type: Schema.NullOr(AppointmentType)
})
export type TakenSlot = typeof TakenSlot.Type

/** Why a slot could not be taken. */
const SlotState = Schema.Struct({ available: Schema.Boolean, booked: Schema.Boolean, start_time: Timestamp })

const NewSeries = Schema.Struct({
  provider_id: Schema.Number,
  first_start_time: Timestamp,
  first_end_time: Timestamp,
  appointment_type: Schema.NullOr(AppointmentType),
  recurrence_pattern: RecurrencePattern,
  recurrence_rule: NullText,
  generated_until: Timestamp
})
export type NewSeries = typeof NewSeries.Type

/** A series as its extension reads it. */
export const SeriesRow = Schema.Struct({
  provider_id: ProviderId,
  first_start_time: Timestamp,
  first_end_time: Timestamp,
  appointment_type: Schema.NullOr(AppointmentType),
  recurrence_pattern: RecurrencePattern,
  recurrence_rule: NullText,
  generated_until: Timestamp
})
export type SeriesRow = typeof SeriesRow.Type

const IdRow = Schema.Struct({ id: Schema.Number })
const ById = Schema.Struct({ id: Schema.Number })
const ByIdAt = Schema.Struct({ id: Schema.Number, at: Timestamp })
const Owner = Schema.Struct({ id: AvailableSlotId, provider_id: ProviderId })

/** PostgreSQL aborted an update of a slot's times to break a deadlock: run the transaction again. */
export class SlotsDeadlocked extends Data.TaggedError("SlotsDeadlocked")<{}> {}

/** An unknown provider, met by the series (written first for a recurring slot) or the slot. */
const insertErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
  isForeignKeyViolation(error, "available_slots_provider_id_fkey") || isForeignKeyViolation(error, "slot_series_provider_id_fkey")
    ? Effect.fail(invalid({ provider_id: ["must exist"] }))
    : Effect.die(error)

const updateErrors = (error: unknown): Effect.Effect<never, Conflict | ValidationFailed | SlotsDeadlocked> =>
  isExclusionViolation(error, "available_slots_no_overlap")
    ? Effect.fail(conflict(slotMessages.conflict))
    : isCheckViolation(error, "available_slots_end_after_start")
    ? Effect.fail(invalid({ end_time: [slotMessages.endBeforeStart] }))
    : isCheckViolation(error, "available_slots_at_most_a_day")
    ? Effect.fail(invalid({ end_time: [slotMessages.tooLong] }))
    : isDeadlock(error)
    ? Effect.fail(new SlotsDeadlocked())
    : Effect.die(error)

const slotColumns = `s.id, s.provider_id, s.start_time, s.end_time, s.appointment_type, s.available, s.recurring,
  s.recurrence_pattern, s.created_at, s.updated_at, pu.first_name AS provider_first_name, pu.last_name AS provider_last_name`
const slotFrom = `available_slots s JOIN providers p ON p.id = s.provider_id JOIN users pu ON pu.id = p.user_id`

/** The search answers at most this many slots (one day of one clinic). */
export const maxSearchResults = 500

export class SlotsRepo extends Effect.Service<SlotsRepo>()("app/SlotsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(slotColumns)
    const from = sql.literal(slotFrom)

    const filtersOf = (criteria: SlotCriteria, zone: string): Array<ListFilter> => [
      criteria.providerId !== undefined && sql`s.provider_id = ${criteria.providerId}`,
      ...zonedDayFilters(sql, "s.start_time", criteria, zone),
      criteria.available !== undefined && sql`s.available = ${criteria.available}`
    ]
    const byStart = { start_time: sql`s.start_time` }

    /** A page of slots by start time; dates are days in `zone`. */
    const list = (criteria: SlotCriteria, zone: string, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: SlotRow,
        filters: filtersOf(criteria, zone),
        sort: { columns: byStart, by: "start_time", dir: "ASC", id: sql`s.id` }
      }, page)

    const findFree = SqlSchema.findAll({
      Request: Schema.Struct({ search: SlotSearch, at: Timestamp, zone: Text }),
      Result: SlotRow,
      execute: ({ at, search, zone }) => {
        const date = search.date ?? sql`(${at}::timestamptz AT TIME ZONE ${zone})::date`
        const clauses: Array<Statement.Fragment> = [
          sql`s.available`, sql`NOT s.booked`, sql`s.start_time > ${at}`,
          sql`s.start_time >= ${dayStartIn(sql, date, zone)}`, sql`s.start_time < ${dayEndIn(sql, date, zone)}`
        ]
        if (search.providerId !== undefined) clauses.push(sql`s.provider_id = ${search.providerId}`)
        if (search.duration !== undefined) clauses.push(sql`s.end_time - s.start_time >= make_interval(mins => ${search.duration})`)
        if (search.appointmentType !== undefined) {
          clauses.push(sql`(s.appointment_type IS NULL OR s.appointment_type = ${search.appointmentType})`)
        }
        return sql`SELECT ${columns} FROM ${from} WHERE ${sql.and(clauses)} ORDER BY s.start_time, s.id LIMIT ${maxSearchResults}`
      }
    })

    const findById = SqlSchema.findOne({
      Request: ById,
      Result: SlotRow,
      execute: ({ id }) => sql`SELECT ${columns} FROM ${from} WHERE s.id = ${id}`
    })

    const insertSlots = SqlSchema.findAll({
      Request: Schema.Array(NewSlot),
      Result: InsertedSlot,
      execute: (slots) => sql`INSERT INTO available_slots ${sql.insert(slots as Array<NewSlot>)} ON CONFLICT DO NOTHING RETURNING id, start_time, end_time`
    })

    const updateOne = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.Number, changes: SlotChanges, at: Timestamp }),
      Result: IdRow,
      execute: ({ at, changes, id }) => {
        const sets: Array<Statement.Fragment> = [sql`updated_at = ${at}`]
        if (changes.start_time !== undefined) sets.push(sql`start_time = ${changes.start_time}`)
        if (changes.end_time !== undefined) sets.push(sql`end_time = ${changes.end_time}`)
        if (changes.appointment_type !== undefined) sets.push(sql`appointment_type = ${changes.appointment_type}`)
        if (changes.available !== undefined) sets.push(sql`available = ${changes.available}`)
        return sql`UPDATE available_slots SET ${sql.csv(sets)} WHERE id = ${id} AND NOT booked RETURNING id`
      }
    })

    const deleteOne = SqlSchema.findAll({
      Request: ById,
      Result: IdRow,
      execute: ({ id }) => sql`DELETE FROM available_slots WHERE id = ${id} AND NOT booked RETURNING id`
    })

    const deleteMany = SqlSchema.findAll({
      Request: Schema.Struct({ ids: Schema.Array(Schema.Number), providerId: Schema.Number }),
      Result: Schema.Struct({ id: AvailableSlotId }),
      execute: ({ ids, providerId }) =>
        sql`DELETE FROM available_slots WHERE id IN ${sql.in(ids)} AND provider_id = ${providerId} AND NOT booked RETURNING id`
    })

    const findOwners = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: Owner,
      execute: (ids) => sql`SELECT id, provider_id FROM available_slots WHERE id IN ${sql.in(ids)}`
    })

    const takeOne = SqlSchema.findOne({
      Request: ByIdAt,
      Result: TakenSlot,
      execute: ({ at, id }) =>
        sql`UPDATE available_slots SET available = false, booked = true, updated_at = ${at}
          WHERE id = ${id} AND available AND NOT booked AND start_time > ${at}
          RETURNING id, provider_id, start_time, end_time, appointment_type`
    })

    const findState = SqlSchema.findOne({
      Request: ById,
      Result: SlotState,
      execute: ({ id }) => sql`SELECT available, booked, start_time FROM available_slots WHERE id = ${id}`
    })

    const releaseOne = SqlSchema.void({
      Request: ByIdAt,
      execute: ({ at, id }) => sql`UPDATE available_slots SET available = true, booked = false, updated_at = ${at} WHERE id = ${id}`
    })

    const insertSeries = SqlSchema.single({
      Request: NewSeries,
      Result: IdRow,
      execute: (series) => sql`INSERT INTO slot_series ${sql.insert(series)} RETURNING id`
    })

    const findDueSeries = SqlSchema.findAll({
      Request: Timestamp,
      Result: IdRow,
      execute: (horizon) => sql`SELECT id FROM slot_series WHERE generated_until < ${horizon} ORDER BY id`
    })

    const lockDueSeries = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, horizon: Timestamp }),
      Result: SeriesRow,
      execute: ({ horizon, id }) =>
        sql`SELECT provider_id, first_start_time, first_end_time, appointment_type, recurrence_pattern, recurrence_rule, generated_until
          FROM slot_series WHERE id = ${id} AND generated_until < ${horizon} FOR UPDATE SKIP LOCKED`
    })

    const markGenerated = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, horizon: Timestamp, at: Timestamp }),
      execute: ({ at, horizon, id }) => sql`UPDATE slot_series SET generated_until = ${horizon}, updated_at = ${at} WHERE id = ${id}`
    })

    return {
      /** One page of slots by start time; dates are days in `zone`. */
      list,
      /** Free future slots of one day in `zone` (at most `maxSearchResults`), by start time. */
      searchFree: (search: SlotSearch, at: Date, zone: string) => orDefect(findFree({ search, at, zone })),
      findById: (id: number) => orDefect(findById({ id })),
      /**
       * Writes the slots that overlap no availability (ON CONFLICT DO NOTHING: a skipped slot has
       * no row back); an unknown provider is a 422.
       */
      insert: (slots: ReadonlyArray<NewSlot>) =>
        slots.length === 0 ? Effect.succeed([]) : insertSlots(slots).pipe(Effect.catchTag("SqlError", insertErrors), orDefect),
      /** Changes an unbooked slot; whether it did (false: unknown or booked). Overlaps are a 409. */
      update: (id: number, changes: SlotChanges) =>
        Effect.flatMap(now, (at) => updateOne({ id, changes, at })).pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.catchTag("SqlError", updateErrors),
          orDefect
        ),
      /** Deletes an unbooked slot; whether it did. */
      delete: (id: number) => Effect.map(orDefect(deleteOne({ id })), (rows) => rows.length > 0),
      /** Deletes the provider's unbooked slots among `ids`; the ids deleted. */
      deleteOfProvider: (ids: ReadonlyArray<number>, providerId: number) =>
        ids.length === 0
          ? Effect.succeed([])
          : Effect.map(orDefect(deleteMany({ ids, providerId })), (rows) => rows.map((row) => row.id)),
      /** The slots among `ids` that exist, with their provider. */
      ownersOf: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.succeed([]) : orDefect(findOwners(ids)),
      /**
       * A booking takes the slot if it is available, not booked and in the future at `at`: the row
       * lock settles concurrent takers (exactly one wins). None when it could not be taken.
       */
      take: (id: number, at: Date) => orDefect(takeOne({ id, at })),
      /** Whether a slot exists, is available or booked, and when it starts (why a take failed). */
      stateOf: (id: number) => orDefect(findState({ id })),
      /** Frees a slot a cancelled or moved appointment held. */
      release: (id: number) => Effect.flatMap(now, (at) => releaseOne({ id, at })).pipe(orDefect),
      /** Writes a recurring series; an unknown provider is a 422. */
      insertSeries: (series: NewSeries) =>
        insertSeries(series).pipe(Effect.map((row) => row.id), Effect.catchTag("SqlError", insertErrors), orDefect),
      /** The series whose slots stop before `horizon`, by id. */
      dueSeries: (horizon: Date) => Effect.map(orDefect(findDueSeries(horizon)), (rows) => rows.map((row) => row.id)),
      /** The series, locked, if it is still due and no one else holds it. */
      lockDueSeries: (id: number, horizon: Date) => orDefect(lockDueSeries({ id, horizon })),
      /** The series has its slots up to `horizon`. */
      markGenerated: (id: number, horizon: Date) => Effect.flatMap(now, (at) => markGenerated({ id, horizon, at })).pipe(orDefect)
    } as const
  })
}) {}
