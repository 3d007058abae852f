/**
 * Wall-clock time in a named zone (IANA, e.g. `America/Los_Angeles`) ↔ instants, with `Intl` only.
 * Recurring slots are expanded on the clinic's wall clock, so a weekly 9:00 slot stays at 9:00 when
 * daylight saving time starts or ends (its UTC instant moves by an hour instead).
 */

export interface WallClock {
  readonly year: number
  /** 1–12 */
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
  readonly millisecond: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterOf = (zone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(zone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

/** Whether `zone` is a time zone `Intl` knows. */
export const isTimeZone = (zone: string): boolean => {
  try {
    formatterOf(zone)
    return true
  } catch {
    return false
  }
}

/** The wall clock in `zone` at `instant`. */
export const wallClockAt = (instant: Date, zone: string): WallClock => {
  const parts: Record<string, number> = {}
  for (const part of formatterOf(zone).formatToParts(instant)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value)
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
    millisecond: instant.getUTCMilliseconds()
  }
}

const asUtc = (w: WallClock): number => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond)

/** Offset of `zone` from UTC at `instant`, in milliseconds (Los Angeles in winter: −8 h). */
const offsetAt = (instant: number, zone: string): number => asUtc(wallClockAt(new Date(instant), zone)) - instant

/**
 * The instant the wall clock in `zone` shows `w`. A time skipped when clocks go forward (2:30 on the
 * spring change) is read with the offset before the change, so it lands an hour later (3:30), as
 * calendars do; a time shown twice when clocks go back is the first of the two.
 */
export const instantOf = (w: WallClock, zone: string): Date => {
  const guess = asUtc(w)
  const before = offsetAt(guess - 86_400_000, zone)
  const after = offsetAt(guess + 86_400_000, zone)
  // The larger offset first: when both reproduce the wall clock (clocks went back), it is the earlier instant.
  for (const offset of [Math.max(before, after), Math.min(before, after)]) {
    const candidate = guess - offset
    if (asUtc(wallClockAt(new Date(candidate), zone)) === guess) return new Date(candidate)
  }
  return new Date(guess - before)
}

/** Days in a month of the proleptic Gregorian calendar (month 1–12). */
export const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** The calendar date `days` after `w`'s, same time of day. */
export const addDays = (w: WallClock, days: number): WallClock => {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days))
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}

/** 0 = Monday … 6 = Sunday (RFC 5545 weeks start on Monday by default). */
export const weekdayOf = (w: WallClock): number => (new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay() + 6) % 7
