/**
 * ECM engagement status (docs/prtf.md "Engagement status"): the value set and the moves
 * between values. Each change is a row of `ecm_status_histories`; the status on a day is the entry
 * with the latest `effective_date` on or before it (of one day's entries, the one written last).
 * Entries may be recorded late (an effective date in the past, with a reason). Pure: the service
 * (src/Services/Ecm/EngagementStatuses.ts) reads the history under a lock and asks `placementOf`
 * before inserting.
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

/** A stored entry, as the rule reads it. */
export interface HistoryEntry {
  readonly id: number
  /** As stored: a value outside the set (none is written today) allows only re-referral. */
  readonly status: string
  readonly effective_date: string
  readonly source: "mif" | "user" | "system"
}

export interface RequestedChange {
  readonly status: EngagementStatus
  readonly effective_date: string
  readonly reason: string | null
}

export interface Placement {
  /** Every reason the change cannot be recorded, as ECM messages; empty when it can. */
  readonly problems: ReadonlyArray<string>
  /** The entry in force on the change's day before it (what it replaces from that day), if any. */
  readonly replaced: HistoryEntry | undefined
  /**
   * Automatic moves to `outreach_in_progress` after the change's day whose premise (the member
   * was awaiting outreach) the change makes untrue: they are withdrawn with it.
   */
  readonly withdrawn: ReadonlyArray<HistoryEntry>
}

const movesTo = (from: string, to: string): boolean =>
  from !== to && (isEngagementStatus(from) ? allowedNext[from] : ["new_member"]).includes(to as EngagementStatus)

const isAutomaticOutreach = (entry: HistoryEntry) => entry.source === "system" && entry.status === outreachInProgress

/**
 * Where a change goes in the history (oldest first: effective date, then id) and whether it may.
 * `today` is the UTC day of the request. A change may take effect today or any day before (never
 * after); one dated before today is recorded late and needs a reason. It is inserted after every
 * entry of its day: the move from the status then in force must be allowed, and so must every
 * later entry's move from the status before it once the change is in — except automatic outreach
 * moves that now follow a status not awaiting outreach, which are withdrawn (the system would not
 * have made them had the change been recorded on time).
 */
export const placementOf = (history: ReadonlyArray<HistoryEntry>, change: RequestedChange, today: string): Placement => {
  const problems: Array<string> = []
  const before = history.filter((e) => e.effective_date <= change.effective_date)
  const later = history.filter((e) => e.effective_date > change.effective_date)
  const replaced = before.at(-1)
  if (replaced === undefined) {
    if (!initialStatuses.includes(change.status)) problems.push(`Status can't be ${change.status} before any other status`)
  } else if (replaced.status === change.status) {
    problems.push(`Status is already ${change.status}` + (later.length > 0 ? ` on ${change.effective_date}` : ""))
  } else if (!movesTo(replaced.status, change.status)) {
    problems.push(`Status can't change from ${replaced.status} to ${change.status}` +
      (replaced.status === disenrolledStatus ? " (only a re-referral, new_member, follows disenrolled)" : ""))
  }
  const withdrawn: Array<HistoryEntry> = []
  let previous: string = change.status
  for (const entry of later) {
    if (isAutomaticOutreach(entry) && !(awaitingOutreach as ReadonlyArray<string>).includes(previous)) {
      withdrawn.push(entry)
      continue
    }
    if (!movesTo(previous, entry.status)) {
      problems.push(`Status can't be ${change.status} from ${change.effective_date}: the later entry ${entry.status} ` +
        `(${entry.effective_date}) can't follow ${previous}`)
      break
    }
    previous = entry.status
  }
  if (change.effective_date > today) problems.push("Effective date can't be in the future")
  const blank = change.reason === null || change.reason.trim() === ""
  if (change.status === disenrolledStatus && blank) {
    problems.push("Reason can't be blank when disenrolling (the discontinuation reason)")
  } else if (change.effective_date < today && blank) {
    problems.push("Reason can't be blank when the effective date is in the past (say why it is recorded late)")
  }
  return { problems, replaced, withdrawn }
}
