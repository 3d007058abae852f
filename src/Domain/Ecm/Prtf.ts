/**
 * PRTF categories of an event (ECM §6; the rule that picks between the alternatives is ours:
 * docs/prtf.md). The single source of truth: the events counts endpoint (and the PRTF report after
 * it) group events in SQL by what this rule reads and categorise each group with `prtfCategoryOf`,
 * so the rule has no second implementation in SQL.
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
