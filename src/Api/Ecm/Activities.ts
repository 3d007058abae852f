/** ECM activities (ECM §2.2, §2.3, §3.1, §4.1): the list, detail, create, update, delete and comments. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ActivityStatus, ActivityType, EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { maxId } from "../../Domain/Ids.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, reportAllErrors, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, Email, IdParam, RequiredString } from "../Schemas.js"
import { EcmStaffAuthentication } from "../Security.js"

/** ECM §8: activities list 25 a page (`page_size`). */
export const activitiesPageSize = 25

export const activityMaxLengths = { message: 4000, subject: 255, body: 8000, url: 2048, attachments: 10, comment: 4000 } as const

const Text = Schema.NullOr(Schema.String)
const Id = Schema.NullOr(Schema.Int)

/** An id in a JSON body: a positive PostgreSQL integer. */
export const BodyId = Schema.Int.pipe(Schema.between(1, maxId), Schema.annotations({ message: () => "is invalid" }))

/**
 * A timestamp a client sends for an activity: any ISO 8601 form, in the years PostgreSQL and
 * every client can show (1000–9999).
 */
export const ActivityTimestamp = IsoTimestamp.pipe(
  Schema.filter((d) => d.getUTCFullYear() >= 1000 && d.getUTCFullYear() <= 9999, { message: () => "is invalid" }),
  Schema.annotations({ jsonSchema: { type: "string", format: "date-time", maxLength: 40 } })
)

/** An attachment link of an email activity: an absolute http(s) URL. */
export const AttachmentUrl = BoundedString(activityMaxLengths.url).pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== ""
    } catch {
      return false
    }
  }, { message: () => "is not an http(s) URL", jsonSchema: { format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" } })
)

/** Minutes of a call or appointment, copied to its event (§2.4 `duration`); at most a day. */
export const DurationMinutes = Schema.Int.pipe(Schema.between(0, 1440), Schema.annotations({ message: () => "must be a whole number of minutes from 0 to 1440" }))

/**
 * The fields of a create or update body (§4.1). Every field may be absent; `null` clears it on an
 * update. Which fields a type requires is checked after decoding, so the 422 lists every
 * missing one (`Message can't be blank`, `Assigned to can't be blank`).
 */
const activityFields = {
  activity_type: Schema.optional(Schema.NullOr(ActivityType)),
  assigned_to_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "An active staff user" }))),
  message: Schema.optional(Schema.NullOr(BoundedString(activityMaxLengths.message).annotations({ description: "Task text; required for task" }))),
  body: Schema.optional(Schema.NullOr(BoundedString(activityMaxLengths.body).annotations({ description: "Required for note, sms and email" }))),
  subject: Schema.optional(Schema.NullOr(BoundedString(activityMaxLengths.subject))),
  email_to: Schema.optional(Schema.NullOr(Email.annotations({ description: "Recipient; required for email" }))),
  booked_at: Schema.optional(Schema.NullOr(ActivityTimestamp.annotations({ description: "Required for in_person_appointment" }))),
  voice_call_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "Required for call" }))),
  text_message_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "Required for sms" }))),
  parent_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "A task of the same patient: makes this task its subtask" }))),
  blocked_by_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "The activity of the same patient that blocks this one" }))),
  blocking_id: Schema.optional(Schema.NullOr(BodyId.annotations({ description: "The activity of the same patient this one blocks" }))),
  occurred_at: Schema.optional(Schema.NullOr(ActivityTimestamp.annotations({ description: "When it happened; default now" }))),
  status: Schema.optional(ActivityStatus),
  email_attachments: Schema.optional(Schema.NullOr(BoundedArray(AttachmentUrl, activityMaxLengths.attachments).annotations({
    description: "Email only: links to the attachments, included in the email as links (never fetched)"
  }))),
  duration: Schema.optional(Schema.NullOr(DurationMinutes.annotations({ description: "Minutes of a call or appointment (copied to its event)" })))
}

export const ActivityFields = Schema.Struct(activityFields).annotations({ ...reportAllErrors, identifier: "ActivityFields" })
export type ActivityFields = typeof ActivityFields.Type

export class CreateActivityRequest extends Schema.Class<CreateActivityRequest>("CreateActivityRequest")({
  activity: ActivityFields
}, requestBody(
  { activity: { activity_type: "task", message: "Call the member's pharmacy about refills", assigned_to_id: 12 } },
  { activity: { activity_type: "email", email_to: "member@example.org", subject: "Your appointment", body: "See you on Monday.", assigned_to_id: 12 } }
)) {}

export class UpdateActivityRequest extends Schema.Class<UpdateActivityRequest>("UpdateActivityRequest")({
  activity: ActivityFields
}, requestBody({ activity: { status: "complete" } })) {}

export class Comment extends Schema.Class<Comment>("Comment")({
  id: Schema.Int,
  body: Schema.String,
  user_id: Id,
  user_name: Text,
  created_at: IsoTimestamp
}) {}

export class CreatedComment extends Schema.Class<CreatedComment>("CreatedComment")({
  id: Schema.Int,
  body: Schema.String,
  user_id: Id,
  user_name: Text,
  activity_id: Schema.Int,
  created_at: IsoTimestamp
}) {}

export class CommentResponse extends Schema.Class<CommentResponse>("CommentResponse")({ comment: CreatedComment }) {}

export class CreateCommentRequest extends Schema.Class<CreateCommentRequest>("CreateCommentRequest")({
  comment: Schema.Struct({ body: RequiredString(activityMaxLengths.comment) }).annotations(reportAllErrors)
}, requestBody({ comment: { body: "Left a voicemail; will try again tomorrow." } })) {}

/** §2.2 list representation. `performed_by_*` is null only for activities the system records. */
export class ActivityListItem extends Schema.Class<ActivityListItem>("ActivityListItem")({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  message: Text,
  subject: Text,
  body: Text,
  occurred_at: IsoTimestamp,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  performed_by_id: Id,
  performed_by_name: Text,
  assigned_to_id: Schema.Int,
  assigned_to_name: Schema.String,
  parent_id: Id,
  comments_count: Schema.Int,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class ActivityList extends Schema.Class<ActivityList>("ActivityList")({
  activities: Schema.Array(ActivityListItem),
  pagination: Pagination
}) {}

/** The event embedded in an activity's detail (§2.2: id, event_type, occurred_at, status). */
export class ActivityEvent extends Schema.Class<ActivityEvent>("ActivityEvent")({
  id: Schema.Int,
  event_type: EventType,
  occurred_at: IsoTimestamp,
  status: EventStatus
}) {}

/** The telephony provider's record of a call or message (§2.2: "its fields: not shown"). */
export const TelephonyRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier: "TelephonyRecord" })

/** §2.2 detail representation. */
export class ActivityDetail extends Schema.Class<ActivityDetail>("ActivityDetail")({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  message: Text,
  subject: Text,
  body: Text,
  occurred_at: IsoTimestamp,
  booked_at: Schema.NullOr(IsoTimestamp),
  email_to: Text,
  transcript: Text,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  performed_by_id: Id,
  performed_by_name: Text,
  assigned_to_id: Schema.Int,
  assigned_to_name: Schema.String,
  parent_id: Id,
  blocked_by_id: Id,
  blocking_id: Id,
  voice_call_id: Id,
  text_message_id: Id,
  comments: Schema.Array(Comment),
  subtasks: Schema.Array(ActivityListItem),
  telephony_call: Schema.NullOr(TelephonyRecord).annotations({
    description: "The call record of a call activity (`voice_call_id`): id, telephony_sid, to, from, status, direction, " +
      "duration_seconds, recording_url, transcript, error_code, error_message, created_at, updated_at; else null"
  }),
  telephony_sms: Schema.NullOr(TelephonyRecord).annotations({
    description: "The message record of an sms activity (`text_message_id`): id, telephony_sid, to, from, body, " +
      "media_urls, status, direction, segments, error_code, error_message, created_at, updated_at; else null"
  }),
  event: Schema.NullOr(ActivityEvent).annotations({ description: "Null for a note (no event, ECM §6)" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class ActivityDetailResponse extends Schema.Class<ActivityDetailResponse>("ActivityDetailResponse")({ activity: ActivityDetail }) {}

/** §2.2 create response representation. */
export class CreatedActivity extends Schema.Class<CreatedActivity>("CreatedActivity")({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  message: Text,
  subject: Text,
  patient_id: Schema.Int,
  performed_by_id: Id,
  assigned_to_id: Schema.Int,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class CreatedActivityResponse extends Schema.Class<CreatedActivityResponse>("CreatedActivityResponse")({ activity: CreatedActivity }) {}

export const ActivityListQuery = listQuery({
  size: "page_size",
  fields: {
    activity_type: Schema.optional(ActivityType),
    assigned_to_id: Schema.optional(IdParam.annotations({ description: "Activities assigned to this user" })),
    status: Schema.optional(ActivityStatus)
  }
})

const PatientPath = Schema.Struct({ patient_id: IdParam })
const ActivityPath = Schema.Struct({ patient_id: IdParam, id: IdParam })
const CommentPath = Schema.Struct({ patient_id: IdParam, activity_id: IdParam })

const spec = "ECM §4.1"

export class EcmActivitiesApi extends HttpApiGroup.make("ecmActivities")
  .add(
    HttpApiEndpoint.get("list", "/clinic/ecm/patients/:patient_id/activities")
      .setPath(PatientPath)
      .setUrlParams(ActivityListQuery)
      .addSuccess(ActivityList)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a patient's activities",
        description: "The patient's activities, newest `occurred_at` first, 25 a page by default (`page_size`); " +
          "filter by `activity_type`, `assigned_to_id` and `status`. Unknown patient: 404 `Patient not found`.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/ecm/patients/:patient_id/activities/:id")
      .setPath(ActivityPath)
      .addSuccess(ActivityDetailResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an activity",
        description: "The activity with its comments (oldest first), subtasks, blocking links and event. An activity " +
          "of another patient than the one in the path is 404 `Activity not found`.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/ecm/patients/:patient_id/activities")
      .setPath(PatientPath)
      .setPayload(CreateActivityRequest)
      .addSuccess(CreatedActivityResponse, { status: 201 })
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Record an activity",
        description: "Records an activity performed by the caller (whatever the body says) and, in the same " +
          "transaction, its event (every type but note, ECM §6). Each type's required fields (§2.2) are checked " +
          "together: the 422 lists every missing one. `assigned_to_id` must be an active staff user; `parent_id` a " +
          "task of the same patient (only tasks have subtasks); `blocked_by_id`/`blocking_id` activities of the same " +
          "patient, without cycles. An email activity sends the email to `email_to` (attachments as links); when " +
          "the email cannot be sent the 422 says why and nothing is saved.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/ecm/patients/:patient_id/activities/:id")
      .setPath(ActivityPath)
      .setPayload(UpdateActivityRequest)
      .addSuccess(ActivityDetailResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update an activity",
        description: "Changes any create field (`null` clears an optional one) and keeps the event in step; answers " +
          "the detail representation. Status moves between `complete` and `cancelled` must go through `created`; " +
          "an activity cannot become complete while its blocker is open. Emails are not sent again.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/clinic/ecm/patients/:patient_id/activities/:id")
      .setPath(ActivityPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete an activity",
        description: "Deletes the activity, its comments and its event: 204 without a body. Its subtasks become " +
          "standalone tasks and the activity it blocked is unblocked.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.post("comment", "/clinic/ecm/patients/:patient_id/activities/:activity_id/comments")
      .setPath(CommentPath)
      .setPayload(CreateCommentRequest)
      .addSuccess(CommentResponse, { status: 201 })
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Comment on an activity",
        description: "Adds a comment by the caller to the activity.",
        access: Access.staff,
        spec
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Activities",
    description: "What care coordinators do for a member — tasks, notes, texts, calls, emails, in-person " +
      "appointments — with comments, subtasks and blocking links. Every activity but a note produces an event."
  }))
{}
