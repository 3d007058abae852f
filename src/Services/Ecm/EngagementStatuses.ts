/**
 * ECM engagement status: record a validated change in the member's history (possibly late, in
 * the past), read the history, and the outreach hook the EventGenerator runs. Every write holds
 * the patient's engagement lock (`StatusHistoriesRepo.lock`), so the history a change is checked
 * against cannot move before the change is written.
 */
import { Effect } from "effect"
import type { EngagementStatusRequest } from "../../Api/Ecm/EngagementStatus.js"
import { StatusHistoryEntry } from "../../Api/Ecm/Patients.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { EventStatus, EventType } from "../../Domain/Ecm/Activity.js"
import { awaitingOutreach, outreachInProgress, placementOf } from "../../Domain/Ecm/Engagement.js"
import { contactOf } from "../../Domain/Ecm/Prtf.js"
import { AuditLog } from "../AuditLog.js"
import { makeTransaction } from "../Repository.js"
import { annotatedOutside } from "../Spans.js"
import { now, nowMillis } from "../Time.js"
import { type EntryRow, StatusHistoriesRepo } from "./StatusHistoriesRepo.js"

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const entryOf = (row: EntryRow) => StatusHistoryEntry.make(row, true)

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
export const advanceOnOutreach = Effect.fn("EngagementStatuses.advanceOnOutreach")(function*(
  histories: StatusHistoriesRepo,
  patientId: number,
  activityId: number,
  actorId: number | null,
  event: OutreachEvent
) {
  yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
  // The statuses this event moves on from: those for which the rule calls it an outreach attempt.
  const from = awaitingOutreach.filter((status) => contactOf(event, status)?.kind === "outreach")
  if (from.length === 0) return
  const nowMs = yield* nowMillis
  yield* histories.lock(patientId)
  yield* histories.advance({
    patientId,
    from,
    status: outreachInProgress,
    day: utcDay(Math.min(event.occurred_at.getTime(), nowMs)),
    reason: `Outreach attempt recorded (activity ${activityId})`,
    actorId,
    at: new Date(nowMs)
  })
})

export class EngagementStatuses extends Effect.Service<EngagementStatuses>()("app/EcmEngagementStatuses", {
  effect: Effect.gen(function*() {
    const histories = yield* StatusHistoriesRepo
    const audit = yield* AuditLog
    const transaction = yield* makeTransaction

    /** ECM patients are those with an eligibility record (as the admin ECM patient detail). */
    const requireEcmPatient = (patientId: number) =>
      Effect.flatMap(histories.isEcmPatient(patientId), (found) => (found ? Effect.void : Effect.fail(ecmNotFound("Patient"))))

    const update = Effect.fn("EngagementStatuses.update")(
      function*(callerId: number, patientId: number, change: EngagementStatusRequest) {
        yield* histories.lock(patientId)
        yield* requireEcmPatient(patientId)
        const history = yield* histories.history(patientId)
        const at = yield* now
        const reason = change.reason === undefined || change.reason === null || change.reason.trim() === "" ? null : change.reason.trim()
        const { problems, replaced, withdrawn } = placementOf(history, { status: change.status, effective_date: change.effective_date, reason }, utcDay(at.getTime()))
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        const entry = yield* histories.insert({
          patientId,
          status: change.status,
          effectiveDate: change.effective_date,
          reason,
          actorId: callerId,
          at,
          replaced: replaced ?? null
        })
        if (withdrawn.length > 0) {
          const ids = withdrawn.map((e) => e.id)
          yield* histories.withdraw({ patientId, ids, byEntryId: entry.id, actorId: callerId, at })
          yield* audit.recordMany(ids.map((id) => ({
            actorId: callerId, action: "ecm_status_history.withdraw", targetType: "ecm_status_history", targetId: id
          })))
        }
        yield* audit.record({ actorId: callerId, action: "ecm_status_history.create", targetType: "ecm_status_history", targetId: entry.id })
        return entryOf(entry)
      },
      transaction,
      annotatedOutside((_callerId: number, patientId: number) => ({ "patient.id": patientId }))
    )

    const show = Effect.fn("EngagementStatuses.show")(function*(patientId: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      yield* requireEcmPatient(patientId)
      const history = (yield* histories.entries(patientId)).map(entryOf)
      return { patient_id: patientId, engagement_status: history[0] ?? null, status_histories: history }
    })

    return { update, show } as const
  }),
  dependencies: [StatusHistoriesRepo.Default]
}) {}
