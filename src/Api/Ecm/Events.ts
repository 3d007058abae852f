/** ECM events (ECM §2.4, §4.2, §6): read-only list, detail and counts of a patient's events. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ActivityStatus, ActivityType, EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs } from "../Docs.js"
import { EcmNotFound, reportAllErrors, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { IdParam, IsoDate } from "../Schemas.js"
import { EcmStaffAuthentication } from "../Security.js"

/** ECM §8: events list 25 a page (`per_page`). */
export const eventsPageSize = 25

const Text = Schema.NullOr(Schema.String)

const eventFields = {
  id: Schema.Int,
  event_type: EventType,
  occurred_at: IsoTimestamp,
  subject: Text,
  body: Text,
  duration: Schema.NullOr(Schema.Int).annotations({ description: "Minutes; calls and appointments only" }),
  status: EventStatus.annotations({ description: "scheduled, attempted, complete or cancelled (docs/prtf.md)" }),
  patient_id: Schema.Int,
  patient_name: Schema.String,
  activity_id: Schema.Int,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}

export class Event extends Schema.Class<Event>("Event")(eventFields) {}

export class EventActivity extends Schema.Class<EventActivity>("EventActivity")({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  performed_by_id: Schema.NullOr(Schema.Int),
  performed_by_name: Text,
  assigned_to_id: Schema.Int,
  assigned_to_name: Schema.String
}) {}

export class EventDetail extends Schema.Class<EventDetail>("EventDetail")({ ...eventFields, activity: EventActivity }) {}

export class EventList extends Schema.Class<EventList>("EventList")({ events: Schema.Array(Event), pagination: Pagination }) {}
export class EventResponse extends Schema.Class<EventResponse>("EventResponse")({ event: EventDetail }) {}

const count = Schema.Int
export class EventCountsByType extends Schema.Class<EventCountsByType>("EventCountsByType")({
  sms: count, call: count, email: count, appointment: count, task: count, meeting: count
}) {}
export class PrtfCategoryCounts extends Schema.Class<PrtfCategoryCounts>("PrtfCategoryCounts")({
  telehealth_encounters: count, in_person_encounters: count, telehealth_outreach: count, in_person_outreach: count
}) {}
export class EventCountsSummary extends Schema.Class<EventCountsSummary>("EventCountsSummary")({
  total: count,
  by_type: EventCountsByType,
  prtf_categories: PrtfCategoryCounts
}) {}
export class EventCounts extends Schema.Class<EventCounts>("EventCounts")({
  patient_id: Schema.Int,
  start_date: IsoDate,
  end_date: IsoDate,
  counts: EventCountsSummary
}) {}

export const EventListQuery = listQuery({
  size: "per_page",
  fields: {
    event_type: Schema.optional(EventType),
    start_date: Schema.optional(IsoDate.annotations({ description: "Events on or after this day (UTC)" })),
    end_date: Schema.optional(IsoDate.annotations({ description: "Events on or before this day (UTC)" }))
  }
})

/**
 * Both dates are required (§4.2), but a missing one must be the spec's single message
 * ("Start date and end date are required"), so presence is checked after decoding.
 * Present values are checked here: a bad one is `Start date is invalid`.
 */
export const EventCountsQuery = Schema.Struct({
  start_date: Schema.optional(IsoDate.annotations({ description: "First day (UTC), YYYY-MM-DD; required" })),
  end_date: Schema.optional(IsoDate.annotations({ description: "Last day (UTC), YYYY-MM-DD, inclusive; required" }))
}).annotations(reportAllErrors)

const PatientPath = Schema.Struct({ patient_id: IdParam })
const spec = "ECM §4.2"

export class EcmEventsApi extends HttpApiGroup.make("ecmEvents")
  .add(
    HttpApiEndpoint.get("list", "/clinic/ecm/patients/:patient_id/events")
      .setPath(PatientPath)
      .setUrlParams(EventListQuery)
      .addSuccess(EventList)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a patient's events",
        description: "Events newest first, 25 a page by default (`per_page`); `event_type` filters, `start_date` and " +
          "`end_date` (UTC days, inclusive) bound `occurred_at`.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("counts", "/clinic/ecm/patients/:patient_id/events/counts")
      .setPath(PatientPath)
      .setUrlParams(EventCountsQuery)
      .addSuccess(EventCounts)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Count a patient's events",
        description: "Events between `start_date` and `end_date` (UTC days, inclusive; both required): the total, " +
          "by type (all six keys), and by PRTF category with the rule of docs/prtf.md (calls and appointments are " +
          "encounters only while the member's engagement status is `enrolled`).",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/ecm/patients/:patient_id/events/:id")
      .setPath(Schema.Struct({ patient_id: IdParam, id: IdParam }))
      .addSuccess(EventResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an event",
        description: "The event with its activity. An event of another patient is 404 `Event not found`.",
        access: Access.staff,
        spec
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Events",
    description: "The compliance record: one event per activity that is not a note, kept in step with it, and the " +
      "counts PRTF reporting uses."
  }))
{}
