/**
 * SQL of ECM communications: the `sms_messages` and `voice_calls` records, opt-outs, patient and
 * lead care manager lookups, and the activities and events communications create (through
 * `ActivitiesRepo.insert` and the `EventGenerator`, like every other activity). Callers compose
 * these inside their transactions; SQL errors are defects here.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { CallRecord, CommunicationActivity, SmsRecord, UnmatchedSms } from "../../Api/Ecm/Communications.js"
import type { PageRequest } from "../../Api/Pagination.js"
import type { ActivityStatus, ActivityType } from "../../Domain/Ecm/Activity.js"
import type { CallStatus, Direction, SmsStatus } from "../../Domain/Ecm/Communication.js"
import { ActivitiesRepo, type ActivityValues, type StoredActivity } from "./ActivitiesRepo.js"
import { EventGenerator } from "./EventGenerator.js"
import { textArray } from "../Repository.js"

export interface SmsRow {
  readonly id: number
  readonly patient_id: number | null
  readonly direction: Direction
  readonly telephony_sid: string | null
  readonly to_number: string
  readonly from_number: string
  readonly body: string
  readonly media_urls: ReadonlyArray<string>
  readonly status: SmsStatus
  readonly segments: number
  readonly sent_by_id: number | null
  readonly activity_id: number | null
  readonly created_at: Date
}

export interface CallRow {
  readonly id: number
  readonly patient_id: number | null
  readonly direction: Direction
  readonly telephony_sid: string | null
  readonly to_number: string
  readonly from_number: string
  readonly status: CallStatus
  readonly forwarded_to: string | null
  readonly placed_by_id: number | null
  readonly activity_id: number | null
  readonly created_at: Date
}

export const smsRecordOf = (row: SmsRow) =>
  SmsRecord.make({
    id: row.id,
    telephony_sid: row.telephony_sid,
    to: row.to_number,
    from: row.from_number,
    body: row.body,
    status: row.status,
    direction: row.direction,
    segments: row.segments,
    created_at: row.created_at
  }, true)

export const callRecordOf = (row: CallRow) =>
  CallRecord.make({
    id: row.id,
    telephony_sid: row.telephony_sid,
    to: row.to_number,
    from: row.from_number,
    status: row.status,
    direction: row.direction,
    created_at: row.created_at
  }, true)

export const communicationActivityOf = (activity: StoredActivity) =>
  CommunicationActivity.make({
    id: activity.id,
    activity_type: activity.activity_type,
    status: activity.status,
    patient_id: activity.patient_id,
    performed_by_id: activity.performed_by_id,
    assigned_to_id: activity.assigned_to_id
  }, true)

/** An activity a communication records: what differs from one to another. */
export interface CommunicationActivityValues {
  readonly patient_id: number
  readonly activity_type: ActivityType
  readonly status: ActivityStatus
  readonly subject: string | null
  readonly body: string | null
  readonly message: string | null
  readonly occurred_at: Date
  readonly performed_by_id: number
  readonly assigned_to_id: number
  readonly text_message_id: number | null
  readonly voice_call_id: number | null
}

export class CommunicationsRepo extends Effect.Service<CommunicationsRepo>()("app/EcmCommunicationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const activities = yield* ActivitiesRepo
    const events = yield* EventGenerator

    /** The system account's id, looked up once (created at start-up: sql/0031_system_account.sql). */
    const systemUserId = yield* Effect.cached(
      Effect.map(sql<{ id: number }>`SELECT id FROM users WHERE system`, (rows) => rows[0]?.id).pipe(
        Effect.flatMap((id) => (id === undefined ? Effect.dieMessage("the system account is missing (created at start-up)") : Effect.succeed(id))),
        Effect.orDie
      )
    )

    const patientPhone = (patientId: number) =>
      Effect.map(
        sql<{ phone: string | null }>`SELECT phone FROM patients WHERE id = ${patientId}`,
        (rows) => (rows.length === 0 ? undefined : { phone: rows[0]!.phone })
      ).pipe(Effect.orDie)

    /**
     * The patient a number belongs to: active patients first, then the oldest record. Several
     * members of one household may share a phone; docs/spec-decisions.md ("ECM communications") says why this one.
     */
    const patientByPhone = (phone: string) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM patients WHERE phone = ${phone} ORDER BY active DESC, id LIMIT 1`,
        (rows) => rows[0]?.id
      ).pipe(Effect.orDie)

    /**
     * Who handles the patient's inbound communications: the intensive lead care manager, else the
     * outreach one (case_loads), when they are active staff; with their phone for forwarding calls.
     * Reads the case load as `LeadCareManagers.assigneesOf` does, then ranks and filters the holders.
     */
    const leadCareManagerOf = (patientId: number) =>
      Effect.map(
        sql<{ id: number; phone: string | null }>`
          SELECT u.id, u.phone FROM case_loads c
          JOIN LATERAL (VALUES (1, c.ilcm_user_id), (2, c.olcm_user_id)) AS lcm (rank, user_id) ON lcm.user_id IS NOT NULL
          JOIN users u ON u.id = lcm.user_id AND u.role <> 'parent' AND u.status = 'active' AND u.deleted_at IS NULL
          WHERE c.patient_id = ${patientId}
          ORDER BY lcm.rank LIMIT 1`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const userPhone = (userId: number) =>
      Effect.map(sql<{ phone: string | null; first_name: string }>`SELECT phone, first_name FROM users WHERE id = ${userId}`, (rows) => rows[0])
        .pipe(Effect.orDie)

    const isOptedOut = (numbers: ReadonlyArray<string>) =>
      Effect.map(
        sql`SELECT 1 FROM sms_opt_outs WHERE phone_number IN ${sql.in(numbers)} LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    const optOut = (phone: string, smsId: number, now: Date) =>
      sql`INSERT INTO sms_opt_outs (phone_number, sms_message_id, created_at) VALUES (${phone}, ${smsId}, ${now})
        ON CONFLICT (phone_number) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    const optIn = (phone: string) => sql`DELETE FROM sms_opt_outs WHERE phone_number = ${phone}`.pipe(Effect.asVoid, Effect.orDie)

    const insertOutboundSms = (values: {
      patientId: number
      to: string
      from: string
      body: string
      segments: number
      sentById: number
      now: Date
    }) =>
      Effect.map(
        sql<SmsRow>`INSERT INTO sms_messages (patient_id, direction, to_number, from_number, body, status, segments, sent_by_id,
            created_at, updated_at)
          VALUES (${values.patientId}, 'outbound', ${values.to}, ${values.from}, ${values.body}, 'queued', ${values.segments},
            ${values.sentById}, ${values.now}, ${values.now})
          RETURNING *`,
        (rows) => rows[0]!
      ).pipe(Effect.orDie)

    const insertOutboundCall = (values: { patientId: number; to: string; from: string; placedById: number; now: Date }) =>
      Effect.map(
        sql<CallRow>`INSERT INTO voice_calls (patient_id, direction, to_number, from_number, status, placed_by_id, created_at, updated_at)
          VALUES (${values.patientId}, 'outbound', ${values.to}, ${values.from}, 'queued', ${values.placedById}, ${values.now}, ${values.now})
          RETURNING *`,
        (rows) => rows[0]!
      ).pipe(Effect.orDie)

    /** A refused send: the record stays, failed, with the provider's reason. */
    const markFailed = (table: "sms_messages" | "voice_calls", id: number, reason: string, now: Date) =>
      sql`UPDATE ${sql(table)} SET status = 'failed', error_message = ${reason}, updated_at = ${now} WHERE id = ${id}`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Inbound: the record, unless the provider already delivered this SID (then undefined). */
    const insertInboundSms = (values: {
      sid: string
      patientId: number | null
      to: string
      from: string
      body: string
      mediaUrls: ReadonlyArray<string>
      segments: number
      now: Date
    }) =>
      Effect.map(
        sql<SmsRow>`INSERT INTO sms_messages (patient_id, direction, telephony_sid, to_number, from_number, body, media_urls, status,
            segments, created_at, updated_at)
          VALUES (${values.patientId}, 'inbound', ${values.sid}, ${values.to}, ${values.from}, ${values.body},
            ${textArray(values.mediaUrls)}::text[], 'received', ${values.segments}, ${values.now}, ${values.now})
          ON CONFLICT (telephony_sid) DO NOTHING
          RETURNING *`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const insertInboundCall = (values: {
      sid: string
      patientId: number | null
      to: string
      from: string
      status: CallStatus
      forwardedTo: string | null
      now: Date
    }) =>
      Effect.map(
        sql<CallRow>`INSERT INTO voice_calls (patient_id, direction, telephony_sid, to_number, from_number, status, forwarded_to,
            created_at, updated_at)
          VALUES (${values.patientId}, 'inbound', ${values.sid}, ${values.to}, ${values.from}, ${values.status},
            ${values.forwardedTo}, ${values.now}, ${values.now})
          ON CONFLICT (telephony_sid) DO NOTHING
          RETURNING *`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const smsBySid = (sid: string) =>
      Effect.map(sql<SmsRow>`SELECT * FROM sms_messages WHERE telephony_sid = ${sid}`, (rows) => rows[0]).pipe(Effect.orDie)

    const callBySid = (sid: string) =>
      Effect.map(sql<CallRow>`SELECT * FROM voice_calls WHERE telephony_sid = ${sid}`, (rows) => rows[0]).pipe(Effect.orDie)

    /** The row a callback is about, locked for the rest of the transaction: by our id (in the URL) or the SID. */
    const lockSms = (id: number | undefined, sid: string) =>
      Effect.map(
        id === undefined
          ? sql<SmsRow>`SELECT * FROM sms_messages WHERE telephony_sid = ${sid} FOR UPDATE`
          : sql<SmsRow>`SELECT * FROM sms_messages WHERE id = ${id} AND (telephony_sid = ${sid} OR telephony_sid IS NULL) FOR UPDATE`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const lockCall = (id: number | undefined, sid: string) =>
      Effect.map(
        id === undefined
          ? sql<CallRow>`SELECT * FROM voice_calls WHERE telephony_sid = ${sid} FOR UPDATE`
          : sql<CallRow>`SELECT * FROM voice_calls WHERE id = ${id} AND (telephony_sid = ${sid} OR telephony_sid IS NULL) FOR UPDATE`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    /**
     * Records the provider's SID (once), status and error on a row the caller holds locked; a
     * write that changes nothing is not made (`updated_at` stays: a repeated webhook changes nothing).
     */
    const setProviderState = (
      table: "sms_messages" | "voice_calls",
      id: number,
      state: { sid?: string; status?: string; errorCode?: string | undefined; errorMessage?: string | undefined },
      now: Date
    ) =>
      sql`UPDATE ${sql(table)} SET
          telephony_sid = coalesce(telephony_sid, ${state.sid ?? null}),
          status = coalesce(${state.status ?? null}, status),
          error_code = coalesce(${state.errorCode ?? null}, error_code),
          error_message = coalesce(${state.errorMessage ?? null}, error_message),
          updated_at = ${now}
        WHERE id = ${id} AND (telephony_sid, status, error_code, error_message) IS DISTINCT FROM
          (coalesce(telephony_sid, ${state.sid ?? null}), coalesce(${state.status ?? null}, status),
           coalesce(${state.errorCode ?? null}, error_code), coalesce(${state.errorMessage ?? null}, error_message))`
        .pipe(Effect.asVoid, Effect.orDie)

    const setCallDetails = (id: number, details: { durationSeconds?: number; recordingUrl?: string; transcript?: string }, now: Date) =>
      sql`UPDATE voice_calls SET
          duration_seconds = coalesce(${details.durationSeconds ?? null}, duration_seconds),
          recording_url = coalesce(${details.recordingUrl ?? null}, recording_url),
          transcript = coalesce(${details.transcript ?? null}, transcript),
          updated_at = ${now}
        WHERE id = ${id} AND (duration_seconds, recording_url, transcript) IS DISTINCT FROM
          (coalesce(${details.durationSeconds ?? null}, duration_seconds), coalesce(${details.recordingUrl ?? null}, recording_url),
           coalesce(${details.transcript ?? null}, transcript))`.pipe(Effect.asVoid, Effect.orDie)

    const linkActivity = (table: "sms_messages" | "voice_calls", id: number, activityId: number) =>
      sql`UPDATE ${sql(table)} SET activity_id = ${activityId} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /** Inserts an activity of a communication and its event (in the caller's transaction). */
    const recordActivity = (values: CommunicationActivityValues, now: Date) =>
      Effect.gen(function*() {
        const row: ActivityValues = {
          ...values,
          booked_at: null,
          email_to: null,
          email_attachments: [],
          duration: null,
          parent_id: null,
          blocked_by_id: null
        }
        const stored = yield* activities.insert(row, now)
        yield* events.sync(stored)
        return stored
      })

    const findActivity = (id: number) =>
      Effect.map(
        sql<StoredActivity>`SELECT a.*, NULL::integer AS blocking_id FROM ecm_activities a WHERE a.id = ${id}`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    /** Changes an activity's status, duration or transcript and keeps its event in step. */
    const updateActivity = (
      id: number,
      changes: { status?: ActivityStatus; duration?: number; transcript?: string },
      now: Date
    ) =>
      Effect.gen(function*() {
        const [row] = yield* sql<StoredActivity>`UPDATE ecm_activities SET
            status = coalesce(${changes.status ?? null}, status),
            duration = coalesce(${changes.duration ?? null}, duration),
            transcript = coalesce(${changes.transcript ?? null}, transcript),
            updated_at = ${now}
          WHERE id = ${id} AND (status, duration, transcript) IS DISTINCT FROM
            (coalesce(${changes.status ?? null}, status), coalesce(${changes.duration ?? null}, duration),
             coalesce(${changes.transcript ?? null}, transcript))
          RETURNING *, NULL::integer AS blocking_id`
        if (row !== undefined) yield* events.sync(row)
        return row
      }).pipe(Effect.orDie)

    /** A follow-up task for a failed communication, at most one per record. */
    const claimFollowUp = (activityId: number, record: { sms: number } | { call: number }) =>
      Effect.map(
        sql`INSERT INTO communication_follow_ups (activity_id, sms_message_id, voice_call_id)
          VALUES (${activityId}, ${"sms" in record ? record.sms : null}, ${"call" in record ? record.call : null})
          ON CONFLICT DO NOTHING RETURNING activity_id`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    const unmatchedSms = (page: PageRequest) =>
      Effect.gen(function*() {
        const rows = yield* sql<SmsRow>`SELECT * FROM sms_messages WHERE patient_id IS NULL
          ORDER BY created_at DESC, id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM sms_messages WHERE patient_id IS NULL`
        return {
          items: rows.map((row) =>
            UnmatchedSms.make({
              id: row.id,
              telephony_sid: row.telephony_sid,
              from: row.from_number,
              to: row.to_number,
              body: row.body,
              media_urls: row.media_urls,
              status: row.status,
              created_at: row.created_at
            }, true)
          ),
          totalCount: counted?.count ?? 0
        }
      }).pipe(Effect.orDie)

    return {
      systemUserId, patientPhone, patientByPhone, leadCareManagerOf, userPhone, isOptedOut, optOut, optIn,
      insertOutboundSms, insertOutboundCall, markFailed, insertInboundSms, insertInboundCall, smsBySid, callBySid,
      lockSms, lockCall, setProviderState, setCallDetails, linkActivity, recordActivity, findActivity, updateActivity,
      claimFollowUp, unmatchedSms
    } as const
  }),
  dependencies: [ActivitiesRepo.Default, EventGenerator.Default]
}) {}
