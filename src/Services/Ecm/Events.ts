/**
 * ECM events (ECM §4.2), read-only: the list, the detail and the counts. Counts group the range's
 * events in SQL (`EventsRepo.groups`) by everything the rule reads (type, status, duration, and the member's engagement
 * status on the event's day), then classify each group with `prtfCategoryOf` (src/Domain/Ecm/Prtf.ts):
 * the rule has one implementation, in TypeScript, and the database still does the set-based work.
 */
import { Effect, Option } from "effect"
import {
  Event,
  EventActivity,
  EventCounts,
  EventCountsByType,
  EventCountsSummary,
  EventDetail,
  PrtfCategoryCounts
} from "../../Api/Ecm/Events.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { type EventType, eventTypes } from "../../Domain/Ecm/Activity.js"
import { prtfCategories, prtfCategoryOf } from "../../Domain/Ecm/Prtf.js"
import { type EventGroup, EventsRepo } from "./EventsRepo.js"

export type { EventGroup } from "./EventsRepo.js"

export interface EventCriteria {
  readonly eventType?: EventType | undefined
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
}

/** The counts response's `counts` from grouped events: every key present, zeros included. */
export const countsOf = (groups: ReadonlyArray<EventGroup>) => {
  const byType = Object.fromEntries(eventTypes.map((t) => [t, 0])) as Record<EventType, number>
  const categories = Object.fromEntries(prtfCategories.map((c) => [c, 0])) as Record<(typeof prtfCategories)[number], number>
  let total = 0
  for (const group of groups) {
    total += group.count
    byType[group.event_type] += group.count
    const category = prtfCategoryOf(group, group.engagement)
    if (category !== null) categories[category] += group.count
  }
  return EventCountsSummary.make({
    total,
    by_type: EventCountsByType.make(byType, true),
    prtf_categories: PrtfCategoryCounts.make(categories, true)
  }, true)
}

/** The day after a `YYYY-MM-DD` day: ranges are [start 00:00 UTC, end + 1 day 00:00 UTC). */
const dayAfter = (day: string) => {
  const d = new Date(`${day}T00:00:00.000Z`)
  d.setUTCDate(d.getUTCDate() + 1)
  return d
}
const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`)

export class Events extends Effect.Service<Events>()("app/EcmEvents", {
  effect: Effect.gen(function*() {
    const repo = yield* EventsRepo

    const found = (name: Option.Option<string>) =>
      Option.isSome(name) ? Effect.succeed(name.value) : Effect.fail(ecmNotFound("Patient"))
    const requirePatient = (patientId: number) => Effect.flatMap(repo.patientName(patientId), found)

    /** The page, its total and the patient's name at once (three connections): the count dominates a busy member's page. */
    const list = Effect.fn("Events.list")(function*(patientId: number, criteria: EventCriteria, page: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const filter = {
        patientId,
        eventType: criteria.eventType,
        from: criteria.startDate === undefined ? undefined : dayStart(criteria.startDate),
        until: criteria.endDate === undefined ? undefined : dayAfter(criteria.endDate)
      }
      // Queries beside each other only when none can fail: a failure would interrupt the others,
      // and @effect/sql-pg cancels an interrupted query with pg_cancel_backend, which can land on
      // the next query of that connection.
      const [name, rows, totalCount] = yield* Effect.all([
        repo.patientName(patientId),
        repo.page(filter, page.perPage, page.offset),
        repo.count(filter)
      ], { concurrency: "unbounded" })
      const patient = yield* found(name)
      yield* Effect.annotateCurrentSpan({ "events.count": rows.length, "events.total_count": totalCount })
      return {
        events: rows.map((row) => Event.make({ ...row, patient_name: patient }, true)),
        pagination: paginationOf(page, totalCount)
      }
    })

    const show = Effect.fn("Events.show")(function*(patientId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "event.id": id })
      const patient = yield* requirePatient(patientId)
      const found = yield* repo.detail(patientId, id)
      if (Option.isNone(found)) return yield* Effect.fail(ecmNotFound("Event"))
      const { a_activity_type, a_status, assigned_to_id, assigned_to_name, performed_by_id, performed_by_name, ...event } = found.value
      return EventDetail.make({
        ...event,
        patient_name: patient,
        activity: EventActivity.make({
          id: event.activity_id, activity_type: a_activity_type, status: a_status,
          performed_by_id, performed_by_name, assigned_to_id, assigned_to_name
        }, true)
      }, true)
    })

    const counts = Effect.fn("Events.counts")(function*(patientId: number, startDate: string | undefined, endDate: string | undefined) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      if (startDate === undefined || endDate === undefined || endDate < startDate) {
        // An unknown patient is a 404 before anything else is looked at.
        yield* requirePatient(patientId)
        return yield* Effect.fail(ecmInvalid([
          startDate === undefined || endDate === undefined ? "Start date and end date are required" : "End date must be on or after start date"
        ]))
      }
      const [name, groups] = yield* Effect.all([
        repo.patientName(patientId),
        repo.groups(patientId, dayStart(startDate), dayAfter(endDate))
      ], { concurrency: "unbounded" })
      yield* found(name)
      return EventCounts.make({ patient_id: patientId, start_date: startDate, end_date: endDate, counts: countsOf(groups) }, true)
    })

    return { list, show, counts } as const
  }),
  dependencies: [EventsRepo.Default]
}) {}
