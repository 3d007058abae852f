/**
 * ECM events (ECM §4.2), read-only: the list, the detail and the counts. Counts group the range's
 * events in SQL by everything the rule reads (type, status, duration, and the member's engagement
 * status on the event's day), then classify each group with `prtfCategoryOf` (src/Domain/Ecm/Prtf.ts):
 * the rule has one implementation, in TypeScript, and the database still does the set-based work.
 */
import { SqlClient, type Statement } from "@effect/sql"
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
import { type EventStatus, type EventType, eventTypes } from "../../Domain/Ecm/Activity.js"
import type { EngagementStatus } from "../../Domain/Ecm/Engagement.js"
import { prtfCategories, prtfCategoryOf } from "../../Domain/Ecm/Prtf.js"

export interface EventCriteria {
  readonly eventType?: EventType | undefined
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
}

/** One group of the counts query. */
export interface EventGroup {
  readonly event_type: EventType
  readonly status: EventStatus
  readonly duration: number | null
  /** The member's engagement status on the events' day; null before the first entry. */
  readonly engagement: EngagementStatus | null
  readonly count: number
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
    const sql = yield* SqlClient.SqlClient

    /** The patient's name, if the patient exists; never fails, so it can run beside other queries. */
    const patientName = (patientId: number) =>
      Effect.map(
        sql<{ name: string }>`SELECT first_name || ' ' || last_name AS name FROM patients WHERE id = ${patientId}`.pipe(Effect.orDie),
        ([row]) => Option.fromNullable(row?.name)
      )
    const found = (name: Option.Option<string>) =>
      Option.isSome(name) ? Effect.succeed(name.value) : Effect.fail(ecmNotFound("Patient"))
    const requirePatient = (patientId: number) => Effect.flatMap(patientName(patientId), found)

    const rangeClauses = (criteria: EventCriteria): Array<Statement.Fragment> => [
      ...(criteria.startDate === undefined ? [] : [sql`e.occurred_at >= ${dayStart(criteria.startDate)}`]),
      ...(criteria.endDate === undefined ? [] : [sql`e.occurred_at < ${dayAfter(criteria.endDate)}`])
    ]

    /** The page, its total and the patient's name at once (three connections): the count dominates a busy member's page. */
    const list = (patientId: number, criteria: EventCriteria, page: PageRequest) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`e.patient_id = ${patientId}`,
          ...(criteria.eventType === undefined ? [] : [sql`e.event_type = ${criteria.eventType}`]),
          ...rangeClauses(criteria)
        ])
        // Queries beside each other only when none can fail: a failure would interrupt the others,
        // and @effect/sql-pg cancels an interrupted query with pg_cancel_backend, which can land on
        // the next query of that connection.
        const [name, rows, counted] = yield* Effect.all([
          patientName(patientId),
          sql<Omit<Event, "patient_name">>`SELECT e.id, e.event_type, e.occurred_at, e.subject, e.body, e.duration,
              e.status, e.patient_id, e.activity_id, e.created_at, e.updated_at
            FROM ecm_events e WHERE ${where} ORDER BY e.occurred_at DESC, e.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`.pipe(Effect.orDie),
          sql<{ count: number }>`SELECT count(*)::int AS count FROM ecm_events e WHERE ${where}`.pipe(Effect.orDie)
        ], { concurrency: "unbounded" })
        const patient = yield* found(name)
        const totalCount = counted[0]?.count ?? 0
        yield* Effect.annotateCurrentSpan({ "events.count": rows.length, "events.total_count": totalCount })
        return {
          events: rows.map((row) => Event.make({ ...row, patient_name: patient }, true)),
          pagination: paginationOf(page, totalCount)
        }
      }).pipe(Effect.withSpan("Events.list", { attributes: { "patient.id": patientId } }))

    const show = (patientId: number, id: number) =>
      Effect.gen(function*() {
        const patient = yield* requirePatient(patientId)
        const [row] = yield* sql<Omit<Event, "patient_name"> & {
          a_activity_type: EventActivity["activity_type"]
          a_status: EventActivity["status"]
          performed_by_id: number | null
          performed_by_name: string | null
          assigned_to_id: number
          assigned_to_name: string
        }>`SELECT e.id, e.event_type, e.occurred_at, e.subject, e.body, e.duration, e.status, e.patient_id, e.activity_id,
            e.created_at, e.updated_at, a.activity_type AS a_activity_type, a.status AS a_status,
            a.performed_by_id, CASE WHEN pb.id IS NULL THEN NULL ELSE pb.first_name || ' ' || pb.last_name END AS performed_by_name,
            a.assigned_to_id, asg.first_name || ' ' || asg.last_name AS assigned_to_name
          FROM ecm_events e
          JOIN ecm_activities a ON a.id = e.activity_id
          LEFT JOIN users pb ON pb.id = a.performed_by_id
          JOIN users asg ON asg.id = a.assigned_to_id
          WHERE e.id = ${id} AND e.patient_id = ${patientId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(ecmNotFound("Event"))
        const { a_activity_type, a_status, assigned_to_id, assigned_to_name, performed_by_id, performed_by_name, ...event } = row
        return EventDetail.make({
          ...event,
          patient_name: patient,
          activity: EventActivity.make({
            id: event.activity_id, activity_type: a_activity_type, status: a_status,
            performed_by_id, performed_by_name, assigned_to_id, assigned_to_name
          }, true)
        }, true)
      }).pipe(Effect.withSpan("Events.show", { attributes: { "patient.id": patientId, "event.id": id } }))

    /**
     * The range cut at the patient's engagement-status changes into pieces, each with the status in
     * force (an entry holds from its effective day, 00:00 UTC, until the next entry's; of entries on
     * one day the latest id wins; before the first entry there is none), then each piece's events
     * grouped by an index-only range scan of ecm_events_patient_idx: no per-event join, whatever
     * the number of events or entries.
     */
    const groupsOf = (patientId: number, startDate: string, endDate: string) =>
      sql<EventGroup>`WITH spans AS (
          SELECT status AS engagement,
            effective_date::timestamp AT TIME ZONE 'UTC' AS from_at,
            (lead(effective_date) OVER (ORDER BY effective_date, id))::timestamp AT TIME ZONE 'UTC' AS to_at
          FROM ecm_status_histories WHERE patient_id = ${patientId}
        ), pieces AS (
          SELECT NULL::text AS engagement, '-infinity'::timestamptz AS from_at, coalesce((SELECT min(from_at) FROM spans), 'infinity') AS to_at
          UNION ALL
          SELECT engagement, from_at, coalesce(to_at, 'infinity') FROM spans WHERE to_at IS NULL OR to_at > from_at
        )
        SELECT g.event_type, g.status, g.duration, p.engagement, sum(g.count)::int AS count
        FROM pieces p CROSS JOIN LATERAL (
          SELECT e.event_type, e.status, e.duration, count(*) AS count FROM ecm_events e
          WHERE e.patient_id = ${patientId}
            AND e.occurred_at >= greatest(p.from_at, ${dayStart(startDate)}) AND e.occurred_at < least(p.to_at, ${dayAfter(endDate)})
          GROUP BY 1, 2, 3
        ) g
        GROUP BY 1, 2, 3, 4`.pipe(Effect.orDie)

    const counts = (patientId: number, startDate: string | undefined, endDate: string | undefined) =>
      Effect.gen(function*() {
        if (startDate === undefined || endDate === undefined || endDate < startDate) {
          // An unknown patient is a 404 before anything else is looked at.
          yield* requirePatient(patientId)
          return yield* Effect.fail(ecmInvalid([
            startDate === undefined || endDate === undefined ? "Start date and end date are required" : "End date must be on or after start date"
          ]))
        }
        const [name, groups] = yield* Effect.all([patientName(patientId), groupsOf(patientId, startDate, endDate)], { concurrency: "unbounded" })
        yield* found(name)
        return EventCounts.make({ patient_id: patientId, start_date: startDate, end_date: endDate, counts: countsOf(groups) }, true)
      }).pipe(Effect.withSpan("Events.counts", { attributes: { "patient.id": patientId } }))

    return { list, show, counts } as const
  })
}) {}
