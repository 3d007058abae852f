/**
 * SQL of ECM communications: the `sms_messages` and `voice_calls` records, opt-outs, patient and
 * lead care manager lookups, and the activities and events communications create (through
 * `ActivitiesRepo.insert` and the `EventGenerator`, like every other activity). Callers compose
 * these inside their transactions. Rows are decoded with schemas; SQL errors are defects here.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { CallRecord, CommunicationActivity, SmsRecord, UnmatchedSms } from "../../Api/Ecm/Communications.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { ActivityStatus, type ActivityType } from "../../Domain/Ecm/Activity.js"
import { CallStatus, Direction, SmsStatus } from "../../Domain/Ecm/Communication.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { ActivitiesRepo, type ActivityValues, StoredActivity } from "./ActivitiesRepo.js"
import { EventGenerator } from "./EventGenerator.js"
import { textArray } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)
const NullId = Schema.NullOr(Schema.Int)

/** An `sms_messages` row (the columns the service reads). */
export const SmsRow = Schema.Struct({
  id: Schema.Int,
  patient_id: NullId,
  direction: Direction,
  telephony_sid: NullText,
  to_number: Schema.String,
  from_number: Schema.String,
  body: Schema.String,
  media_urls: Schema.Array(Schema.String),
  status: SmsStatus,
  segments: Schema.Int,
  sent_by_id: NullId,
  activity_id: NullId,
  created_at: Schema.DateFromSelf
})
export type SmsRow = typeof SmsRow.Type

/** A `voice_calls` row (the columns the service reads). */
export const CallRow = Schema.Struct({
  id: Schema.Int,
  patient_id: NullId,
  direction: Direction,
  telephony_sid: NullText,
  to_number: Schema.String,
  from_number: Schema.String,
  status: CallStatus,
  forwarded_to: NullText,
  placed_by_id: NullId,
  activity_id: NullId,
  created_at: Schema.DateFromSelf
})
export type CallRow = typeof CallRow.Type

/** An outbound message before it is sent (status `queued`). */
const OutboundSms = Schema.Struct({
  patientId: Schema.Int,
  to: Schema.String,
  from: Schema.String,
  body: Schema.String,
  segments: Schema.Int,
  sentById: Schema.Int,
  now: Schema.DateFromSelf
})
type OutboundSms = typeof OutboundSms.Type

/** An outbound call before it is placed (status `queued`). */
const OutboundCall = Schema.Struct({
  patientId: Schema.Int,
  to: Schema.String,
  from: Schema.String,
  placedById: Schema.Int,
  now: Schema.DateFromSelf
})
type OutboundCall = typeof OutboundCall.Type

/** An inbound message as the provider delivered it (status `received`). */
const InboundSms = Schema.Struct({
  sid: Schema.String,
  patientId: NullId,
  to: Schema.String,
  from: Schema.String,
  body: Schema.String,
  mediaUrls: Schema.Array(Schema.String),
  segments: Schema.Int,
  now: Schema.DateFromSelf
})
type InboundSms = typeof InboundSms.Type

/** An inbound call as the provider announced it. */
const InboundCall = Schema.Struct({
  sid: Schema.String,
  patientId: NullId,
  to: Schema.String,
  from: Schema.String,
  status: CallStatus,
  forwardedTo: NullText,
  now: Schema.DateFromSelf
})
type InboundCall = typeof InboundCall.Type

const Id = Schema.Struct({ id: Schema.Int })
const Phone = Schema.Struct({ phone: NullText })

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
    const listPage = yield* makeListPage
    const activities = yield* ActivitiesRepo
    const events = yield* EventGenerator

    const systemUser = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Id,
      execute: () => sql`SELECT id FROM users WHERE system`
    })

    /** The system account's id, looked up once (created at start-up: sql/0031_system_account.sql). */
    const systemUserId = yield* Effect.cached(
      systemUser(undefined).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.dieMessage("the system account is missing (created at start-up)"),
          onSome: (row) => Effect.succeed(row.id)
        })),
        orDefect
      )
    )

    const patientPhoneRow = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Phone,
      execute: (patientId) => sql`SELECT phone FROM patients WHERE id = ${patientId}`
    })

    const patientPhone = (patientId: number) => Effect.map(patientPhoneRow(patientId), Option.getOrUndefined).pipe(orDefect)

    const patientByPhoneRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Id,
      execute: (phone) => sql`SELECT id FROM patients WHERE phone = ${phone} ORDER BY active DESC, id LIMIT 1`
    })

    /**
     * The patient a number belongs to: active patients first, then the oldest record. Several
     * members of one household may share a phone; docs/spec-decisions.md ("ECM communications") says why this one.
     */
    const patientByPhone = (phone: string) =>
      Effect.map(patientByPhoneRow(phone), (row) => Option.getOrUndefined(Option.map(row, ({ id }) => id))).pipe(orDefect)

    const leadCareManager = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int, phone: NullText }),
      execute: (patientId) =>
        sql`SELECT u.id, u.phone FROM case_loads c
          JOIN LATERAL (VALUES (1, c.ilcm_user_id), (2, c.olcm_user_id)) AS lcm (rank, user_id) ON lcm.user_id IS NOT NULL
          JOIN users u ON u.id = lcm.user_id AND u.role <> 'parent' AND u.status = 'active' AND u.deleted_at IS NULL
          WHERE c.patient_id = ${patientId}
          ORDER BY lcm.rank LIMIT 1`
    })

    /**
     * Who handles the patient's inbound communications: the intensive lead care manager, else the
     * outreach one (case_loads), when they are active staff; with their phone for forwarding calls.
     * Reads the case load as `LeadCareManagers.assigneesOf` does, then ranks and filters the holders.
     */
    const leadCareManagerOf = (patientId: number) => Effect.map(leadCareManager(patientId), Option.getOrUndefined).pipe(orDefect)

    const userPhoneRow = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ phone: NullText, first_name: Schema.String }),
      execute: (userId) => sql`SELECT phone, first_name FROM users WHERE id = ${userId}`
    })

    const userPhone = (userId: number) => Effect.map(userPhoneRow(userId), Option.getOrUndefined).pipe(orDefect)

    const isOptedOut = (numbers: ReadonlyArray<string>) =>
      Effect.map(
        sql`SELECT 1 FROM sms_opt_outs WHERE phone_number IN ${sql.in(numbers)} LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(orDefect)

    const optOut = (phone: string, smsId: number, now: Date) =>
      sql`INSERT INTO sms_opt_outs (phone_number, sms_message_id, created_at) VALUES (${phone}, ${smsId}, ${now})
        ON CONFLICT (phone_number) DO NOTHING`.pipe(Effect.asVoid, orDefect)

    const optIn = (phone: string) => sql`DELETE FROM sms_opt_outs WHERE phone_number = ${phone}`.pipe(Effect.asVoid, orDefect)

    const outboundSms = SqlSchema.single({
      Request: OutboundSms,
      Result: SmsRow,
      execute: (values) =>
        sql`INSERT INTO sms_messages (patient_id, direction, to_number, from_number, body, status, segments, sent_by_id,
            created_at, updated_at)
          VALUES (${values.patientId}, 'outbound', ${values.to}, ${values.from}, ${values.body}, 'queued', ${values.segments},
            ${values.sentById}, ${values.now}, ${values.now})
          RETURNING *`
    })

    const insertOutboundSms = (values: OutboundSms) =>
      orDefect(outboundSms(values))

    const outboundCall = SqlSchema.single({
      Request: OutboundCall,
      Result: CallRow,
      execute: (values) =>
        sql`INSERT INTO voice_calls (patient_id, direction, to_number, from_number, status, placed_by_id, created_at, updated_at)
          VALUES (${values.patientId}, 'outbound', ${values.to}, ${values.from}, 'queued', ${values.placedById}, ${values.now}, ${values.now})
          RETURNING *`
    })

    const insertOutboundCall = (values: OutboundCall) =>
      orDefect(outboundCall(values))

    /** A refused send: the record stays, failed, with the provider's reason. */
    const markFailed = (table: "sms_messages" | "voice_calls", id: number, reason: string, now: Date) =>
      sql`UPDATE ${sql(table)} SET status = 'failed', error_message = ${reason}, updated_at = ${now} WHERE id = ${id}`
        .pipe(Effect.asVoid, orDefect)

    const inboundSms = SqlSchema.findOne({
      Request: InboundSms,
      Result: SmsRow,
      execute: (values) =>
        sql`INSERT INTO sms_messages (patient_id, direction, telephony_sid, to_number, from_number, body, media_urls, status,
            segments, created_at, updated_at)
          VALUES (${values.patientId}, 'inbound', ${values.sid}, ${values.to}, ${values.from}, ${values.body},
            ${textArray(values.mediaUrls)}::text[], 'received', ${values.segments}, ${values.now}, ${values.now})
          ON CONFLICT (telephony_sid) DO NOTHING
          RETURNING *`
    })

    /** Inbound: the record, unless the provider already delivered this SID (then undefined). */
    const insertInboundSms = (values: InboundSms) =>
      Effect.map(inboundSms(values), Option.getOrUndefined).pipe(orDefect)

    const inboundCall = SqlSchema.findOne({
      Request: InboundCall,
      Result: CallRow,
      execute: (values) =>
        sql`INSERT INTO voice_calls (patient_id, direction, telephony_sid, to_number, from_number, status, forwarded_to,
            created_at, updated_at)
          VALUES (${values.patientId}, 'inbound', ${values.sid}, ${values.to}, ${values.from}, ${values.status},
            ${values.forwardedTo}, ${values.now}, ${values.now})
          ON CONFLICT (telephony_sid) DO NOTHING
          RETURNING *`
    })

    const insertInboundCall = (values: InboundCall) =>
      Effect.map(inboundCall(values), Option.getOrUndefined).pipe(orDefect)

    const smsBySidRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: SmsRow,
      execute: (sid) => sql`SELECT * FROM sms_messages WHERE telephony_sid = ${sid}`
    })

    const smsBySid = (sid: string) => Effect.map(smsBySidRow(sid), Option.getOrUndefined).pipe(orDefect)

    const callBySidRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: CallRow,
      execute: (sid) => sql`SELECT * FROM voice_calls WHERE telephony_sid = ${sid}`
    })

    const callBySid = (sid: string) => Effect.map(callBySidRow(sid), Option.getOrUndefined).pipe(orDefect)

    /** A callback's row: by our id (in the URL) or the SID. */
    const CallbackKey = Schema.Struct({ id: Schema.optional(Schema.Int), sid: Schema.String })

    /**
     * The row of `table` a callback is about, locked for the rest of the transaction: by our id (in
     * the URL) when the callback names it, else by the SID.
     */
    const lockedByCallback = <A, I>(table: "sms_messages" | "voice_calls", row: Schema.Schema<A, I>) => {
      const locked = SqlSchema.findOne({
        Request: CallbackKey,
        Result: row,
        execute: ({ id, sid }) =>
          id === undefined
            ? sql`SELECT * FROM ${sql(table)} WHERE telephony_sid = ${sid} FOR UPDATE`
            : sql`SELECT * FROM ${sql(table)} WHERE id = ${id} AND (telephony_sid = ${sid} OR telephony_sid IS NULL) FOR UPDATE`
      })
      return (id: number | undefined, sid: string) =>
        Effect.map(locked(id === undefined ? { sid } : { id, sid }), Option.getOrUndefined).pipe(orDefect)
    }
    const lockSms = lockedByCallback("sms_messages", SmsRow)
    const lockCall = lockedByCallback("voice_calls", CallRow)

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
        .pipe(Effect.asVoid, orDefect)

    const setCallDetails = (id: number, details: { durationSeconds?: number; recordingUrl?: string; transcript?: string }, now: Date) =>
      sql`UPDATE voice_calls SET
          duration_seconds = coalesce(${details.durationSeconds ?? null}, duration_seconds),
          recording_url = coalesce(${details.recordingUrl ?? null}, recording_url),
          transcript = coalesce(${details.transcript ?? null}, transcript),
          updated_at = ${now}
        WHERE id = ${id} AND (duration_seconds, recording_url, transcript) IS DISTINCT FROM
          (coalesce(${details.durationSeconds ?? null}, duration_seconds), coalesce(${details.recordingUrl ?? null}, recording_url),
           coalesce(${details.transcript ?? null}, transcript))`.pipe(Effect.asVoid, orDefect)

    const linkActivity = (table: "sms_messages" | "voice_calls", id: number, activityId: number) =>
      sql`UPDATE ${sql(table)} SET activity_id = ${activityId} WHERE id = ${id}`.pipe(Effect.asVoid, orDefect)

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

    const activityRow = SqlSchema.findOne({
      Request: Schema.Int,
      Result: StoredActivity,
      execute: (id) => sql`SELECT a.*, NULL::integer AS blocking_id FROM ecm_activities a WHERE a.id = ${id}`
    })

    const findActivity = (id: number) => Effect.map(activityRow(id), Option.getOrUndefined).pipe(orDefect)

    const changedActivity = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.Int,
        status: Schema.NullOr(ActivityStatus),
        duration: NullId,
        transcript: NullText,
        now: Schema.DateFromSelf
      }),
      Result: StoredActivity,
      execute: (c) =>
        sql`UPDATE ecm_activities SET
            status = coalesce(${c.status}, status),
            duration = coalesce(${c.duration}, duration),
            transcript = coalesce(${c.transcript}, transcript),
            updated_at = ${c.now}
          WHERE id = ${c.id} AND (status, duration, transcript) IS DISTINCT FROM
            (coalesce(${c.status}, status), coalesce(${c.duration}, duration), coalesce(${c.transcript}, transcript))
          RETURNING *, NULL::integer AS blocking_id`
    })

    /** Changes an activity's status, duration or transcript and keeps its event in step. */
    const updateActivity = (
      id: number,
      changes: { status?: ActivityStatus; duration?: number; transcript?: string },
      now: Date
    ) =>
      Effect.gen(function*() {
        const row = yield* changedActivity({
          id,
          status: changes.status ?? null,
          duration: changes.duration ?? null,
          transcript: changes.transcript ?? null,
          now
        })
        if (Option.isSome(row)) yield* events.sync(row.value)
        return Option.getOrUndefined(row)
      }).pipe(orDefect)

    /** A follow-up task for a failed communication, at most one per record. */
    const claimFollowUp = (activityId: number, record: { sms: number } | { call: number }) =>
      Effect.map(
        sql`INSERT INTO communication_follow_ups (activity_id, sms_message_id, voice_call_id)
          VALUES (${activityId}, ${"sms" in record ? record.sms : null}, ${"call" in record ? record.call : null})
          ON CONFLICT DO NOTHING RETURNING activity_id`,
        (rows) => rows.length > 0
      ).pipe(orDefect)

    /** Inbound messages no patient's phone matched, newest first, in the §4.3 representation. */
    const unmatchedSms = (page: PageRequest) =>
      Effect.map(
        listPage({
          select: sql`*`,
          from: sql`sms_messages`,
          row: SmsRow,
          filters: [sql`patient_id IS NULL`],
          sort: { columns: { created_at: sql`created_at` }, by: "created_at", dir: "DESC", id: sql`id` }
        }, page),
        ({ pagination, rows }) => ({
          rows: rows.map((row) =>
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
          pagination
        })
      )

    return {
      systemUserId, patientPhone, patientByPhone, leadCareManagerOf, userPhone, isOptedOut, optOut, optIn,
      insertOutboundSms, insertOutboundCall, markFailed, insertInboundSms, insertInboundCall, smsBySid, callBySid,
      lockSms, lockCall, setProviderState, setCallDetails, linkActivity, recordActivity, findActivity, updateActivity,
      claimFollowUp, unmatchedSms
    } as const
  }),
  dependencies: [ActivitiesRepo.Default, EventGenerator.Default]
}) {}
