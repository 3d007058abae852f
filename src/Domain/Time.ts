import { Schema } from "effect"

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
