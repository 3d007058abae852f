/**
 * ECM activities (ECM §4.1): the rules of §2.2 and §3.1 around `ActivitiesRepo`, with the event
 * written by the `EventGenerator` in the same transaction. Every write to a patient's activities
 * holds that patient's advisory lock (ActivitiesRepo.lockPatient), so link checks and the cycle
 * checks made after the writes see no concurrent change; a failed check rolls everything back.
 */
import { Clock, Effect } from "effect"
import { type ActivityFields, CreatedActivity } from "../../Api/Ecm/Activities.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { missingFieldMessages, statusMoveRefusal } from "../../Domain/Ecm/Activity.js"
import { AuditLog } from "../AuditLog.js"
import { Mailer } from "../Mailer.js"
import { type ActivityCriteria, ActivitiesRepo, type ActivityValues, type StoredActivity } from "./ActivitiesRepo.js"
import { EventGenerator } from "./EventGenerator.js"
import { annotatedOutside } from "../Spans.js"
import { makeTransaction } from "../Repository.js"

/** Subject of an email activity sent without one. */
export const defaultEmailSubject = "A message from your care team"

/** The email of an email activity: its body, then the attachment links (never fetched: no SSRF). */
export const emailTextOf = (body: string, attachments: ReadonlyArray<string>) =>
  attachments.length === 0 ? body : `${body}\n\nAttachments:\n${attachments.map((url) => `- ${url}`).join("\n")}\n`

const empty: Omit<ActivityValues, "patient_id" | "performed_by_id" | "occurred_at"> = {
  activity_type: "task",
  status: "created",
  message: null,
  subject: null,
  body: null,
  booked_at: null,
  email_to: null,
  email_attachments: [],
  duration: null,
  assigned_to_id: 0,
  parent_id: null,
  blocked_by_id: null,
  voice_call_id: null,
  text_message_id: null
}

/** The activity once the body's fields are applied: absent keeps, null clears. */
const merged = (base: ActivityValues, fields: ActivityFields): ActivityValues => {
  const pick = <K extends keyof ActivityValues & keyof ActivityFields>(key: K): ActivityValues[K] => {
    const value = fields[key]
    return (value === undefined ? base[key] : value) as ActivityValues[K]
  }
  return {
    ...base,
    activity_type: fields.activity_type ?? base.activity_type,
    status: fields.status ?? base.status,
    message: pick("message"),
    subject: pick("subject"),
    body: pick("body"),
    occurred_at: fields.occurred_at ?? base.occurred_at,
    booked_at: pick("booked_at"),
    email_to: pick("email_to"),
    email_attachments: fields.email_attachments === undefined ? base.email_attachments : fields.email_attachments ?? [],
    duration: pick("duration"),
    // null clears, and a cleared assignee is then reported missing (0 is no user).
    assigned_to_id: fields.assigned_to_id === undefined ? base.assigned_to_id : fields.assigned_to_id ?? 0,
    parent_id: pick("parent_id"),
    voice_call_id: pick("voice_call_id"),
    text_message_id: pick("text_message_id")
  }
}

export class Activities extends Effect.Service<Activities>()("app/EcmActivities", {
  effect: Effect.gen(function*() {
    const transaction = yield* makeTransaction
    const repo = yield* ActivitiesRepo
    const events = yield* EventGenerator
    const audit = yield* AuditLog
    const mailer = yield* Mailer

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const requirePatient = (patientId: number) =>
      Effect.flatMap(repo.patientExists(patientId), (found) => (found ? Effect.void : Effect.fail(ecmNotFound("Patient"))))

    const lockPatient = (patientId: number) =>
      Effect.flatMap(repo.lockPatient(patientId), (found) => (found ? Effect.void : Effect.fail(ecmNotFound("Patient"))))

    const requireActivity = (patientId: number, id: number) =>
      Effect.flatMap(repo.find(patientId, id), (row) => (row === undefined ? Effect.fail(ecmNotFound("Activity")) : Effect.succeed(row)))

    /** Every problem the body has that can be told before writing, in one list. */
    const problemsOf = (
      patientId: number,
      activity: ActivityValues,
      fields: ActivityFields,
      previous: StoredActivity | undefined
    ) =>
      Effect.gen(function*() {
        // The type: a create names it; an update keeps it unless the body clears it (null).
        const type = previous === undefined || fields.activity_type === null ? fields.activity_type : activity.activity_type
        const problems = missingFieldMessages({ ...activity, activity_type: type, assigned_to_id: activity.assigned_to_id || null })
        if (fields.assigned_to_id !== undefined && fields.assigned_to_id !== null && !(yield* repo.isActiveStaff(fields.assigned_to_id))) {
          problems.push("Assigned to must be an active staff user")
        }
        const selfId = previous?.id
        if (activity.parent_id !== null) {
          if (activity.activity_type !== "task") {
            problems.push("Parent can only be set on a task: subtasks are tasks")
          } else if (fields.parent_id !== undefined && fields.parent_id !== null) {
            const parent = fields.parent_id === selfId ? undefined : yield* repo.findLinkTarget(patientId, fields.parent_id)
            if (fields.parent_id === selfId) problems.push("Parent can't be the activity itself")
            else if (parent === undefined || parent.activity_type !== "task") problems.push("Parent must be a task of this patient")
          }
        }
        if (previous !== undefined && previous.activity_type === "task" && activity.activity_type !== "task" && (yield* repo.hasSubtasks(previous.id))) {
          problems.push("Activity type can't change while the task has subtasks")
        }
        for (const [key, label] of [["blocked_by_id", "Blocked by"], ["blocking_id", "Blocking"]] as const) {
          const target = fields[key]
          if (target === undefined || target === null) continue
          if (target === selfId) problems.push(`${label} can't be the activity itself`)
          else if ((yield* repo.findLinkTarget(patientId, target)) === undefined) problems.push(`${label} must be an activity of this patient`)
        }
        if (activity.email_attachments.length > 0 && activity.activity_type !== "email") {
          problems.push("Email attachments are only for email activities")
        }
        if (previous !== undefined && previous.status !== activity.status) {
          const refusal = statusMoveRefusal(previous.status, activity.status)
          if (refusal !== null) problems.push(refusal)
        }
        return problems
      })

    /** Writes the links the body names; then the checks that need the graph as it now is. */
    const linkAndCheck = (row: StoredActivity, fields: ActivityFields, becameComplete: boolean) =>
      Effect.gen(function*() {
        const { id, patient_id: patientId } = row
        // Nothing linked and not completed: the row as written is the row as it stands.
        if (fields.blocked_by_id === undefined && fields.blocking_id === undefined && fields.parent_id === undefined && !becameComplete) return row
        if (fields.blocked_by_id !== undefined) yield* repo.setBlocker(id, fields.blocked_by_id)
        if (fields.blocking_id !== undefined) {
          if (fields.blocking_id === null) yield* repo.releaseBlocked(id)
          else yield* repo.setBlocker(fields.blocking_id, id)
        }
        const problems: Array<string> = []
        if ((fields.blocked_by_id ?? fields.blocking_id ?? null) !== null && (yield* repo.inCycle(id, "blocked_by_id"))) {
          problems.push("Blocking links would form a cycle")
        }
        if (fields.parent_id !== undefined && fields.parent_id !== null && (yield* repo.inCycle(id, "parent_id"))) {
          problems.push("Parent would make the task a subtask of itself")
        }
        const stored = (yield* repo.find(patientId, id))!
        if (becameComplete && stored.blocked_by_id !== null) {
          const blocker = yield* repo.findLinkTarget(patientId, stored.blocked_by_id)
          if (blocker !== undefined && blocker.status === "created") {
            problems.push(`Status can't be complete while blocked by activity ${blocker.id} (${blocker.activity_type}), which is still open`)
          }
        }
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        return stored
      })

    const sendEmail = (activity: ActivityValues) =>
      mailer.send({
        to: [activity.email_to!],
        subject: activity.subject ?? defaultEmailSubject,
        text: emailTextOf(activity.body ?? "", activity.email_attachments)
      }).pipe(Effect.mapError((error) => ecmInvalid([`Email could not be sent: ${error.reason}`])))

    const create = Effect.fn("Activities.create")(
      function*(callerId: number, patientId: number, fields: ActivityFields) {
        yield* lockPatient(patientId)
        const at = yield* now
        const activity = merged({ ...empty, patient_id: patientId, performed_by_id: callerId, occurred_at: at }, fields)
        const problems = yield* problemsOf(patientId, activity, fields, undefined)
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        const row = yield* repo.insert(activity, at)
        const stored = yield* linkAndCheck(row, fields, activity.status === "complete")
        yield* events.sync(stored)
        if (activity.activity_type === "email") yield* sendEmail(activity)
        yield* audit.record({ actorId: callerId, action: "ecm_activity.create", targetType: "ecm_activity", targetId: row.id })
        return CreatedActivity.make({
          id: row.id, activity_type: row.activity_type, status: row.status, message: row.message, subject: row.subject,
          patient_id: row.patient_id, performed_by_id: row.performed_by_id, assigned_to_id: row.assigned_to_id,
          created_at: row.created_at, updated_at: row.updated_at
        }, true)
      },
      transaction,
      annotatedOutside((_callerId: number, patientId: number) => ({ "patient.id": patientId }))
    )

    const update = Effect.fn("Activities.update")(
      function*(callerId: number, patientId: number, id: number, fields: ActivityFields) {
        yield* lockPatient(patientId)
        const previous = yield* requireActivity(patientId, id)
        const activity = merged(previous, fields)
        const problems = yield* problemsOf(patientId, activity, fields, previous)
        if (problems.length > 0) return yield* Effect.fail(ecmInvalid(problems))
        const at = yield* now
        yield* repo.update(id, activity, at)
        const stored = yield* linkAndCheck({ ...previous, ...activity, updated_at: at }, fields, activity.status === "complete" && previous.status !== "complete")
        yield* events.sync(stored)
        yield* audit.record({ actorId: callerId, action: "ecm_activity.update", targetType: "ecm_activity", targetId: id })
        return (yield* repo.detail(patientId, id))!
      },
      transaction,
      annotatedOutside((_callerId: number, patientId: number, id: number) => ({ "patient.id": patientId, "activity.id": id }))
    )

    const remove = Effect.fn("Activities.delete")(
      function*(callerId: number, patientId: number, id: number) {
        yield* lockPatient(patientId)
        yield* requireActivity(patientId, id)
        yield* events.remove(id)
        yield* repo.remove(patientId, id)
        yield* audit.record({ actorId: callerId, action: "ecm_activity.delete", targetType: "ecm_activity", targetId: id })
      },
      transaction,
      annotatedOutside((_callerId: number, patientId: number, id: number) => ({ "patient.id": patientId, "activity.id": id }))
    )

    const comment = Effect.fn("Activities.comment")(
      function*(callerId: number, patientId: number, activityId: number, body: string) {
        yield* requirePatient(patientId)
        yield* requireActivity(patientId, activityId)
        const created = yield* repo.addComment(activityId, callerId, body, yield* now)
        yield* audit.record({ actorId: callerId, action: "ecm_activity_comment.create", targetType: "ecm_activity_comment", targetId: created.id })
        return created
      },
      transaction,
      annotatedOutside((_callerId: number, patientId: number, activityId: number) => ({ "patient.id": patientId, "activity.id": activityId }))
    )

    const show = Effect.fn("Activities.show")(function*(patientId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "activity.id": id })
      yield* requirePatient(patientId)
      const detail = yield* repo.detail(patientId, id)
      if (detail === undefined) return yield* Effect.fail(ecmNotFound("Activity"))
      return detail
    })

    const list = Effect.fn("Activities.list")(function*(patientId: number, criteria: ActivityCriteria, page: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      yield* requirePatient(patientId)
      const { pagination, rows } = yield* repo.list(patientId, criteria, page)
      yield* Effect.annotateCurrentSpan({ "activities.count": rows.length, "activities.total_count": pagination.total_count })
      return { activities: rows, pagination }
    })

    return { create, update, remove, comment, show, list } as const
  }),
  dependencies: [ActivitiesRepo.Default, EventGenerator.Default]
}) {}
