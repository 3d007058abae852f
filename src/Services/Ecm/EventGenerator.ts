/**
 * The only code that writes `ecm_events`. An effect over `@effect/sql`: given the activity as it
 * now stands, it makes the event what `eventOf` (src/Domain/Ecm/Activity.ts) says — inserted,
 * updated in step, or removed (a note, or the activity's deletion). Callers run it inside the
 * transaction that writes the activity, so an activity never exists without its event, nor the
 * reverse.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { type ActivityForEvent, eventOf } from "../../Domain/Ecm/Activity.js"
// Issue 16: outreach moves a new member to outreach_in_progress in the same transaction.
import { advanceOnOutreach } from "./EngagementStatuses.js"

export interface ActivityRow extends ActivityForEvent {
  readonly id: number
  readonly patient_id: number
  /** Issue 16: who made the outreach, recorded on an automatic engagement status move. */
  readonly performed_by_id?: number | null
}

export class EventGenerator extends Effect.Service<EventGenerator>()("app/EcmEventGenerator", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Brings the activity's event in step with it (its `updated_at` moves only when it changes). */
    const sync = (activity: ActivityRow) =>
      Effect.gen(function*() {
        const event = eventOf(activity)
        if (event === null) {
          yield* sql`DELETE FROM ecm_events WHERE activity_id = ${activity.id}`
          return
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`
          INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, subject, body, duration, created_at, updated_at)
          VALUES (${activity.patient_id}, ${activity.id}, ${event.event_type}, ${event.status}, ${event.occurred_at},
            ${event.subject}, ${event.body}, ${event.duration}, ${now}, ${now})
          ON CONFLICT (activity_id) DO UPDATE SET
            patient_id = EXCLUDED.patient_id, event_type = EXCLUDED.event_type, status = EXCLUDED.status,
            occurred_at = EXCLUDED.occurred_at, subject = EXCLUDED.subject, body = EXCLUDED.body,
            duration = EXCLUDED.duration, updated_at = EXCLUDED.updated_at
          WHERE (ecm_events.patient_id, ecm_events.event_type, ecm_events.status, ecm_events.occurred_at,
            ecm_events.subject, ecm_events.body, ecm_events.duration)
            IS DISTINCT FROM (EXCLUDED.patient_id, EXCLUDED.event_type, EXCLUDED.status, EXCLUDED.occurred_at,
            EXCLUDED.subject, EXCLUDED.body, EXCLUDED.duration)`
        // Issue 16 (docs/prtf.md "Automatic moves"): an outreach attempt may start outreach.
        yield* advanceOnOutreach(activity.patient_id, activity.id, activity.performed_by_id ?? null, event)
      }).pipe(Effect.orDie, Effect.withSpan("EventGenerator.sync", { attributes: { "activity.id": activity.id } }))

    /** Before the activity is deleted (the foreign key would cascade too; this says it). */
    const remove = (activityId: number) =>
      sql`DELETE FROM ecm_events WHERE activity_id = ${activityId}`.pipe(
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("EventGenerator.remove", { attributes: { "activity.id": activityId } })
      )

    return { sync, remove } as const
  })
}) {}
