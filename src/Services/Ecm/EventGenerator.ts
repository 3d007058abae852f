/**
 * The only code that writes `ecm_events` (through `EventsRepo`). Given the activity as it now
 * stands, it makes the event what `eventOf` (src/Domain/Ecm/Activity.ts) says — inserted,
 * updated in step, or removed (a note, or the activity's deletion). Callers run it inside the
 * transaction that writes the activity, so an activity never exists without its event, nor the
 * reverse.
 */
import { Effect } from "effect"
import { type ActivityForEvent, eventOf } from "../../Domain/Ecm/Activity.js"
import { now } from "../Time.js"
// An outreach attempt moves a new member to outreach_in_progress in the same transaction.
import { advanceOnOutreach } from "./EngagementStatuses.js"
import { EventsRepo } from "./EventsRepo.js"
import { StatusHistoriesRepo } from "./StatusHistoriesRepo.js"

export interface ActivityRow extends ActivityForEvent {
  readonly id: number
  readonly patient_id: number
  /** Who made the outreach, recorded on an automatic engagement status move. */
  readonly performed_by_id?: number | null
}

export class EventGenerator extends Effect.Service<EventGenerator>()("app/EcmEventGenerator", {
  effect: Effect.gen(function*() {
    const events = yield* EventsRepo
    const histories = yield* StatusHistoriesRepo

    /** Brings the activity's event in step with it (its `updated_at` moves only when it changes). */
    const sync = Effect.fn("EventGenerator.sync")(function*(activity: ActivityRow) {
      yield* Effect.annotateCurrentSpan({ "activity.id": activity.id })
      const event = eventOf(activity)
      if (event === null) {
        yield* events.removeOf(activity.id)
        return
      }
      yield* events.upsert({ ...event, patientId: activity.patient_id, activityId: activity.id, at: yield* now })
      // docs/prtf.md "Automatic moves": an outreach attempt may start outreach.
      yield* advanceOnOutreach(histories, activity.patient_id, activity.id, activity.performed_by_id ?? null, event)
    })

    /** Before the activity is deleted (the foreign key would cascade too; this says it). */
    const remove = Effect.fn("EventGenerator.remove")(function*(activityId: number) {
      yield* Effect.annotateCurrentSpan({ "activity.id": activityId })
      return yield* events.removeOf(activityId)
    })

    return { sync, remove } as const
  }),
  dependencies: [EventsRepo.Default, StatusHistoriesRepo.Default]
}) {}
