/**
 * SQL of ECM activities and comments: reads in the three representations, and the writes the
 * `Activities` service composes inside one transaction. Events are written by the EventGenerator
 * only. Rows are decoded with schemas; SQL errors are defects here (`orDefect`): the service checks
 * everything a client can get wrong first.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import {
  ActivityDetail,
  ActivityEvent,
  ActivityListItem,
  Comment,
  CreatedComment
} from "../../Api/Ecm/Activities.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { ActivityStatus, ActivityType, EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema, textArray } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)
const NullId = Schema.NullOr(Schema.Int)
const NullDate = Schema.NullOr(Schema.DateFromSelf)

/** An activity row as stored. */
export const StoredActivity = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  message: NullText,
  subject: NullText,
  body: NullText,
  occurred_at: Schema.DateFromSelf,
  booked_at: NullDate,
  email_to: NullText,
  email_attachments: Schema.Array(Schema.String),
  duration: NullId,
  performed_by_id: NullId,
  assigned_to_id: Schema.Int,
  parent_id: NullId,
  blocked_by_id: NullId,
  /** The activity this one blocks (the reverse of `blocked_by_id`). */
  blocking_id: NullId,
  voice_call_id: NullId,
  text_message_id: NullId,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type StoredActivity = typeof StoredActivity.Type

/** The writable columns. */
export const ActivityValues = StoredActivity.pipe(Schema.omit("id", "blocking_id", "created_at", "updated_at"))
export type ActivityValues = typeof ActivityValues.Type

export const ActivityCriteria = Schema.Struct({
  activityType: Schema.optional(ActivityType),
  assignedToId: Schema.optional(Schema.Int),
  status: Schema.optional(ActivityStatus)
})
export type ActivityCriteria = typeof ActivityCriteria.Type

/** The list representation's columns (§2.2). */
const ListRow = Schema.Struct({
  id: Schema.Int,
  activity_type: ActivityType,
  status: ActivityStatus,
  message: NullText,
  subject: NullText,
  body: NullText,
  occurred_at: Schema.DateFromSelf,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  performed_by_id: NullId,
  performed_by_name: NullText,
  assigned_to_id: Schema.Int,
  assigned_to_name: Schema.String,
  parent_id: NullId,
  comments_count: Schema.Int,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
type ListRow = typeof ListRow.Type

/** The telephony provider's record embedded in a detail, as `jsonb_build_object` makes it. */
const TelephonyJson = Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** The detail representation's columns, with its event's (prefixed `event_`). */
const DetailRow = Schema.Struct({
  ...ListRow.fields,
  booked_at: NullDate,
  email_to: NullText,
  transcript: NullText,
  blocked_by_id: NullId,
  blocking_id: NullId,
  voice_call_id: NullId,
  text_message_id: NullId,
  telephony_sms: TelephonyJson,
  telephony_call: TelephonyJson,
  event_id: NullId,
  event_type: Schema.NullOr(EventType),
  event_occurred_at: NullDate,
  event_status: Schema.NullOr(EventStatus)
})

const CommentRow = Schema.Struct({
  id: Schema.Int,
  body: Schema.String,
  user_id: NullId,
  user_name: NullText,
  created_at: Schema.DateFromSelf
})

const CreatedCommentRow = Schema.Struct({ ...CommentRow.fields, activity_id: Schema.Int })

const LinkTarget = Schema.Struct({ id: Schema.Int, activity_type: ActivityType, status: ActivityStatus })

const PatientActivity = Schema.Struct({ patientId: Schema.Int, id: Schema.Int })

const listItemOf = (row: ListRow) => ActivityListItem.make(row, true)

export class ActivitiesRepo extends Effect.Service<ActivitiesRepo>()("app/EcmActivitiesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const listColumns = sql`a.id, a.activity_type, a.status, a.message, a.subject, a.body, a.occurred_at, a.patient_id,
      p.first_name || ' ' || p.last_name AS patient_name,
      a.performed_by_id, CASE WHEN pb.id IS NULL THEN NULL ELSE pb.first_name || ' ' || pb.last_name END AS performed_by_name,
      a.assigned_to_id, asg.first_name || ' ' || asg.last_name AS assigned_to_name,
      a.parent_id,
      (SELECT count(*)::int FROM ecm_activity_comments c WHERE c.activity_id = a.id) AS comments_count,
      a.created_at, a.updated_at`
    const listFrom = sql`ecm_activities a
      JOIN patients p ON p.id = a.patient_id
      LEFT JOIN users pb ON pb.id = a.performed_by_id
      JOIN users asg ON asg.id = a.assigned_to_id`

    const newestFirst = { occurred_at: sql`a.occurred_at` }

    /** A page of the patient's activities, newest `occurred_at` first. */
    const list = (patientId: number, criteria: ActivityCriteria, page: PageRequest) =>
      Effect.map(
        listPage({
          select: listColumns,
          from: listFrom,
          countFrom: sql`ecm_activities a`,
          row: ListRow,
          filters: [
            sql`a.patient_id = ${patientId}`,
            criteria.activityType !== undefined && sql`a.activity_type = ${criteria.activityType}`,
            criteria.assignedToId !== undefined && sql`a.assigned_to_id = ${criteria.assignedToId}`,
            criteria.status !== undefined && sql`a.status = ${criteria.status}`
          ],
          sort: { columns: newestFirst, by: "occurred_at", dir: "DESC", id: sql`a.id` }
        }, page),
        ({ pagination, rows }) => ({ rows: rows.map(listItemOf), pagination })
      )

    const patientExists = (patientId: number) =>
      Effect.map(sql`SELECT 1 FROM patients WHERE id = ${patientId}`, (rows) => rows.length > 0).pipe(orDefect)

    const lockPatientRow = SqlSchema.single({
      Request: Schema.Int,
      Result: Schema.Struct({ found: Schema.Boolean }),
      execute: (patientId) =>
        sql`SELECT pg_advisory_xact_lock(hashtext('ecm_activities'), ${patientId}),
          EXISTS (SELECT 1 FROM patients WHERE id = ${patientId}) AS found`
    })

    /**
     * Serialises the writes to one patient's activities (transaction-scoped advisory lock), so the
     * subtask and blocking checks that read the patient's other activities see every committed
     * change and none in flight: two requests that would close a cycle together cannot both pass.
     * Then says whether the patient exists.
     */
    const lockPatient = (patientId: number) => Effect.map(lockPatientRow(patientId), (row) => row.found).pipe(orDefect)

    const storedColumns = sql`a.*, (SELECT b.id FROM ecm_activities b WHERE b.blocked_by_id = a.id) AS blocking_id`

    const findRow = SqlSchema.findOne({
      Request: PatientActivity,
      Result: StoredActivity,
      execute: ({ id, patientId }) =>
        sql`SELECT ${storedColumns} FROM ecm_activities a WHERE a.id = ${id} AND a.patient_id = ${patientId}`
    })

    const find = (patientId: number, id: number) =>
      Effect.map(findRow({ patientId, id }), Option.getOrUndefined).pipe(orDefect)

    const linkTarget = SqlSchema.findOne({
      Request: PatientActivity,
      Result: LinkTarget,
      execute: ({ id, patientId }) =>
        sql`SELECT id, activity_type, status FROM ecm_activities WHERE id = ${id} AND patient_id = ${patientId}`
    })

    /** An activity of the patient: its type and status (for link checks). */
    const findLinkTarget = (patientId: number, id: number) =>
      Effect.map(linkTarget({ patientId, id }), Option.getOrUndefined).pipe(orDefect)

    const isActiveStaff = (userId: number) =>
      Effect.map(
        sql`SELECT 1 FROM users WHERE id = ${userId} AND role <> 'parent' AND status = 'active' AND deleted_at IS NULL`,
        (rows) => rows.length > 0
      ).pipe(orDefect)

    const insertRow = SqlSchema.single({
      Request: Schema.Struct({ v: ActivityValues, now: Schema.DateFromSelf }),
      Result: StoredActivity,
      execute: ({ now, v }) =>
        sql`INSERT INTO ecm_activities (patient_id, activity_type, status, message, subject, body, occurred_at,
            booked_at, email_to, email_attachments, duration, performed_by_id, assigned_to_id, parent_id, blocked_by_id,
            voice_call_id, text_message_id, created_at, updated_at)
          VALUES (${v.patient_id}, ${v.activity_type}, ${v.status}, ${v.message}, ${v.subject}, ${v.body}, ${v.occurred_at},
            ${v.booked_at}, ${v.email_to}, ${textArray(v.email_attachments)}::text[], ${v.duration}, ${v.performed_by_id},
            ${v.assigned_to_id}, ${v.parent_id}, NULL, ${v.voice_call_id}, ${v.text_message_id}, ${now}, ${now})
          RETURNING *, NULL::integer AS blocking_id`
    })

    const insert = (v: ActivityValues, now: Date) => orDefect(insertRow({ v, now }))

    /** Every column but the links, which `setBlocker` writes. */
    const update = (id: number, v: ActivityValues, now: Date) =>
      sql`UPDATE ecm_activities SET activity_type = ${v.activity_type}, status = ${v.status}, message = ${v.message},
          subject = ${v.subject}, body = ${v.body}, occurred_at = ${v.occurred_at}, booked_at = ${v.booked_at},
          email_to = ${v.email_to}, email_attachments = ${textArray(v.email_attachments)}::text[], duration = ${v.duration},
          assigned_to_id = ${v.assigned_to_id}, parent_id = ${v.parent_id}, voice_call_id = ${v.voice_call_id},
          text_message_id = ${v.text_message_id}, updated_at = ${now}
        WHERE id = ${id}`.pipe(Effect.asVoid, orDefect)

    /**
     * Makes `blockerId` block `blockedId`, the relation being one to one: whatever `blockerId`
     * blocked before, and whatever blocked `blockedId`, is released first.
     */
    const setBlocker = (blockedId: number, blockerId: number | null) =>
      Effect.gen(function*() {
        if (blockerId !== null) yield* sql`UPDATE ecm_activities SET blocked_by_id = NULL WHERE blocked_by_id = ${blockerId} AND id <> ${blockedId}`
        yield* sql`UPDATE ecm_activities SET blocked_by_id = ${blockerId} WHERE id = ${blockedId} AND blocked_by_id IS DISTINCT FROM ${blockerId}`
      }).pipe(orDefect)

    /** Releases what `blockerId` blocks. */
    const releaseBlocked = (blockerId: number) =>
      sql`UPDATE ecm_activities SET blocked_by_id = NULL WHERE blocked_by_id = ${blockerId}`.pipe(Effect.asVoid, orDefect)

    const cycle = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.Int, column: Schema.Literal("blocked_by_id", "parent_id") }),
      Result: Schema.Struct({ cycle: Schema.Boolean }),
      execute: ({ column, id }) =>
        sql`WITH RECURSIVE chain (id, depth) AS (
            SELECT ${sql(column)}, 1 FROM ecm_activities WHERE id = ${id}
            UNION ALL
            SELECT a.${sql(column)}, chain.depth + 1 FROM ecm_activities a JOIN chain ON a.id = chain.id
            WHERE chain.id <> ${id} AND chain.depth < 10000
          )
          SELECT EXISTS (SELECT 1 FROM chain WHERE id = ${id}) AS cycle`
    })

    /** Whether following `column` from the activity comes back to it (the chain is acyclic otherwise). */
    const inCycle = (id: number, column: "blocked_by_id" | "parent_id") =>
      Effect.map(cycle({ id, column }), (row) => row.cycle).pipe(orDefect)

    const hasSubtasks = (id: number) =>
      Effect.map(sql`SELECT 1 FROM ecm_activities WHERE parent_id = ${id} LIMIT 1`, (rows) => rows.length > 0).pipe(orDefect)

    const remove = (patientId: number, id: number) =>
      Effect.map(
        sql`DELETE FROM ecm_activities WHERE id = ${id} AND patient_id = ${patientId} RETURNING id`,
        (rows) => rows.length > 0
      ).pipe(orDefect)

    /**
     * The communications records of an sms or call activity, embedded in the detail
     * (§2.2 `telephony_sms`/`telephony_call`): null unless the activity links one.
     */
    const utc = (column: string) => sql.literal(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)
    const telephonyRecords = sql`
      (SELECT jsonb_build_object('id', s.id, 'telephony_sid', s.telephony_sid, 'to', s.to_number, 'from', s.from_number,
          'body', s.body, 'media_urls', to_jsonb(s.media_urls), 'status', s.status, 'direction', s.direction,
          'segments', s.segments, 'error_code', s.error_code, 'error_message', s.error_message,
          'created_at', ${utc("s.created_at")}, 'updated_at', ${utc("s.updated_at")})
        FROM sms_messages s WHERE s.id = a.text_message_id) AS telephony_sms,
      (SELECT jsonb_build_object('id', c.id, 'telephony_sid', c.telephony_sid, 'to', c.to_number, 'from', c.from_number,
          'status', c.status, 'direction', c.direction, 'duration_seconds', c.duration_seconds,
          'recording_url', c.recording_url, 'transcript', c.transcript, 'error_code', c.error_code,
          'error_message', c.error_message, 'created_at', ${utc("c.created_at")}, 'updated_at', ${utc("c.updated_at")})
        FROM voice_calls c WHERE c.id = a.voice_call_id) AS telephony_call`

    const detailRow = SqlSchema.findOne({
      Request: PatientActivity,
      Result: DetailRow,
      execute: ({ id, patientId }) =>
        sql`SELECT ${listColumns}, a.booked_at, a.email_to, a.transcript, a.blocked_by_id,
            (SELECT b.id FROM ecm_activities b WHERE b.blocked_by_id = a.id) AS blocking_id,
            a.voice_call_id, a.text_message_id,
            ${telephonyRecords},
            e.id AS event_id, e.event_type, e.occurred_at AS event_occurred_at, e.status AS event_status
          FROM ${listFrom} LEFT JOIN ecm_events e ON e.activity_id = a.id
          WHERE a.id = ${id} AND a.patient_id = ${patientId}`
    })

    const comments = SqlSchema.findAll({
      Request: Schema.Int,
      Result: CommentRow,
      execute: (activityId) =>
        sql`SELECT c.id, c.body, c.user_id, CASE WHEN u.id IS NULL THEN NULL ELSE u.first_name || ' ' || u.last_name END AS user_name,
            c.created_at
          FROM ecm_activity_comments c LEFT JOIN users u ON u.id = c.user_id
          WHERE c.activity_id = ${activityId} ORDER BY c.created_at, c.id`
    })

    const subtasks = SqlSchema.findAll({
      Request: Schema.Int,
      Result: ListRow,
      execute: (parentId) => sql`SELECT ${listColumns} FROM ${listFrom} WHERE a.parent_id = ${parentId} ORDER BY a.occurred_at, a.id`
    })

    const detail = (patientId: number, id: number) =>
      Effect.gen(function*() {
        const found = yield* detailRow({ patientId, id })
        if (Option.isNone(found)) return undefined
        const activityComments = yield* comments(id)
        const activitySubtasks = yield* subtasks(id)
        const { event_id, event_occurred_at, event_status, event_type, ...activity } = found.value
        return ActivityDetail.make({
          ...activity,
          comments: activityComments.map((c) => Comment.make(c, true)),
          subtasks: activitySubtasks.map(listItemOf),
          event: event_id === null
            ? null
            : ActivityEvent.make({ id: event_id, event_type: event_type!, occurred_at: event_occurred_at!, status: event_status! }, true)
        }, true)
      }).pipe(orDefect)

    const insertComment = SqlSchema.single({
      Request: Schema.Struct({ activityId: Schema.Int, userId: Schema.Int, body: Schema.String, now: Schema.DateFromSelf }),
      Result: CreatedCommentRow,
      execute: ({ activityId, body, now, userId }) =>
        sql`WITH c AS (
            INSERT INTO ecm_activity_comments (activity_id, user_id, body, created_at, updated_at)
            VALUES (${activityId}, ${userId}, ${body}, ${now}, ${now}) RETURNING *
          )
          SELECT c.id, c.body, c.user_id, u.first_name || ' ' || u.last_name AS user_name, c.activity_id, c.created_at
          FROM c LEFT JOIN users u ON u.id = c.user_id`
    })

    const addComment = (activityId: number, userId: number, body: string, now: Date) =>
      Effect.map(insertComment({ activityId, userId, body, now }), (row) => CreatedComment.make(row, true)).pipe(orDefect)

    return {
      list, patientExists, lockPatient, find, findLinkTarget, isActiveStaff, insert, update, setBlocker, releaseBlocked,
      inCycle, hasSubtasks, remove, detail, addComment
    } as const
  })
}) {}
