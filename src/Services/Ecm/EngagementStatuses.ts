/**
 * ECM engagement status: record a validated change in `ecm_status_histories` (possibly late, in
 * the past), read the history, and the outreach hook the EventGenerator runs. Every write holds
 * the patient's engagement lock (a transaction-scoped advisory lock), so the history a change is
 * checked against cannot move before the change is written.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { EngagementStatusRequest } from "../../Api/Ecm/EngagementStatus.js"
import { StatusHistoryEntry } from "../../Api/Ecm/Patients.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { awaitingOutreach, type HistoryEntry, outreachInProgress, placementOf } from "../../Domain/Ecm/Engagement.js"
import { contactOf } from "../../Domain/Ecm/Prtf.js"
import { AuditLog } from "../AuditLog.js"

const entryColumns = `id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source, reason, actor_id, created_at,
  replaced_status, to_char(replaced_effective_date, 'YYYY-MM-DD') AS replaced_effective_date`

/** Newest first: the status on a day is the latest effective date, then the latest written. */
const newestFirst = "ORDER BY effective_date DESC, id DESC"

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The patient's engagement lock, until the transaction ends. */
const lockEngagement = (patientId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_advisory_xact_lock(hashtext('ecm_status_histories'), ${patientId})`)

export interface OutreachEvent {
  readonly event_type: EventType
  readonly status: EventStatus
  readonly duration: number | null
  readonly occurred_at: Date
}

/**
 * The hook of docs/prtf.md "Automatic moves": an outreach attempt (what `contactOf` calls one for
 * the member's current status) moves a member whose current status is `new_member` or
 * `pending_outreach` to `outreach_in_progress`, effective the day of the
 * attempt (never before the current entry, never after today). Runs inside the transaction that
 * writes the event, so the activity, its event and the move commit together.
 */
export const advanceOnOutreach = (patientId: number, activityId: number, actorId: number | null, event: OutreachEvent) =>
  Effect.gen(function*() {
    // The statuses this event moves on from: those for which the rule calls it an outreach attempt.
    const from = awaitingOutreach.filter((status) => contactOf(event, status)?.kind === "outreach")
    if (from.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const nowMs = yield* Clock.currentTimeMillis
    const now = new Date(nowMs)
    const day = utcDay(Math.min(event.occurred_at.getTime(), nowMs))
    yield* lockEngagement(patientId)
    yield* sql`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source, reason, actor_id, created_at, updated_at,
        replaced_id, replaced_status, replaced_effective_date)
      SELECT ${patientId}, ${outreachInProgress}, greatest(${day}::date, current.effective_date), 'system',
        ${`Outreach attempt recorded (activity ${activityId})`}, ${actorId}, ${now}, ${now},
        current.id, current.status, current.effective_date
      FROM (SELECT id, status, effective_date FROM ecm_status_histories WHERE patient_id = ${patientId}
            ${sql.literal(newestFirst)} LIMIT 1) current
      WHERE current.status IN ${sql.in(from)}`
  }).pipe(Effect.orDie, Effect.withSpan("EngagementStatuses.advanceOnOutreach", { attributes: { "patient.id": patientId } }))

export class EngagementStatuses extends Effect.Service<EngagementStatuses>()("app/EcmEngagementStatuses", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    /** ECM patients are those with an eligibility record (as the admin ECM patient detail). */
    const requireEcmPatient = (patientId: number) =>
      Effect.flatMap(
        sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM ecm_eligibility_informations WHERE patient_id = ${patientId}) AS found`,
        ([row]) => (row?.found === true ? Effect.void : Effect.fail(ecmNotFound("Patient")))
      )

    const entries = (patientId: number) =>
      Effect.map(
        sql<StatusHistoryEntry>`SELECT ${sql.literal(entryColumns)} FROM ecm_status_histories
          WHERE patient_id = ${patientId} ${sql.literal(newestFirst)}`,
        (rows) => rows.map((row) => StatusHistoryEntry.make(row, true))
      )

    const update = (callerId: number, patientId: number, change: EngagementStatusRequest) =>
      Effect.gen(function*() {
        yield* lockEngagement(patientId)
        yield* requireEcmPatient(patientId)
        const history = yield* sql<HistoryEntry>`SELECT id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source
          FROM ecm_status_histories WHERE patient_id = ${patientId} ORDER BY effective_date, id`
        const nowMs = yield* Clock.currentTimeMillis
        const reason = change.reason === undefined || change.reason === null || change.reason.trim() === "" ? null : change.reason.trim()
        const { problems, replaced, withdrawn } = placementOf(history, { status: change.status, effective_date: change.effective_date, reason }, utcDay(nowMs))
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        const now = new Date(nowMs)
        const [entry] = yield* sql<StatusHistoryEntry>`INSERT INTO ecm_status_histories
            (patient_id, status, effective_date, source, reason, actor_id, created_at, updated_at, replaced_id, replaced_status, replaced_effective_date)
          VALUES (${patientId}, ${change.status}, ${change.effective_date}::date, 'user', ${reason}, ${callerId}, ${now}, ${now},
            ${replaced?.id ?? null}, ${replaced?.status ?? null}, ${replaced?.effective_date ?? null}::date)
          RETURNING ${sql.literal(entryColumns)}`
        if (withdrawn.length > 0) {
          // Kept as they were, with the entry that withdrew them, then removed from the history.
          const ids = withdrawn.map((e) => e.id)
          yield* sql`INSERT INTO ecm_status_history_withdrawals (entry_id, patient_id, status, effective_date, source, reason,
              actor_id, entered_at, withdrawn_by_entry_id, withdrawn_by_actor_id, withdrawn_at)
            SELECT id, patient_id, status, effective_date, source, reason, actor_id, created_at, ${entry!.id}, ${callerId}, ${now}
            FROM ecm_status_histories WHERE patient_id = ${patientId} AND id IN ${sql.in(ids)}`
          yield* sql`DELETE FROM ecm_status_histories WHERE patient_id = ${patientId} AND id IN ${sql.in(ids)}`
          yield* audit.recordMany(ids.map((id) => ({
            actorId: callerId, action: "ecm_status_history.withdraw", targetType: "ecm_status_history", targetId: id
          })))
        }
        yield* audit.record({ actorId: callerId, action: "ecm_status_history.create", targetType: "ecm_status_history", targetId: entry!.id })
        return StatusHistoryEntry.make(entry!, true)
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("EngagementStatuses.update", { attributes: { "patient.id": patientId } })
      )

    const show = (patientId: number) =>
      Effect.gen(function*() {
        yield* requireEcmPatient(patientId)
        const history = yield* entries(patientId)
        return { patient_id: patientId, engagement_status: history[0] ?? null, status_histories: history }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("EngagementStatuses.show", { attributes: { "patient.id": patientId } }))

    return { update, show } as const
  })
}) {}
