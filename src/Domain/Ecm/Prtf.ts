/**
 * What an event is for DHCS (ECM §6; the rule that picks between the alternatives is ours:
 * docs/prtf.md "The rule"): an outreach attempt, an encounter, or neither, and in which mode.
 * `contactOf` is the one definition: the events counts endpoint, the PRTF report and the automatic
 * engagement-status move all ask it. SQL never restates it: the counts endpoint groups events in
 * SQL and classifies each group here; the report joins a table generated from it (PrtfReport.ts).
 *
 * DHCS: an *outreach attempt* is "individualized communication with a prospective ECM enrollee who
 * is provided with the opportunity to respond directly" (in person, email, text, phone or another
 * electronic method), counted whether or not contact succeeds; an *encounter* is a service
 * delivered to an *enrolled* member.
 */
import type { EventStatus, EventType } from "./Activity.js"
import type { EngagementStatus } from "./Engagement.js"

export const prtfCategories = ["telehealth_encounters", "in_person_encounters", "telehealth_outreach", "in_person_outreach"] as const
export type PrtfCategory = (typeof prtfCategories)[number]

/** The engagement status (ecm_status_histories.status) of a member receiving services. */
export const enrolledStatus = "enrolled"

export type ContactKind = "outreach" | "encounter"
export type ContactMode = "telehealth" | "in_person"

export interface Contact {
  readonly kind: ContactKind
  readonly mode: ContactMode
}

/** What the rule reads of an event. */
export interface ClassifiableEvent {
  readonly event_type: EventType
  readonly status: EventStatus
  /** Minutes; calls and appointments only. */
  readonly duration: number | null
}

/** A call connected: it completed (answered) and lasted more than zero minutes. */
const connected = (event: ClassifiableEvent) => event.status === "complete" && event.duration !== null && event.duration > 0

const outreach = (mode: ContactMode): Contact => ({ kind: "outreach", mode })
const contact = (kind: ContactKind, mode: ContactMode): Contact => ({ kind, mode })

/**
 * The event as DHCS counts it, given the member's engagement status on the event's day (null: no
 * status yet); null when it is neither an attempt nor an encounter.
 * - `cancelled` (it did not happen, or a call was cancelled before it rang) and `scheduled`
 *   (planned, not yet held): neither.
 * - call: telehealth; an encounter when it connected and the member was enrolled, otherwise an
 *   outreach attempt (no answer, busy, failed, or an outcome not confirmed yet).
 * - appointment, meeting: in person; only once held (`complete`): an encounter when enrolled,
 *   otherwise an outreach attempt.
 * - sms, email: a telehealth (electronic) outreach attempt whatever the status of enrolment: a
 *   message is a contact, never a service.
 * - task: internal work, never either (counted only by type).
 */
export const contactOf = (event: ClassifiableEvent, engagement: EngagementStatus | null): Contact | null => {
  if (event.status === "cancelled" || event.status === "scheduled") return null
  const enrolled = engagement === enrolledStatus
  switch (event.event_type) {
    case "call":
      return contact(enrolled && connected(event) ? "encounter" : "outreach", "telehealth")
    case "appointment":
    case "meeting":
      return event.status === "complete" ? contact(enrolled ? "encounter" : "outreach", "in_person") : null
    case "sms":
    case "email":
      return outreach("telehealth")
    case "task":
      return null
  }
}

/** The PRTF counter a contact adds to. */
export const categoryOfContact = (c: Contact): PrtfCategory =>
  c.kind === "encounter"
    ? (c.mode === "telehealth" ? "telehealth_encounters" : "in_person_encounters")
    : (c.mode === "telehealth" ? "telehealth_outreach" : "in_person_outreach")

/** The event's PRTF category; null when it is neither an attempt nor an encounter. */
export const prtfCategoryOf = (event: ClassifiableEvent, engagement: EngagementStatus | null): PrtfCategory | null => {
  const c = contactOf(event, engagement)
  return c === null ? null : categoryOfContact(c)
}
