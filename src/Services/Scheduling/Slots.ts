/**
 * Provider availability (general §2.5, §4.5): the rules of a slot's times and recurrence, and the
 * daily extension of recurring series. The statements, and how overlaps and booked slots are
 * settled by PostgreSQL rather than by looking first, are `SlotsRepo`'s.
 */
import { Effect } from "effect"
import {
  type BatchCreateRequest, BatchCreateResponse, BatchDeleteError, BatchDeleteResponse, BatchError, SkippedOccurrence, type CreateSlotRequest, slotMessages, SlotCreated, SlotList,
  type UpdateSlotRequest
} from "../../Api/Scheduling/Availability.js"
import { conflict, invalid, type FieldMessages, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import type { AvailableSlotId } from "../../Domain/Ids.js"
import { laterOccurrences, parseRule, recurrenceHorizonDays, type Rule, ruleOfPattern } from "../../Domain/Scheduling/Recurrence.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { type NewSlot, type SlotCriteria, SlotsRepo, type SlotSearch, toSlot } from "./SlotsRepo.js"
import { dayMs } from "../../Domain/Time.js"

export type { SlotCriteria, SlotSearch } from "./SlotsRepo.js"
export { maxSearchResults } from "./SlotsRepo.js"

export class Slots extends Effect.Service<Slots>()("app/Slots", {
  dependencies: [SlotsRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* SlotsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const config = yield* AppConfig
    const zone = config.clinicTimeZone

    const find = (id: number) =>
      Effect.flatMap(repo.findById(id), (row) => row._tag === "None" ? Effect.fail(notFound("Slot")) : Effect.succeed(row.value))

    const list = Effect.fn("Slots.list")(function*(criteria: SlotCriteria, request: PageRequest) {
      const { pagination, rows } = yield* repo.list(criteria, zone, request)
      return SlotList.make({ available_slots: rows.map(toSlot), pagination })
    })

    const search = Effect.fn("Slots.search")(function*(criteria: SlotSearch) {
      const rows = yield* repo.searchFree(criteria, yield* now, zone)
      yield* Effect.annotateCurrentSpan({ "slots.count": rows.length })
      return { available_slots: rows.map(toSlot) }
    })

    const show = Effect.fn("Slots.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "slot.id": id })
      return toSlot(yield* find(id))
    })

    /** The 422 of a slot's times, if any: end after start, start in the future. */
    const timeErrors = (start: Date, end: Date, at: Date, checkFuture: boolean): FieldMessages => {
      const errors: Record<string, Array<string>> = {}
      if (end.getTime() <= start.getTime()) errors.end_time = [slotMessages.endBeforeStart]
      else if (end.getTime() - start.getTime() > dayMs) errors.end_time = [slotMessages.tooLong]
      if (checkFuture && start.getTime() <= at.getTime()) errors.start_time = [slotMessages.past]
      return errors
    }

    const create = Effect.fn("Slots.create")(function*(actorId: number, input: CreateSlotRequest["available_slot"]) {
      yield* Effect.annotateCurrentSpan({ "provider.id": input.provider_id, "actor.id": actorId })
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
      return yield* transaction(Effect.gen(function*() {
        const horizon = new Date(at.getTime() + recurrenceHorizonDays * dayMs)
        // The series first, so that the first slot is written once, with its series_id.
        const seriesId = rule === undefined || pattern === null ? null : yield* repo.insertSeries({
          provider_id: input.provider_id,
          first_start_time: input.start_time,
          first_end_time: input.end_time,
          appointment_type: type,
          recurrence_pattern: pattern,
          recurrence_rule: ruleText,
          generated_until: horizon
        })
        const slotAt = (start: Date, end: Date): NewSlot => ({
          provider_id: input.provider_id,
          start_time: start,
          end_time: end,
          appointment_type: type,
          recurring,
          recurrence_pattern: pattern,
          recurrence_rule: ruleText,
          series_id: seriesId
        })
        // No row back: the slot overlaps availability (the table's only other constraint, the
        // generated primary key, cannot conflict). Failing rolls the series back with it.
        const [first] = yield* repo.insert([slotAt(input.start_time, input.end_time)])
        if (first === undefined) return yield* Effect.fail(conflict(slotMessages.conflict))
        const skipped: Array<SkippedOccurrence> = []
        let created = 0
        if (rule !== undefined) {
          const occurrences = laterOccurrences({ start: input.start_time, end: input.end_time }, rule, zone, horizon)
          const inserted = yield* repo.insert(occurrences.map((o) => slotAt(o.start, o.end)))
          const made = new Set(inserted.map((r) => r.start_time.getTime()))
          created = inserted.length
          for (const o of occurrences) {
            if (!made.has(o.start.getTime())) skipped.push(SkippedOccurrence.make({ start_time: o.start, end_time: o.end, error: slotMessages.conflict }))
          }
        }
        yield* audit.record({ actorId, action: "available_slot.create", targetType: "available_slot", targetId: first.id })
        const row = yield* find(first.id).pipe(Effect.catchTag("NotFound", Effect.die))
        return SlotCreated.make({ available_slot: toSlot(row), occurrences_created: created, skipped_occurrences: skipped })
      }))
    })

    const update = Effect.fn("Slots.update")(function*(actorId: number, id: number, changes: UpdateSlotRequest["available_slot"]) {
      yield* Effect.annotateCurrentSpan({ "slot.id": id, "actor.id": actorId })
      const at = yield* now
      if (changes.start_time !== undefined && changes.start_time.getTime() <= at.getTime()) {
        return yield* Effect.fail(invalid({ start_time: [slotMessages.past] }))
      }
      if (changes.start_time !== undefined && changes.end_time !== undefined) {
        const errors = timeErrors(changes.start_time, changes.end_time, at, false)
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      }
      // An UPDATE of the times checks the constraint after writing, like a plain INSERT: two moves
      // onto one time can wait for each other, and the one PostgreSQL aborts runs again (then 409).
      const updated = yield* transaction(Effect.gen(function*() {
        const done = yield* repo.update(id, changes)
        if (done) yield* audit.record({ actorId, action: "available_slot.update", targetType: "available_slot", targetId: id })
        return done
      })).pipe(
        Effect.retry({ while: (error) => error._tag === "SlotsDeadlocked", times: 3 }),
        Effect.catchTag("SlotsDeadlocked", Effect.die)
      )
      // Nothing changed: an unknown id (404) or a booked slot (409); read only to say which.
      if (!updated) {
        yield* find(id)
        return yield* Effect.fail(conflict(slotMessages.bookedChange))
      }
      return toSlot(yield* find(id))
    })

    const remove = Effect.fn("Slots.delete")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "slot.id": id, "actor.id": actorId })
      const deleted = yield* transaction(Effect.gen(function*() {
        const done = yield* repo.delete(id)
        if (done) yield* audit.record({ actorId, action: "available_slot.delete", targetType: "available_slot", targetId: id })
        return done
      }))
      if (!deleted) {
        yield* find(id)
        return yield* Effect.fail(conflict(slotMessages.bookedDelete))
      }
    })

    const providerSlots = (criteria: SlotCriteria & { readonly providerId: number }, request: PageRequest) =>
      list({ providerId: criteria.providerId, startDate: criteria.startDate, endDate: criteria.endDate }, request)

    /**
     * Each slot stands alone: invalid ones are reported, the valid ones go in one INSERT … ON
     * CONFLICT DO NOTHING, which skips a slot overlapping existing availability or an earlier
     * slot of the same batch (the constraint sees the batch's own rows as they are inserted).
     */
    const createInBatch = Effect.fn("Slots.createInBatch")(function*(actorId: number, input: BatchCreateRequest) {
      yield* Effect.annotateCurrentSpan({ "provider.id": input.provider_id, "slots.count": input.slots.length })
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
        const inserted = yield* transaction(Effect.gen(function*() {
          const rows = yield* repo.insert(valid.map((slot) => ({
            provider_id: input.provider_id,
            start_time: slot.start_time,
            end_time: slot.end_time,
            appointment_type: slot.appointment_type ?? null,
            recurring: false,
            recurrence_pattern: null,
            recurrence_rule: null,
            series_id: null
          })))
          // One statement for the whole batch: concurrent creates of these times wait for this commit.
          yield* audit.recordMany(rows.map((row) => ({ actorId, action: "available_slot.create", targetType: "available_slot", targetId: row.id })))
          return rows
        }))
        // Match returned rows to the request's slots in order; a slot without its row was skipped.
        const unclaimed = new Map<string, Array<AvailableSlotId>>()
        for (const row of inserted) {
          const key = `${row.start_time.getTime()}/${row.end_time.getTime()}`
          unclaimed.set(key, [...(unclaimed.get(key) ?? []), row.id])
        }
        for (const slot of valid) {
          const ids = unclaimed.get(`${slot.start_time.getTime()}/${slot.end_time.getTime()}`)
          const id = ids?.shift()
          if (id === undefined) errors.push(BatchError.make({ start_time: slot.start_time, end_time: slot.end_time, error: slotMessages.conflict }))
          else slotIds.push(id)
        }
      }
      return BatchCreateResponse.make({ created_slots: slotIds.length, failed_slots: errors.length, slot_ids: slotIds, errors })
    })

    const destroyInBatch = Effect.fn("Slots.destroyInBatch")(function*(actorId: number, providerId: number, slotIds: ReadonlyArray<number>) {
      yield* Effect.annotateCurrentSpan({ "provider.id": providerId, "slots.count": slotIds.length })
      const ids = [...new Set(slotIds)]
      if (ids.length === 0) return BatchDeleteResponse.make({ deleted_slots: 0, failed_slots: 0, errors: [] })
      const deleted = yield* transaction(Effect.gen(function*() {
        const removed = yield* repo.deleteOfProvider(ids, providerId)
        for (const id of removed) {
          yield* audit.record({ actorId, action: "available_slot.delete", targetType: "available_slot", targetId: id })
        }
        return new Set<number>(removed)
      }))
      const rest = ids.filter((id) => !deleted.has(id))
      const byId = new Map((yield* repo.ownersOf(rest)).map((r) => [r.id as number, r]))
      const errors = rest.map((id) => {
        const slot = byId.get(id)
        const error = slot === undefined ? slotMessages.notFound : slot.provider_id !== providerId ? slotMessages.otherProvider : slotMessages.bookedDelete
        return BatchDeleteError.make({ slot_id: id as AvailableSlotId, error })
      })
      return BatchDeleteResponse.make({ deleted_slots: deleted.size, failed_slots: errors.length, errors })
    })

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
      const due = yield* repo.dueSeries(horizon)
      let created = 0
      for (const id of due) {
        created += yield* transaction(Effect.gen(function*() {
          const locked = yield* repo.lockDueSeries(id, horizon)
          if (locked._tag === "None") return 0
          const series = locked.value
          const parsed = series.recurrence_pattern === "custom" ? parseRule(series.recurrence_rule ?? "") : { rule: ruleOfPattern(series.recurrence_pattern) }
          const occurrences = "error" in parsed ? [] : laterOccurrences(
            { start: series.first_start_time, end: series.first_end_time }, parsed.rule, zone, horizon
          ).filter((o) => o.start.getTime() >= series.generated_until.getTime() && o.start.getTime() > at.getTime())
          const inserted = yield* repo.insert(occurrences.map((o) => ({
            provider_id: series.provider_id,
            start_time: o.start,
            end_time: o.end,
            appointment_type: series.appointment_type,
            recurring: true,
            recurrence_pattern: series.recurrence_pattern,
            recurrence_rule: series.recurrence_rule,
            series_id: id
          })))
          yield* repo.markGenerated(id, horizon)
          return inserted.length
        }))
      }
      yield* Effect.annotateCurrentSpan({ "slot_series.count": due.length, "slots.created": created })
      return created
    }).pipe(
      // The series' provider exists (its foreign key holds): a refused insert here is a bug.
      Effect.catchTag("ValidationFailed", Effect.die),
      Effect.withSpan("Slots.extendSeries")
    )

    return { list, search, show, create, update, remove, providerSlots, createInBatch, destroyInBatch, extendSeries } as const
  })
}) {}
