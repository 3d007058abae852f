/**
 * Provider availability (general §2.5, §4.5). Overlaps are refused by the exclusion constraint
 * `available_slots_no_overlap` (sql/0011_scheduling.sql), never by looking first; a booked slot is
 * protected by `NOT booked` in the WHERE of every change, which the row lock re-checks.
 *
 * Creates write each slot once, complete, with `INSERT … ON CONFLICT DO NOTHING`. A plain INSERT
 * (or an UPDATE of a slot's indexed columns, `series_id` included) checks the constraint against
 * rows of transactions still in progress and waits for them; two writers of overlapping slots can
 * then wait for each other, which PostgreSQL ends by aborting one (deadlock, 40P01, after a second),
 * so a burst of identical creates got 500s and, while the pool waited, 503s. ON CONFLICT's
 * speculative insertion waits for the earlier writer to finish and then skips the row instead.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import {
  type BatchCreateRequest, BatchCreateResponse, BatchDeleteError, BatchDeleteResponse, BatchError, SkippedOccurrence, type CreateSlotRequest, slotMessages, SlotCreated, SlotList,
  type UpdateSlotRequest
} from "../../Api/Scheduling/Availability.js"
import { type Conflict, conflict, invalid, type FieldMessages, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import type { AvailableSlotId } from "../../Domain/Ids.js"
import {
  laterOccurrences, parseRule, recurrenceHorizonDays, type RecurrencePattern, type Rule, ruleOfPattern
} from "../../Domain/Scheduling/Recurrence.js"
import type { AppointmentType } from "../../Domain/Scheduling/Scheduling.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { isCheckViolation, isExclusionViolation, isForeignKeyViolation, retryDeadlocks } from "../SqlErrors.js"
import { slotColumns, slotFrom, type SlotRow, toSlot } from "./SchedulingRepo.js"

export interface SlotCriteria {
  readonly providerId?: number | undefined
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
  readonly available?: boolean | undefined
}

export interface SlotSearch {
  readonly providerId?: number | undefined
  readonly date?: string | undefined
  readonly duration?: number | undefined
  readonly appointmentType?: AppointmentType | undefined
}

/** The search answers at most this many slots (one day of one clinic). */
export const maxSearchResults = 500

const dayMs = 86_400_000

export class Slots extends Effect.Service<Slots>()("app/Slots", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const config = yield* AppConfig
    const zone = config.clinicTimeZone
    const columns = sql.literal(slotColumns)
    const from = sql.literal(slotFrom)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Midnight starting `date` on the clinic's wall clock. */
    const dayStart = (date: string) => sql`((${date}::date)::timestamp AT TIME ZONE ${zone})`
    const dayEnd = (date: string) => sql`(((${date}::date) + 1)::timestamp AT TIME ZONE ${zone})`

    const find = (id: number) =>
      sql<SlotRow>`SELECT ${columns} FROM ${from} WHERE s.id = ${id}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Slot")) : Effect.succeed(rows[0]))
      )

    const list = (criteria: SlotCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = []
        if (criteria.providerId !== undefined) clauses.push(sql`s.provider_id = ${criteria.providerId}`)
        if (criteria.startDate !== undefined) clauses.push(sql`s.start_time >= ${dayStart(criteria.startDate)}`)
        if (criteria.endDate !== undefined) clauses.push(sql`s.start_time < ${dayEnd(criteria.endDate)}`)
        if (criteria.available !== undefined) clauses.push(sql`s.available = ${criteria.available}`)
        const where = clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
        const rows = yield* sql<SlotRow>`SELECT ${columns} FROM ${from} WHERE ${where}
          ORDER BY s.start_time, s.id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM available_slots s WHERE ${where}`
        return SlotList.make({ available_slots: rows.map(toSlot), pagination: paginationOf(request, counted?.count ?? 0) })
      }).pipe(Effect.orDie, Effect.withSpan("Slots.list"))

    const search = (criteria: SlotSearch) =>
      Effect.gen(function*() {
        const at = yield* now
        const date = criteria.date ?? (yield* sql<{ today: string }>`SELECT to_char((${at}::timestamptz AT TIME ZONE ${zone})::date, 'YYYY-MM-DD') AS today`)[0]!.today
        const clauses: Array<Statement.Fragment> = [
          sql`s.available`, sql`NOT s.booked`, sql`s.start_time > ${at}`,
          sql`s.start_time >= ${dayStart(date)}`, sql`s.start_time < ${dayEnd(date)}`
        ]
        if (criteria.providerId !== undefined) clauses.push(sql`s.provider_id = ${criteria.providerId}`)
        if (criteria.duration !== undefined) clauses.push(sql`s.end_time - s.start_time >= make_interval(mins => ${criteria.duration})`)
        if (criteria.appointmentType !== undefined) {
          clauses.push(sql`(s.appointment_type IS NULL OR s.appointment_type = ${criteria.appointmentType})`)
        }
        const rows = yield* sql<SlotRow>`SELECT ${columns} FROM ${from} WHERE ${sql.and(clauses)}
          ORDER BY s.start_time, s.id LIMIT ${maxSearchResults}`
        yield* Effect.annotateCurrentSpan({ "slots.count": rows.length })
        return { available_slots: rows.map(toSlot) }
      }).pipe(Effect.orDie, Effect.withSpan("Slots.search"))

    const show = (id: number) => Effect.map(find(id), toSlot).pipe(Effect.withSpan("Slots.show", { attributes: { "slot.id": id } }))

    /** The 422 of a slot's times, if any: end after start, start in the future. */
    const timeErrors = (start: Date, end: Date, at: Date, checkFuture: boolean): FieldMessages => {
      const errors: Record<string, Array<string>> = {}
      if (end.getTime() <= start.getTime()) errors.end_time = [slotMessages.endBeforeStart]
      else if (end.getTime() - start.getTime() > dayMs) errors.end_time = [slotMessages.tooLong]
      if (checkFuture && start.getTime() <= at.getTime()) errors.start_time = [slotMessages.past]
      return errors
    }

    /** An unknown provider, met by the series (written first for a recurring slot) or the slot. */
    const providerMustExist = (error: unknown): Effect.Effect<never, ValidationFailed> =>
      isForeignKeyViolation(error, "available_slots_provider_id_fkey") || isForeignKeyViolation(error, "slot_series_provider_id_fkey")
        ? Effect.fail(invalid({ provider_id: ["must exist"] }))
        : Effect.die(error)

    const create = (actorId: number, input: CreateSlotRequest["available_slot"]) =>
      Effect.gen(function*() {
        const at = yield* now
        const errors: Record<string, ReadonlyArray<string>> = { ...timeErrors(input.start_time, input.end_time, at, true) }
        const pattern = input.recurrence_pattern ?? null
        const recurring = input.recurring ?? pattern !== null
        let rule: Rule | undefined
        if (recurring && pattern === null) errors.recurrence_pattern = ["can't be blank"]
        if (!recurring && pattern !== null) errors.recurrence_pattern = ["must be blank when recurring is false"]
        if (recurring && pattern === "custom") {
          const parsed = parseRule(input.recurrence_rule ?? "")
          if ("error" in parsed) errors.recurrence_rule = [parsed.error]
          else rule = parsed.rule
        } else if (recurring && pattern !== null && pattern !== "custom") {
          rule = ruleOfPattern(pattern)
        }
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
        const type = input.appointment_type ?? null
        const ruleText = pattern === "custom" ? input.recurrence_rule!.trim() : null
        return yield* sql.withTransaction(Effect.gen(function*() {
          const horizon = new Date(at.getTime() + recurrenceHorizonDays * dayMs)
          // The series first, so that the first slot is written once, with its series_id.
          const seriesId = rule === undefined ? null : (yield* sql<{ id: number }>`INSERT INTO slot_series
              (provider_id, first_start_time, first_end_time, appointment_type, recurrence_pattern, recurrence_rule, generated_until)
              VALUES (${input.provider_id}, ${input.start_time}, ${input.end_time}, ${type}, ${pattern}, ${ruleText}, ${horizon})
              RETURNING id`)[0]!.id
          // No row back: the slot overlaps availability (the table's only other constraint, the
          // generated primary key, cannot conflict). Failing rolls the series back with it.
          const [first] = yield* sql<{ id: number }>`INSERT INTO available_slots
            (provider_id, start_time, end_time, appointment_type, recurring, recurrence_pattern, recurrence_rule, series_id)
            VALUES (${input.provider_id}, ${input.start_time}, ${input.end_time}, ${type}, ${recurring}, ${pattern}, ${ruleText}, ${seriesId})
            ON CONFLICT DO NOTHING RETURNING id`
          if (first === undefined) return yield* Effect.fail(conflict(slotMessages.conflict))
          const skipped: Array<SkippedOccurrence> = []
          let created = 0
          if (rule !== undefined) {
            const occurrences = laterOccurrences({ start: input.start_time, end: input.end_time }, rule, zone, horizon)
            if (occurrences.length > 0) {
              const inserted = yield* sql<{ start_time: Date }>`INSERT INTO available_slots ${sql.insert(occurrences.map((o) => ({
                provider_id: input.provider_id,
                start_time: o.start,
                end_time: o.end,
                appointment_type: type,
                recurring: true,
                recurrence_pattern: pattern,
                recurrence_rule: ruleText,
                series_id: seriesId
              })))} ON CONFLICT DO NOTHING RETURNING start_time`
              const made = new Set(inserted.map((r) => r.start_time.getTime()))
              created = inserted.length
              for (const o of occurrences) {
                if (!made.has(o.start.getTime())) skipped.push(SkippedOccurrence.make({ start_time: o.start, end_time: o.end, error: slotMessages.conflict }))
              }
            }
          }
          yield* audit.record({ actorId, action: "available_slot.create", targetType: "available_slot", targetId: first.id })
          const row = yield* find(first.id).pipe(Effect.catchTag("NotFound", Effect.die))
          return SlotCreated.make({ available_slot: toSlot(row), occurrences_created: created, skipped_occurrences: skipped })
        })).pipe(
          Effect.catchTag("SqlError", providerMustExist)
        )
      }).pipe(Effect.withSpan("Slots.create", { attributes: { "provider.id": input.provider_id, "actor.id": actorId } }))

    const update = (actorId: number, id: number, changes: UpdateSlotRequest["available_slot"]) =>
      Effect.gen(function*() {
        const at = yield* now
        if (changes.start_time !== undefined && changes.start_time.getTime() <= at.getTime()) {
          return yield* Effect.fail(invalid({ start_time: [slotMessages.past] }))
        }
        if (changes.start_time !== undefined && changes.end_time !== undefined) {
          const errors = timeErrors(changes.start_time, changes.end_time, at, false)
          if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
        }
        const sets: Array<Statement.Fragment> = [sql`updated_at = now()`]
        if (changes.start_time !== undefined) sets.push(sql`start_time = ${changes.start_time}`)
        if (changes.end_time !== undefined) sets.push(sql`end_time = ${changes.end_time}`)
        if (changes.appointment_type !== undefined) sets.push(sql`appointment_type = ${changes.appointment_type}`)
        if (changes.available !== undefined) sets.push(sql`available = ${changes.available}`)
        // An UPDATE of the times checks the constraint after writing, like a plain INSERT: two moves
        // onto one time can wait for each other, and the one PostgreSQL aborts runs again (then 409).
        const updated = yield* retryDeadlocks(sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ id: number }>`UPDATE available_slots SET ${sql.csv(sets)}
            WHERE id = ${id} AND NOT booked RETURNING id`
          if (rows.length > 0) {
            yield* audit.record({ actorId, action: "available_slot.update", targetType: "available_slot", targetId: id })
          }
          return rows.length > 0
        }))).pipe(
          Effect.catchTag("SqlError", (error): Effect.Effect<never, Conflict | ValidationFailed> =>
            isExclusionViolation(error, "available_slots_no_overlap")
              ? Effect.fail(conflict(slotMessages.conflict))
              : isCheckViolation(error, "available_slots_end_after_start")
              ? Effect.fail(invalid({ end_time: [slotMessages.endBeforeStart] }))
              : isCheckViolation(error, "available_slots_at_most_a_day")
              ? Effect.fail(invalid({ end_time: [slotMessages.tooLong] }))
              : Effect.die(error))
        )
        // Nothing changed: an unknown id (404) or a booked slot (409); read only to say which.
        if (!updated) {
          yield* find(id)
          return yield* Effect.fail(conflict(slotMessages.bookedChange))
        }
        return toSlot(yield* find(id))
      }).pipe(Effect.withSpan("Slots.update", { attributes: { "slot.id": id, "actor.id": actorId } }))

    const remove = (actorId: number, id: number) =>
      Effect.gen(function*() {
        const deleted = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ id: number }>`DELETE FROM available_slots WHERE id = ${id} AND NOT booked RETURNING id`
          if (rows.length > 0) {
            yield* audit.record({ actorId, action: "available_slot.delete", targetType: "available_slot", targetId: id })
          }
          return rows.length > 0
        })).pipe(Effect.orDie)
        if (!deleted) {
          yield* find(id)
          return yield* Effect.fail(conflict(slotMessages.bookedDelete))
        }
      }).pipe(Effect.withSpan("Slots.delete", { attributes: { "slot.id": id, "actor.id": actorId } }))

    const providerSlots = (criteria: SlotCriteria & { readonly providerId: number }, request: PageRequest) =>
      list({ providerId: criteria.providerId, startDate: criteria.startDate, endDate: criteria.endDate }, request)

    /**
     * Each slot stands alone: invalid ones are reported, the valid ones go in one INSERT … ON
     * CONFLICT DO NOTHING, which skips a slot overlapping existing availability or an earlier
     * slot of the same batch (the constraint sees the batch's own rows as they are inserted).
     */
    const createInBatch = (actorId: number, input: BatchCreateRequest) =>
      Effect.gen(function*() {
        const at = yield* now
        const errors: Array<BatchError> = []
        const valid: Array<BatchCreateRequest["slots"][number]> = []
        for (const slot of input.slots) {
          if (slot.end_time.getTime() <= slot.start_time.getTime()) {
            errors.push(BatchError.make({ start_time: slot.start_time, end_time: slot.end_time, error: `End time ${slotMessages.endBeforeStart}` }))
          } else if (slot.end_time.getTime() - slot.start_time.getTime() > dayMs) {
            errors.push(BatchError.make({ start_time: slot.start_time, end_time: slot.end_time, error: `End time ${slotMessages.tooLong}` }))
          } else if (slot.start_time.getTime() <= at.getTime()) {
            errors.push(BatchError.make({ start_time: slot.start_time, end_time: slot.end_time, error: `Start time ${slotMessages.past}` }))
          } else {
            valid.push(slot)
          }
        }
        const slotIds: Array<AvailableSlotId> = []
        if (valid.length > 0) {
          const inserted = yield* sql.withTransaction(Effect.gen(function*() {
            const rows = yield* sql<{ id: number; start_time: Date; end_time: Date }>`INSERT INTO available_slots ${sql.insert(valid.map((slot) => ({
              provider_id: input.provider_id,
              start_time: slot.start_time,
              end_time: slot.end_time,
              appointment_type: slot.appointment_type ?? null
            })))} ON CONFLICT DO NOTHING RETURNING id, start_time, end_time`
            // One statement for the whole batch: concurrent creates of these times wait for this commit.
            yield* audit.recordMany(rows.map((row) => ({ actorId, action: "available_slot.create", targetType: "available_slot", targetId: row.id })))
            return rows
          })).pipe(Effect.catchTag("SqlError", providerMustExist))
          // Match returned rows to the request's slots in order; a slot without its row was skipped.
          const unclaimed = new Map<string, Array<number>>()
          for (const row of inserted) {
            const key = `${row.start_time.getTime()}/${row.end_time.getTime()}`
            unclaimed.set(key, [...(unclaimed.get(key) ?? []), row.id])
          }
          for (const slot of valid) {
            const ids = unclaimed.get(`${slot.start_time.getTime()}/${slot.end_time.getTime()}`)
            const id = ids?.shift()
            if (id === undefined) errors.push(BatchError.make({ start_time: slot.start_time, end_time: slot.end_time, error: slotMessages.conflict }))
            else slotIds.push(id as AvailableSlotId)
          }
        }
        return BatchCreateResponse.make({ created_slots: slotIds.length, failed_slots: errors.length, slot_ids: slotIds, errors })
      }).pipe(Effect.withSpan("Slots.createInBatch", { attributes: { "provider.id": input.provider_id, "slots.count": input.slots.length } }))

    const destroyInBatch = (actorId: number, providerId: number, slotIds: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const ids = [...new Set(slotIds)]
        if (ids.length === 0) return BatchDeleteResponse.make({ deleted_slots: 0, failed_slots: 0, errors: [] })
        const deleted = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ id: number }>`DELETE FROM available_slots
            WHERE id IN ${sql.in(ids)} AND provider_id = ${providerId} AND NOT booked RETURNING id`
          for (const row of rows) {
            yield* audit.record({ actorId, action: "available_slot.delete", targetType: "available_slot", targetId: row.id })
          }
          return new Set(rows.map((r) => r.id))
        }))
        const rest = ids.filter((id) => !deleted.has(id))
        const found = rest.length === 0 ? [] : yield* sql<{ id: number; provider_id: number }>`
          SELECT id, provider_id FROM available_slots WHERE id IN ${sql.in(rest)}`
        const byId = new Map(found.map((r) => [r.id, r]))
        const errors = rest.map((id) => {
          const slot = byId.get(id)
          const error = slot === undefined ? slotMessages.notFound : slot.provider_id !== providerId ? slotMessages.otherProvider : slotMessages.bookedDelete
          return BatchDeleteError.make({ slot_id: id as AvailableSlotId, error })
        })
        return BatchDeleteResponse.make({ deleted_slots: deleted.size, failed_slots: errors.length, errors })
      }).pipe(Effect.orDie, Effect.withSpan("Slots.destroyInBatch", { attributes: { "provider.id": providerId, "slots.count": slotIds.length } }))

    /**
     * The daily job (`availability.extend_series`): every series whose slots stop before the
     * horizon gets its occurrences from where it stopped up to 90 days ahead, expanded from its
     * first occurrence (so COUNT and UNTIL keep counting from there). Occurrences that overlap are
     * skipped (`ON CONFLICT DO NOTHING`); ones already in the past are not made. Safe to run twice
     * or on two instances at once: each series is locked and moves its `generated_until` in the
     * same transaction.
     */
    const extendSeries = Effect.gen(function*() {
      const at = yield* now
      const horizon = new Date(at.getTime() + recurrenceHorizonDays * dayMs)
      const due = yield* sql<{ id: number }>`SELECT id FROM slot_series WHERE generated_until < ${horizon} ORDER BY id`
      let created = 0
      for (const { id } of due) {
        created += yield* sql.withTransaction(Effect.gen(function*() {
          const [series] = yield* sql<{
            provider_id: number
            first_start_time: Date
            first_end_time: Date
            appointment_type: AppointmentType | null
            recurrence_pattern: RecurrencePattern
            recurrence_rule: string | null
            generated_until: Date
          }>`SELECT provider_id, first_start_time, first_end_time, appointment_type, recurrence_pattern, recurrence_rule, generated_until
            FROM slot_series WHERE id = ${id} AND generated_until < ${horizon} FOR UPDATE SKIP LOCKED`
          if (series === undefined) return 0
          const parsed = series.recurrence_pattern === "custom" ? parseRule(series.recurrence_rule ?? "") : { rule: ruleOfPattern(series.recurrence_pattern) }
          const occurrences = "error" in parsed ? [] : laterOccurrences(
            { start: series.first_start_time, end: series.first_end_time }, parsed.rule, zone, horizon
          ).filter((o) => o.start.getTime() >= series.generated_until.getTime() && o.start.getTime() > at.getTime())
          const inserted = occurrences.length === 0 ? [] : yield* sql<{ id: number }>`INSERT INTO available_slots ${sql.insert(occurrences.map((o) => ({
            provider_id: series.provider_id,
            start_time: o.start,
            end_time: o.end,
            appointment_type: series.appointment_type,
            recurring: true,
            recurrence_pattern: series.recurrence_pattern,
            recurrence_rule: series.recurrence_rule,
            series_id: id
          })))} ON CONFLICT DO NOTHING RETURNING id`
          yield* sql`UPDATE slot_series SET generated_until = ${horizon}, updated_at = now() WHERE id = ${id}`
          return inserted.length
        }))
      }
      yield* Effect.annotateCurrentSpan({ "slot_series.count": due.length, "slots.created": created })
      return created
    }).pipe(Effect.orDie, Effect.withSpan("Slots.extendSeries"))

    return { list, search, show, create, update, remove, providerSlots, createInBatch, destroyInBatch, extendSeries } as const
  })
}) {}
