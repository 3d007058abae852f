import { Schema } from "effect"

/** Milliseconds in a day of UTC (not a wall-clock day, which a DST change makes 23 or 25 hours). */
export const dayMs = 86_400_000

/** `YYYY-MM-DD` plus (or minus) whole days. */
export const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00.000Z`) + days * dayMs).toISOString().slice(0, 10)

/** Whole days from one `YYYY-MM-DD` to another (0 for the same day). */
export const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / dayMs)

/**
 * A timestamp on the wire: ISO 8601 with milliseconds and `Z` (ECM conventions).
 * Decodes any ISO 8601 string a client sends; always encodes `toISOString()`.
 */
export const IsoTimestamp = Schema.Date.annotations({
  identifier: "IsoTimestamp",
  description: "ISO 8601 timestamp with milliseconds and Z, e.g. 2026-01-31T09:30:00.000Z",
  message: () => "is invalid",
  jsonSchema: { type: "string", format: "date-time" }
})

const isoDatePattern = /^\d{4}-\d{2}-\d{2}$/
/** A day of the calendar PostgreSQL's `date` stores: it has no year 0 (1 BC), so 0000 is not one. */
const isRealDate = (s: string) => {
  if (s.startsWith("0000")) return false
  const d = new Date(`${s}T00:00:00.000Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

/** A calendar date `YYYY-MM-DD`, checked to be a real day. */
export const IsoDate = Schema.String.pipe(
  Schema.filter((s) => isoDatePattern.test(s) && isRealDate(s), { message: () => "is invalid" }),
  Schema.annotations({ identifier: "IsoDate", description: "Calendar date YYYY-MM-DD", jsonSchema: { type: "string", format: "date", maxLength: 10 } })
)

const timestampPattern = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2})$"
const timestampRegex = new RegExp(timestampPattern)
/** PostgreSQL's timestamptz reaches year 294276; refusing years past 9999 keeps ISO 8601 four-digit years. */
const isRealTimestamp = (s: string) => {
  if (!timestampRegex.test(s) || !isRealDate(s.slice(0, 10))) return false
  const hours = Number(s.slice(11, 13))
  const minutes = Number(s.slice(14, 16))
  const time = new Date(s).getTime()
  return hours < 24 && minutes < 60 && !Number.isNaN(time) && s.slice(0, 4) >= "1900"
}

/**
 * A timestamp in a request: ISO 8601 with a date, a time and an offset (`Z` or `±hh:mm`) — a time
 * without an offset names no instant, so it is refused rather than guessed.
 */
export const IsoTimestampInput = Schema.String.pipe(
  Schema.filter(isRealTimestamp, {
    message: () => "is invalid",
    jsonSchema: { pattern: timestampPattern, maxLength: 35 }
  }),
  Schema.compose(Schema.Date),
  Schema.annotations({
    identifier: "IsoTimestampInput",
    description: "ISO 8601 timestamp with an offset, e.g. 2026-01-31T09:30:00.000Z or 2026-01-31T09:30:00-08:00",
    message: () => "is invalid",
    jsonSchema: { type: "string", format: "date-time", pattern: timestampPattern, maxLength: 35 }
  })
)

/** Day formatters by time zone: making one costs ~100× what formatting with it does. */
const dayFormatters = new Map<string, Intl.DateTimeFormat>()
const dayFormatterOf = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = dayFormatters.get(timeZone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    dayFormatters.set(timeZone, formatter)
  }
  return formatter
}

/** The calendar day (`YYYY-MM-DD`) of an instant in an IANA time zone, e.g. the clinic's "today". */
export const calendarDayIn = (epochMillis: number, timeZone: string): string => {
  const parts = dayFormatterOf(timeZone).formatToParts(new Date(epochMillis))
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  return `${part("year")}-${part("month")}-${part("day")}`
}
