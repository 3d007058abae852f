/**
 * ECM engagement status (issue 16, docs/prtf.md "Engagement status"): the value set and the moves
 * between values. Each change is a row of `ecm_status_histories`; the status on a day is the entry
 * with the latest `effective_date` on or before it (of one day's entries, the one written last).
 * Pure: the service (src/Services/Ecm/EngagementStatuses.ts) reads the current entry under a lock
 * and asks `transitionProblems` before appending.
 */
import { Schema } from "effect"

export const engagementStatuses = [
  "new_member", "pending_outreach", "outreach_in_progress", "enrolled", "declined", "unable_to_reach", "disenrolled"
] as const
export const EngagementStatus = Schema.Literal(...engagementStatuses)
export type EngagementStatus = typeof EngagementStatus.Type

export const isEngagementStatus = (s: string): s is EngagementStatus => (engagementStatuses as ReadonlyArray<string>).includes(s)

/**
 * Where each status may go. Outreach may restart from every outcome but enrolment; an enrolled
 * member can only be disenrolled; after disenrolment only a re-referral (`new_member`) opens a
 * new episode. `declined` and `unable_to_reach` may still become `enrolled` (the member calls back).
 */
export const allowedNext: Readonly<Record<EngagementStatus, ReadonlyArray<EngagementStatus>>> = {
  new_member: ["pending_outreach", "outreach_in_progress", "enrolled", "declined", "unable_to_reach"],
  pending_outreach: ["outreach_in_progress", "enrolled", "declined", "unable_to_reach"],
  outreach_in_progress: ["pending_outreach", "enrolled", "declined", "unable_to_reach"],
  enrolled: ["disenrolled"],
  declined: ["pending_outreach", "outreach_in_progress", "enrolled"],
  unable_to_reach: ["pending_outreach", "outreach_in_progress", "enrolled", "declined"],
  disenrolled: ["new_member"]
}

/** A member without any entry yet may start anywhere an episode can start (not `disenrolled`). */
export const initialStatuses: ReadonlyArray<EngagementStatus> = engagementStatuses.filter((s) => s !== "disenrolled")

/** The statuses an outreach attempt moves to `outreach_in_progress` automatically (docs/prtf.md). */
export const awaitingOutreach: ReadonlyArray<EngagementStatus> = ["new_member", "pending_outreach"]
export const outreachInProgress: EngagementStatus = "outreach_in_progress"
export const disenrolledStatus: EngagementStatus = "disenrolled"

export interface CurrentEntry {
  /** As stored: a value outside the set (none is written today) allows only re-referral. */
  readonly status: string
  readonly effective_date: string
}

export interface RequestedChange {
  readonly status: EngagementStatus
  readonly effective_date: string
  readonly reason: string | null
}

/**
 * Every reason the change cannot be appended, as ECM messages; empty when it can. `today` is the
 * UTC day of the request: a status cannot take effect in the future, nor before the current one
 * (the history stays in order, so "the status on a day" is well defined).
 */
export const transitionProblems = (current: CurrentEntry | undefined, change: RequestedChange, today: string): Array<string> => {
  const problems: Array<string> = []
  if (current === undefined) {
    if (!initialStatuses.includes(change.status)) problems.push(`Status can't be ${change.status} before any other status`)
  } else if (current.status === change.status) {
    problems.push(`Status is already ${change.status}`)
  } else {
    const next = isEngagementStatus(current.status) ? allowedNext[current.status] : ["new_member" as const]
    if (!next.includes(change.status)) {
      problems.push(`Status can't change from ${current.status} to ${change.status}` +
        (current.status === disenrolledStatus ? " (only a re-referral, new_member, follows disenrolled)" : ""))
    }
    if (change.effective_date < current.effective_date) {
      problems.push(`Effective date can't be before the current status's effective date (${current.effective_date})`)
    }
  }
  if (change.effective_date > today) problems.push("Effective date can't be in the future")
  if (change.status === disenrolledStatus && (change.reason === null || change.reason.trim() === "")) {
    problems.push("Reason can't be blank when disenrolling (the discontinuation reason)")
  }
  return problems
}
