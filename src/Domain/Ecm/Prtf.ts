/**
 * PRTF categories of an event (ECM §6; the rule that picks between the alternatives is ours:
 * docs/prtf.md). The single source of truth: the events counts endpoint and the PRTF report both
 * use `prtfCategoryOf`, and its SQL twin `prtfCategorySql` is checked against it by tests.
 *
 * DHCS counts an *outreach attempt* as a contact with a prospective enrollee, successful or not,
 * and an *encounter* as a service delivered to an enrolled member.
 */
import type { EventStatus, EventType } from "./Activity.js"

export const prtfCategories = ["telehealth_encounters", "in_person_encounters", "telehealth_outreach", "in_person_outreach"] as const
export type PrtfCategory = (typeof prtfCategories)[number]

/** The engagement status (ecm_status_histories.status) of a member receiving services. */
export const enrolledStatus = "enrolled"

export interface CategorisableEvent {
  readonly event_type: EventType
  readonly status: EventStatus
  readonly duration: number | null
  /** Whether the member's engagement status was `enrolled` at the event's `occurred_at`. */
  readonly enrolled: boolean
}

/** A call connected: completed and lasted more than zero minutes. */
const connected = (event: CategorisableEvent) => event.status === "complete" && event.duration !== null && event.duration > 0

/** The event's PRTF category; null for a task (counted only by type). */
export const prtfCategoryOf = (event: CategorisableEvent): PrtfCategory | null => {
  switch (event.event_type) {
    case "call":
      return event.enrolled && connected(event) ? "telehealth_encounters" : "telehealth_outreach"
    case "appointment":
      return event.enrolled ? "in_person_encounters" : "in_person_outreach"
    case "sms":
    case "email":
      return "telehealth_outreach"
    case "meeting":
      return "in_person_encounters"
    case "task":
      return null
  }
}

/**
 * The same rule as a SQL `CASE` over columns `event_type`, `status`, `duration` and a boolean
 * `enrolled`, for set-based counting. Kept next to `prtfCategoryOf`; a property test runs both
 * on the same events and requires the same answers.
 */
export const prtfCategorySql = `CASE
  WHEN event_type = 'call' THEN
    CASE WHEN enrolled AND status = 'complete' AND coalesce(duration, 0) > 0 THEN 'telehealth_encounters' ELSE 'telehealth_outreach' END
  WHEN event_type = 'appointment' THEN
    CASE WHEN enrolled THEN 'in_person_encounters' ELSE 'in_person_outreach' END
  WHEN event_type IN ('sms', 'email') THEN 'telehealth_outreach'
  WHEN event_type = 'meeting' THEN 'in_person_encounters'
  ELSE NULL
END`
