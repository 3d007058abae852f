/**
 * The only SQL on `ecm_events` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects.
 * The EventGenerator writes events (`upsert`, `remove`) in the transaction that writes their
 * activity; `Events` reads them. The counts statement is set-based and stays one statement: it
 * cuts the range at the member's engagement-status changes and groups each piece's events in SQL,
 * so it also reads `ecm_status_histories`. The patient's name is read here until patients have a
 * repository of their own.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ActivityStatus, ActivityType, EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { EngagementStatus } from "../../Domain/Ecm/Engagement.js"
import { orDefect, SqlSchema } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)

/** An event as stored (the list's rows, without the patient's name). */
export const EventRow = Schema.Struct({
  id: Schema.Int,
  event_type: EventType,
  occurred_at: Schema.DateFromSelf,
  subject: NullText,
  body: NullText,
  duration: Schema.NullOr(Schema.Int),
  status: EventStatus,
  patient_id: Schema.Int,
  activity_id: Schema.Int,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type EventRow = typeof EventRow.Type

/** An event with its activity (prefixed `a_` where the names clash) and the activity's people. */
export const EventDetailRow = Schema.Struct({
  ...EventRow.fields,
  a_activity_type: ActivityType,
  a_status: ActivityStatus,
  performed_by_id: Schema.NullOr(Schema.Int),
  performed_by_name: NullText,
  assigned_to_id: Schema.Int,
  assigned_to_name: Schema.String
})
export type EventDetailRow = typeof EventDetailRow.Type

/** One group of the counts statement. */
export const EventGroup = Schema.Struct({
  event_type: EventType,
  status: EventStatus,
  duration: Schema.NullOr(Schema.Int),
  /** The member's engagement status on the events' day; null before the first entry. */
  engagement: Schema.NullOr(EngagementStatus),
  count: Schema.Int
})
export type EventGroup = typeof EventGroup.Type

/** A list's filters: `from` inclusive, `until` exclusive. */
const EventFilter = Schema.Struct({
  patientId: Schema.Int,
  eventType: Schema.optional(EventType),
  from: Schema.optional(Schema.DateFromSelf),
  until: Schema.optional(Schema.DateFromSelf)
})
export type EventFilter = typeof EventFilter.Type

const PageOfEvents = Schema.Struct({ filter: EventFilter, limit: Schema.Int, offset: Schema.Int })

/** The event an activity produces (src/Domain/Ecm/Activity.ts `eventOf`), for the activity's row. */
const EventOfActivity = Schema.Struct({
  patientId: Schema.Int,
  activityId: Schema.Int,
  event_type: EventType,
  status: EventStatus,
  occurred_at: Schema.DateFromSelf,
  subject: NullText,
  body: NullText,
  duration: Schema.NullOr(Schema.Int),
  at: Schema.DateFromSelf
})
export type EventOfActivity = typeof EventOfActivity.Type

const Range = Schema.Struct({ patientId: Schema.Int, from: Schema.DateFromSelf, until: Schema.DateFromSelf })

export class EventsRepo extends Effect.Service<EventsRepo>()("app/EcmEventsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const whereOf = (filter: EventFilter): Statement.Fragment =>
      sql.and([
        sql`e.patient_id = ${filter.patientId}`,
        ...(filter.eventType === undefined ? [] : [sql`e.event_type = ${filter.eventType}`]),
        ...(filter.from === undefined ? [] : [sql`e.occurred_at >= ${filter.from}`]),
        ...(filter.until === undefined ? [] : [sql`e.occurred_at < ${filter.until}`])
      ])

    const patientName = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ name: Schema.String }),
      execute: (patientId) => sql`SELECT first_name || ' ' || last_name AS name FROM patients WHERE id = ${patientId}`
    })

    // Not the list kit: the page, the count and the patient's name run side by side on three
    // connections (Events.list), the shape bench/ecm-events.ts measures.
    const page = SqlSchema.findAll({
      Request: PageOfEvents,
      Result: EventRow,
      execute: ({ filter, limit, offset }) =>
        sql`SELECT e.id, e.event_type, e.occurred_at, e.subject, e.body, e.duration,
            e.status, e.patient_id, e.activity_id, e.created_at, e.updated_at
          FROM ecm_events e WHERE ${whereOf(filter)} ORDER BY e.occurred_at DESC, e.id DESC LIMIT ${limit} OFFSET ${offset}`
    })

    const count = SqlSchema.single({
      Request: EventFilter,
      Result: Schema.Struct({ count: Schema.Int }),
      execute: (filter) => sql`SELECT count(*)::int AS count FROM ecm_events e WHERE ${whereOf(filter)}`
    })

    const detail = SqlSchema.findOne({
      Request: Schema.Struct({ patientId: Schema.Int, id: Schema.Int }),
      Result: EventDetailRow,
      execute: ({ id, patientId }) =>
        sql`SELECT e.id, e.event_type, e.occurred_at, e.subject, e.body, e.duration, e.status, e.patient_id, e.activity_id,
            e.created_at, e.updated_at, a.activity_type AS a_activity_type, a.status AS a_status,
            a.performed_by_id, CASE WHEN pb.id IS NULL THEN NULL ELSE pb.first_name || ' ' || pb.last_name END AS performed_by_name,
            a.assigned_to_id, asg.first_name || ' ' || asg.last_name AS assigned_to_name
          FROM ecm_events e
          JOIN ecm_activities a ON a.id = e.activity_id
          LEFT JOIN users pb ON pb.id = a.performed_by_id
          JOIN users asg ON asg.id = a.assigned_to_id
          WHERE e.id = ${id} AND e.patient_id = ${patientId}`
    })

    /**
     * The range cut at the patient's engagement-status changes into pieces, each with the status in
     * force (an entry holds from its effective day, 00:00 UTC, until the next entry's; of entries on
     * one day the latest id wins; before the first entry there is none), then each piece's events
     * grouped by an index-only range scan of ecm_events_patient_idx: no per-event join, whatever
     * the number of events or entries.
     */
    const groups = SqlSchema.findAll({
      Request: Range,
      Result: EventGroup,
      execute: ({ from, patientId, until }) =>
        sql`WITH spans AS (
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
            AND e.occurred_at >= greatest(p.from_at, ${from}) AND e.occurred_at < least(p.to_at, ${until})
          GROUP BY 1, 2, 3
        ) g
        GROUP BY 1, 2, 3, 4`
    })

    // Changes only when something the event shows changed, so its `updated_at` says when it last did.
    const upsert = SqlSchema.void({
      Request: EventOfActivity,
      execute: (e) =>
        sql`
          INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, subject, body, duration, created_at, updated_at)
          VALUES (${e.patientId}, ${e.activityId}, ${e.event_type}, ${e.status}, ${e.occurred_at},
            ${e.subject}, ${e.body}, ${e.duration}, ${e.at}, ${e.at})
          ON CONFLICT (activity_id) DO UPDATE SET
            patient_id = EXCLUDED.patient_id, event_type = EXCLUDED.event_type, status = EXCLUDED.status,
            occurred_at = EXCLUDED.occurred_at, subject = EXCLUDED.subject, body = EXCLUDED.body,
            duration = EXCLUDED.duration, updated_at = EXCLUDED.updated_at
          WHERE (ecm_events.patient_id, ecm_events.event_type, ecm_events.status, ecm_events.occurred_at,
            ecm_events.subject, ecm_events.body, ecm_events.duration)
            IS DISTINCT FROM (EXCLUDED.patient_id, EXCLUDED.event_type, EXCLUDED.status, EXCLUDED.occurred_at,
            EXCLUDED.subject, EXCLUDED.body, EXCLUDED.duration)`
    })

    const removeOf = SqlSchema.void({
      Request: Schema.Int,
      execute: (activityId) => sql`DELETE FROM ecm_events WHERE activity_id = ${activityId}`
    })

    return {
      /** The patient's name, if the patient exists. */
      patientName: (patientId: number) => Effect.map(orDefect(patientName(patientId)), Option.map((row) => row.name)),
      /** A page of the patient's events, newest first. */
      page: (filter: EventFilter, limit: number, offset: number) => orDefect(page({ filter, limit, offset })),
      /** How many events match `filter`. */
      count: (filter: EventFilter) => Effect.map(orDefect(count(filter)), (row) => row.count),
      /** The patient's event with its activity. */
      detail: (patientId: number, id: number) => orDefect(detail({ patientId, id })),
      /** The patient's events in [`from`, `until`) grouped by what the PRTF rule reads. */
      groups: (patientId: number, from: Date, until: Date) => orDefect(groups({ patientId, from, until })),
      /** Writes the activity's event, or brings it in step (its `updated_at` moves only when it changes). */
      upsert: (event: EventOfActivity) => orDefect(upsert(event)),
      /** Removes the activity's event, if it has one. */
      removeOf: (activityId: number) => orDefect(removeOf(activityId))
    } as const
  })
}) {}
