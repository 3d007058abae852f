/**
 * Recurring availability (general §2.5): the occurrences of a slot, expanded on the clinic's wall
 * clock. Patterns: daily, weekly, biweekly, monthly, and `custom` with an RRULE of this bounded
 * subset of RFC 5545, parsed and expanded here (why not the `rrule` package: docs/spec-decisions.md, Scheduling):
 *
 * - `FREQ=DAILY|WEEKLY|MONTHLY` (required), `INTERVAL=n` (1–366, default 1);
 * - `BYDAY=MO,TU,…` (plain weekdays, no ordinals) with FREQ=WEEKLY (days of each week, weeks start
 *   on Monday) or FREQ=DAILY (a filter on the days);
 * - `COUNT=n` (1–500) or `UNTIL=YYYYMMDD` / `YYYYMMDDTHHMMSSZ` — one of them is required, so a rule
 *   is always bounded; `RRULE:` in front is accepted.
 *
 * The first occurrence is the requested slot itself (counted by COUNT). Monthly on the 29th–31st
 * occurs only in months that have that day (RFC 5545, as Google Calendar and Outlook do): a slot on
 * 31 January recurs on 31 March, not on 28 February or 3 March.
 */
import { addDays, daysInMonth, instantOf, type WallClock, wallClockAt, weekdayOf } from "./ZonedTime.js"

export const recurrencePatterns = ["daily", "weekly", "biweekly", "monthly", "custom"] as const
export type RecurrencePattern = (typeof recurrencePatterns)[number]

/**
 * Occurrences are generated this far ahead of now; the daily job `availability.extend_series`
 * (src/Services/Scheduling/SlotTasks.ts) keeps every series that far ahead as time passes.
 */
export const recurrenceHorizonDays = 90
export const maxRuleCount = 500
export const maxRuleLength = 200

const weekdays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const

export interface Rule {
  readonly freq: "DAILY" | "WEEKLY" | "MONTHLY"
  readonly interval: number
  /** 0 = Monday … 6 = Sunday; empty: every day the frequency gives. */
  readonly byDay: ReadonlyArray<number>
  readonly count: number | undefined
  readonly until: Date | undefined
}

/** The rule, or why it is refused (a message for `recurrence_rule`). */
export const parseRule = (text: string): { readonly rule: Rule } | { readonly error: string } => {
  const body = text.trim().replace(/^RRULE:/i, "")
  if (body.length === 0) return { error: "can't be blank" }
  const parts = new Map<string, string>()
  for (const part of body.split(";")) {
    const match = /^([A-Z]+)=([A-Z0-9,]+)$/i.exec(part.trim())
    if (match === null) return { error: "is invalid" }
    const key = match[1]!.toUpperCase()
    if (parts.has(key)) return { error: `has ${key} twice` }
    parts.set(key, match[2]!.toUpperCase())
  }
  for (const key of parts.keys()) {
    if (!["FREQ", "INTERVAL", "BYDAY", "COUNT", "UNTIL", "WKST"].includes(key)) return { error: `does not support ${key}` }
  }
  if (parts.has("WKST") && parts.get("WKST") !== "MO") return { error: "supports only WKST=MO" }
  const freq = parts.get("FREQ")
  if (freq !== "DAILY" && freq !== "WEEKLY" && freq !== "MONTHLY") return { error: "needs FREQ=DAILY, WEEKLY or MONTHLY" }
  const interval = parts.has("INTERVAL") ? Number(parts.get("INTERVAL")) : 1
  if (!Number.isInteger(interval) || interval < 1 || interval > 366) return { error: "needs INTERVAL between 1 and 366" }
  const byDay: Array<number> = []
  if (parts.has("BYDAY")) {
    if (freq === "MONTHLY") return { error: "supports BYDAY only with FREQ=WEEKLY or DAILY" }
    for (const day of parts.get("BYDAY")!.split(",")) {
      const index = weekdays.indexOf(day as (typeof weekdays)[number])
      if (index < 0) return { error: "needs BYDAY of MO, TU, WE, TH, FR, SA, SU" }
      if (!byDay.includes(index)) byDay.push(index)
    }
    byDay.sort((a, b) => a - b)
  }
  let count: number | undefined
  if (parts.has("COUNT")) {
    count = Number(parts.get("COUNT"))
    if (!Number.isInteger(count) || count < 1 || count > maxRuleCount) return { error: `needs COUNT between 1 and ${maxRuleCount}` }
  }
  let until: Date | undefined
  if (parts.has("UNTIL")) {
    const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(parts.get("UNTIL")!)
    if (match === null) return { error: "needs UNTIL as YYYYMMDD or YYYYMMDDTHHMMSSZ" }
    const [y, mo, d, h, mi, s] = match.slice(1).map((n) => (n === undefined ? undefined : Number(n)))
    // A date alone includes that whole day (UTC): the end of the day.
    until = h === undefined ? new Date(Date.UTC(y!, mo! - 1, d!, 23, 59, 59, 999)) : new Date(Date.UTC(y!, mo! - 1, d!, h, mi!, s!))
    if (Number.isNaN(until.getTime()) || until.getUTCDate() !== d || until.getUTCMonth() !== mo! - 1) {
      return { error: "needs UNTIL as YYYYMMDD or YYYYMMDDTHHMMSSZ" }
    }
  }
  if (count !== undefined && until !== undefined) return { error: "can't have both COUNT and UNTIL" }
  if (count === undefined && until === undefined) return { error: "needs COUNT or UNTIL" }
  return { rule: { freq, interval, byDay, count, until } }
}

/** The rule a named pattern stands for (no end: the horizon bounds it). */
export const ruleOfPattern = (pattern: Exclude<RecurrencePattern, "custom">): Rule => ({
  freq: pattern === "daily" ? "DAILY" : pattern === "monthly" ? "MONTHLY" : "WEEKLY",
  interval: pattern === "biweekly" ? 2 : 1,
  byDay: [],
  count: undefined,
  until: undefined
})

export interface Occurrence {
  readonly start: Date
  readonly end: Date
}

/** Wall-clock starts the rule gives after `first`, in order, endlessly (the caller stops). */
function* wallClockStarts(first: WallClock, rule: Rule): Generator<WallClock> {
  if (rule.freq === "MONTHLY") {
    for (let step = 1; ; step++) {
      const months = first.month - 1 + step * rule.interval
      const year = first.year + Math.floor(months / 12)
      const month = (months % 12) + 1
      if (first.day <= daysInMonth(year, month)) yield { ...first, year, month }
      if (year > first.year + 100) return
    }
  }
  if (rule.freq === "DAILY") {
    for (let step = 1; step < 40_000; step++) {
      const next = addDays(first, step * rule.interval)
      if (rule.byDay.length === 0 || rule.byDay.includes(weekdayOf(next))) yield next
    }
    return
  }
  // WEEKLY: the days of every `interval`-th week (Monday first), after the first occurrence.
  const days = rule.byDay.length === 0 ? [weekdayOf(first)] : rule.byDay
  const monday = addDays(first, -weekdayOf(first))
  for (let week = 0; week < 6_000; week += rule.interval) {
    for (const day of days) {
      const next = addDays(monday, week * 7 + day)
      if (week === 0 && day <= weekdayOf(first)) continue
      yield next
    }
  }
}

/**
 * The occurrences after the first (`first` itself is the slot the request made), each as long as
 * the first, up to `horizon` (exclusive) and the rule's COUNT or UNTIL.
 */
export const laterOccurrences = (first: Occurrence, rule: Rule, zone: string, horizon: Date): Array<Occurrence> => {
  const length = first.end.getTime() - first.start.getTime()
  const occurrences: Array<Occurrence> = []
  let produced = 1
  for (const wall of wallClockStarts(wallClockAt(first.start, zone), rule)) {
    if (rule.count !== undefined && produced >= rule.count) break
    const start = instantOf(wall, zone)
    if (start.getTime() >= horizon.getTime()) break
    if (rule.until !== undefined && start.getTime() > rule.until.getTime()) break
    occurrences.push({ start, end: new Date(start.getTime() + length) })
    produced++
  }
  return occurrences
}
