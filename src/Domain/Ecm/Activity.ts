/**
 * ECM activities (ECM §2.2, §3.1) and the events derived from them (§2.4, §6): the value sets and
 * the pure rules — which fields a type requires, which status moves are allowed, and what event
 * an activity produces. The EventGenerator (src/Services/Ecm/EventGenerator.ts) writes what
 * `eventOf` says; nothing else decides it.
 */
import { Schema } from "effect"

export const activityTypes = ["task", "note", "sms", "call", "email", "in_person_appointment"] as const
export const ActivityType = Schema.Literal(...activityTypes)
export type ActivityType = typeof ActivityType.Type

export const activityStatuses = ["created", "complete", "cancelled"] as const
export const ActivityStatus = Schema.Literal(...activityStatuses)
export type ActivityStatus = typeof ActivityStatus.Type

/** ECM §2.4. `meeting` exists in the spec but no activity type produces it (§6). */
export const eventTypes = ["sms", "call", "task", "email", "appointment", "meeting"] as const
export const EventType = Schema.Literal(...eventTypes)
export type EventType = typeof EventType.Type

/**
 * Event status (§2.4: "values observed: complete; full value set: not shown"). docs/prtf.md has
 * the table: `complete` and `cancelled` follow the activity; an open (`created`) activity is
 * `scheduled` when it is planned work (task, appointment) and `attempted` when it is outreach
 * already made whose outcome is not confirmed (call, sms, email).
 */
export const eventStatuses = ["scheduled", "attempted", "complete", "cancelled"] as const
export const EventStatus = Schema.Literal(...eventStatuses)
export type EventStatus = typeof EventStatus.Type

/** ECM §6: the event type of an activity type; a note generates none. */
export const eventTypeOf = (type: ActivityType): EventType | null => {
  switch (type) {
    case "task":
      return "task"
    case "note":
      return null
    case "sms":
      return "sms"
    case "call":
      return "call"
    case "email":
      return "email"
    case "in_person_appointment":
      return "appointment"
  }
}

export const eventStatusOf = (type: ActivityType, status: ActivityStatus): EventStatus => {
  if (status !== "created") return status
  return type === "task" || type === "in_person_appointment" ? "scheduled" : "attempted"
}

/** The fields of an activity that its event mirrors. */
export interface ActivityForEvent {
  readonly activity_type: ActivityType
  readonly status: ActivityStatus
  readonly occurred_at: Date
  readonly subject: string | null
  readonly body: string | null
  readonly message: string | null
  readonly duration: number | null
}

export interface EventFields {
  readonly event_type: EventType
  readonly status: EventStatus
  readonly occurred_at: Date
  readonly subject: string | null
  readonly body: string | null
  /** Minutes: only calls and appointments have one (§2.4). */
  readonly duration: number | null
}

/**
 * The event an activity produces, or null (a note). A task's text is its `message`, so a task's
 * event body is the message when the task has no body.
 */
export const eventOf = (activity: ActivityForEvent): EventFields | null => {
  const eventType = eventTypeOf(activity.activity_type)
  if (eventType === null) return null
  return {
    event_type: eventType,
    status: eventStatusOf(activity.activity_type, activity.status),
    occurred_at: activity.occurred_at,
    subject: activity.subject,
    body: activity.body ?? (activity.activity_type === "task" ? activity.message : null),
    duration: eventType === "call" || eventType === "appointment" ? activity.duration : null
  }
}

/** The fields a type requires besides `assigned_to_id` (ECM §2.2), in the table's order. */
export const requiredFieldsOf: Record<ActivityType, ReadonlyArray<RequirableField>> = {
  task: ["message"],
  note: ["body"],
  sms: ["body", "text_message_id"],
  call: ["voice_call_id"],
  email: ["email_to", "body"],
  in_person_appointment: ["booked_at"]
}

export type RequirableField = "message" | "body" | "text_message_id" | "voice_call_id" | "email_to" | "booked_at"

export const fieldLabels: Record<RequirableField | "assigned_to_id" | "activity_type", string> = {
  activity_type: "Activity type",
  message: "Message",
  body: "Body",
  text_message_id: "Text message",
  voice_call_id: "Voice call",
  email_to: "Email to",
  booked_at: "Booked at",
  assigned_to_id: "Assigned to"
}

const isBlank = (value: unknown) => value === null || value === undefined || (typeof value === "string" && value.trim() === "")

/**
 * Every missing required field, as ECM §7 sentences: the type's own fields in the §2.2 order,
 * then `Assigned to`; without a type, only the type and `Assigned to` can be named.
 */
export const missingFieldMessages = (activity: Readonly<Record<string, unknown>> & { readonly activity_type?: ActivityType | null | undefined }): Array<string> => {
  const type = activity.activity_type
  const fields: ReadonlyArray<keyof typeof fieldLabels> = type === null || type === undefined
    ? ["activity_type", "assigned_to_id"]
    : [...requiredFieldsOf[type], "assigned_to_id"]
  return fields.filter((field) => isBlank(activity[field])).map((field) => `${fieldLabels[field]} can't be blank`)
}

/**
 * Status moves (§3.1 "any restriction: not shown"): any move is allowed except directly between
 * the two final states. A cancelled activity did not happen and a completed one did; turning one
 * into the other changes what the compliance counts say, so it takes a deliberate reopen
 * (`created`) first — two audited changes instead of one slip.
 */
export const statusMoveRefusal = (from: ActivityStatus, to: ActivityStatus): string | null =>
  (from === "cancelled" && to === "complete") || (from === "complete" && to === "cancelled")
    ? `Status can't change from ${from} to ${to}; reopen the activity (status created) first`
    : null
