/**
 * SQL of ECM activities and comments: reads in the three representations, and the writes the
 * `Activities` service composes inside one transaction. Events are written by the EventGenerator
 * only. SQL errors are defects here: the service checks everything a client can get wrong first.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import {
  ActivityDetail,
  ActivityEvent,
  ActivityListItem,
  Comment,
  CreatedComment
} from "../../Api/Ecm/Activities.js"
import type { PageRequest } from "../../Api/Pagination.js"
import type { ActivityStatus, ActivityType, EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { textArray } from "../Repository.js"

/** An activity row as stored. */
export interface StoredActivity {
  readonly id: number
  readonly patient_id: number
  readonly activity_type: ActivityType
  readonly status: ActivityStatus
  readonly message: string | null
  readonly subject: string | null
  readonly body: string | null
  readonly occurred_at: Date
  readonly booked_at: Date | null
  readonly email_to: string | null
  readonly email_attachments: ReadonlyArray<string>
  readonly duration: number | null
  readonly performed_by_id: number | null
  readonly assigned_to_id: number
  readonly parent_id: number | null
  readonly blocked_by_id: number | null
  /** The activity this one blocks (the reverse of `blocked_by_id`). */
  readonly blocking_id: number | null
  readonly voice_call_id: number | null
  readonly text_message_id: number | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** The writable columns. */
export type ActivityValues = Omit<StoredActivity, "id" | "blocking_id" | "created_at" | "updated_at">

export interface ActivityCriteria {
  readonly activityType?: ActivityType | undefined
  readonly assignedToId?: number | undefined
  readonly status?: ActivityStatus | undefined
}

interface ListRow {
  readonly id: number
  readonly activity_type: ActivityType
  readonly status: ActivityStatus
  readonly message: string | null
  readonly subject: string | null
  readonly body: string | null
  readonly occurred_at: Date
  readonly patient_id: number
  readonly patient_name: string
  readonly performed_by_id: number | null
  readonly performed_by_name: string | null
  readonly assigned_to_id: number
  readonly assigned_to_name: string
  readonly parent_id: number | null
  readonly comments_count: number
  readonly created_at: Date
  readonly updated_at: Date
}

const listItemOf = (row: ListRow) => ActivityListItem.make(row, true)

export class ActivitiesRepo extends Effect.Service<ActivitiesRepo>()("app/EcmActivitiesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

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

    const whereOf = (patientId: number, criteria: ActivityCriteria): Statement.Fragment => {
      const clauses: Array<Statement.Fragment> = [sql`a.patient_id = ${patientId}`]
      if (criteria.activityType !== undefined) clauses.push(sql`a.activity_type = ${criteria.activityType}`)
      if (criteria.assignedToId !== undefined) clauses.push(sql`a.assigned_to_id = ${criteria.assignedToId}`)
      if (criteria.status !== undefined) clauses.push(sql`a.status = ${criteria.status}`)
      return sql.and(clauses)
    }

    const list = (patientId: number, criteria: ActivityCriteria, page: PageRequest) =>
      Effect.gen(function*() {
        const where = whereOf(patientId, criteria)
        const rows = yield* sql<ListRow>`SELECT ${listColumns} FROM ${listFrom} WHERE ${where}
          ORDER BY a.occurred_at DESC, a.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ecm_activities a WHERE ${where}`
        return { items: rows.map(listItemOf), totalCount: counted?.count ?? 0 }
      }).pipe(Effect.orDie)

    const patientExists = (patientId: number) =>
      Effect.map(sql`SELECT 1 FROM patients WHERE id = ${patientId}`, (rows) => rows.length > 0).pipe(Effect.orDie)

    /**
     * Serialises the writes to one patient's activities (transaction-scoped advisory lock), so the
     * subtask and blocking checks that read the patient's other activities see every committed
     * change and none in flight: two requests that would close a cycle together cannot both pass.
     * Then says whether the patient exists.
     */
    const lockPatient = (patientId: number) =>
      Effect.map(
        sql<{ found: boolean }>`SELECT pg_advisory_xact_lock(hashtext('ecm_activities'), ${patientId}),
          EXISTS (SELECT 1 FROM patients WHERE id = ${patientId}) AS found`,
        (rows) => rows[0]?.found === true
      ).pipe(Effect.orDie)

    const storedColumns = sql`a.*, (SELECT b.id FROM ecm_activities b WHERE b.blocked_by_id = a.id) AS blocking_id`

    const find = (patientId: number, id: number) =>
      Effect.map(
        sql<StoredActivity>`SELECT ${storedColumns} FROM ecm_activities a WHERE a.id = ${id} AND a.patient_id = ${patientId}`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    /** An activity of the patient: its type and status (for link checks). */
    const findLinkTarget = (patientId: number, id: number) =>
      Effect.map(
        sql<{ id: number; activity_type: ActivityType; status: ActivityStatus }>`
          SELECT id, activity_type, status FROM ecm_activities WHERE id = ${id} AND patient_id = ${patientId}`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const isActiveStaff = (userId: number) =>
      Effect.map(
        sql`SELECT 1 FROM users WHERE id = ${userId} AND role <> 'parent' AND status = 'active' AND deleted_at IS NULL`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    const insert = (v: ActivityValues, now: Date) =>
      Effect.map(
        sql<StoredActivity>`INSERT INTO ecm_activities (patient_id, activity_type, status, message, subject, body, occurred_at,
            booked_at, email_to, email_attachments, duration, performed_by_id, assigned_to_id, parent_id, blocked_by_id,
            voice_call_id, text_message_id, created_at, updated_at)
          VALUES (${v.patient_id}, ${v.activity_type}, ${v.status}, ${v.message}, ${v.subject}, ${v.body}, ${v.occurred_at},
            ${v.booked_at}, ${v.email_to}, ${textArray(v.email_attachments)}::text[], ${v.duration}, ${v.performed_by_id},
            ${v.assigned_to_id}, ${v.parent_id}, NULL, ${v.voice_call_id}, ${v.text_message_id}, ${now}, ${now})
          RETURNING *, NULL::integer AS blocking_id`,
        (rows) => rows[0]!
      ).pipe(Effect.orDie)

    /** Every column but the links, which `setBlocker` writes. */
    const update = (id: number, v: ActivityValues, now: Date) =>
      sql`UPDATE ecm_activities SET activity_type = ${v.activity_type}, status = ${v.status}, message = ${v.message},
          subject = ${v.subject}, body = ${v.body}, occurred_at = ${v.occurred_at}, booked_at = ${v.booked_at},
          email_to = ${v.email_to}, email_attachments = ${textArray(v.email_attachments)}::text[], duration = ${v.duration},
          assigned_to_id = ${v.assigned_to_id}, parent_id = ${v.parent_id}, voice_call_id = ${v.voice_call_id},
          text_message_id = ${v.text_message_id}, updated_at = ${now}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Makes `blockerId` block `blockedId`, the relation being one to one: whatever `blockerId`
     * blocked before, and whatever blocked `blockedId`, is released first.
     */
    const setBlocker = (blockedId: number, blockerId: number | null) =>
      Effect.gen(function*() {
        if (blockerId !== null) yield* sql`UPDATE ecm_activities SET blocked_by_id = NULL WHERE blocked_by_id = ${blockerId} AND id <> ${blockedId}`
        yield* sql`UPDATE ecm_activities SET blocked_by_id = ${blockerId} WHERE id = ${blockedId} AND blocked_by_id IS DISTINCT FROM ${blockerId}`
      }).pipe(Effect.orDie)

    /** Releases what `blockerId` blocks. */
    const releaseBlocked = (blockerId: number) =>
      sql`UPDATE ecm_activities SET blocked_by_id = NULL WHERE blocked_by_id = ${blockerId}`.pipe(Effect.asVoid, Effect.orDie)

    /** Whether following `column` from the activity comes back to it (the chain is acyclic otherwise). */
    const inCycle = (id: number, column: "blocked_by_id" | "parent_id") =>
      Effect.map(
        sql<{ cycle: boolean }>`WITH RECURSIVE chain (id, depth) AS (
            SELECT ${sql(column)}, 1 FROM ecm_activities WHERE id = ${id}
            UNION ALL
            SELECT a.${sql(column)}, chain.depth + 1 FROM ecm_activities a JOIN chain ON a.id = chain.id
            WHERE chain.id <> ${id} AND chain.depth < 10000
          )
          SELECT EXISTS (SELECT 1 FROM chain WHERE id = ${id}) AS cycle`,
        (rows) => rows[0]?.cycle === true
      ).pipe(Effect.orDie)

    const hasSubtasks = (id: number) =>
      Effect.map(sql`SELECT 1 FROM ecm_activities WHERE parent_id = ${id} LIMIT 1`, (rows) => rows.length > 0).pipe(Effect.orDie)

    const remove = (patientId: number, id: number) =>
      Effect.map(
        sql`DELETE FROM ecm_activities WHERE id = ${id} AND patient_id = ${patientId} RETURNING id`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

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

    const detail = (patientId: number, id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<ListRow & {
          booked_at: Date | null
          email_to: string | null
          transcript: string | null
          blocked_by_id: number | null
          blocking_id: number | null
          voice_call_id: number | null
          text_message_id: number | null
          event_id: number | null
          event_type: EventType | null
          event_occurred_at: Date | null
          event_status: EventStatus | null
          telephony_sms: Record<string, unknown> | null
          telephony_call: Record<string, unknown> | null
        }>`SELECT ${listColumns}, a.booked_at, a.email_to, a.transcript, a.blocked_by_id,
            (SELECT b.id FROM ecm_activities b WHERE b.blocked_by_id = a.id) AS blocking_id,
            a.voice_call_id, a.text_message_id,
            ${telephonyRecords},
            e.id AS event_id, e.event_type, e.occurred_at AS event_occurred_at, e.status AS event_status
          FROM ${listFrom} LEFT JOIN ecm_events e ON e.activity_id = a.id
          WHERE a.id = ${id} AND a.patient_id = ${patientId}`
        if (row === undefined) return undefined
        const comments = yield* sql<{ id: number; body: string; user_id: number | null; user_name: string | null; created_at: Date }>`
          SELECT c.id, c.body, c.user_id, CASE WHEN u.id IS NULL THEN NULL ELSE u.first_name || ' ' || u.last_name END AS user_name,
            c.created_at
          FROM ecm_activity_comments c LEFT JOIN users u ON u.id = c.user_id
          WHERE c.activity_id = ${id} ORDER BY c.created_at, c.id`
        const subtasks = yield* sql<ListRow>`SELECT ${listColumns} FROM ${listFrom}
          WHERE a.parent_id = ${id} ORDER BY a.occurred_at, a.id`
        const { event_id, event_occurred_at, event_status, event_type, ...activity } = row
        return ActivityDetail.make({
          ...activity,
          comments: comments.map((c) => Comment.make(c, true)),
          subtasks: subtasks.map(listItemOf),
          event: event_id === null
            ? null
            : ActivityEvent.make({ id: event_id, event_type: event_type!, occurred_at: event_occurred_at!, status: event_status! }, true)
        }, true)
      }).pipe(Effect.orDie)

    const addComment = (activityId: number, userId: number, body: string, now: Date) =>
      Effect.map(
        sql<{ id: number; body: string; user_id: number | null; user_name: string | null; activity_id: number; created_at: Date }>`
          WITH c AS (
            INSERT INTO ecm_activity_comments (activity_id, user_id, body, created_at, updated_at)
            VALUES (${activityId}, ${userId}, ${body}, ${now}, ${now}) RETURNING *
          )
          SELECT c.id, c.body, c.user_id, u.first_name || ' ' || u.last_name AS user_name, c.activity_id, c.created_at
          FROM c LEFT JOIN users u ON u.id = c.user_id`,
        (rows) => CreatedComment.make(rows[0]!, true)
      ).pipe(Effect.orDie)

    return {
      list, patientExists, lockPatient, find, findLinkTarget, isActiveStaff, insert, update, setBlocker, releaseBlocked,
      inCycle, hasSubtasks, remove, detail, addComment
    } as const
  })
}) {}
