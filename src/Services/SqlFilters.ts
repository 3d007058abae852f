/**
 * Filter expressions the repositories share: search text as LIKE patterns, person names, the
 * instants that bound calendar days in a time zone, and the visit lists' common criteria. They name
 * no table: columns are the calling repository's, passed in or bound to the aliases said here.
 */
import type { Statement } from "@effect/sql"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Schema } from "effect"
import { AppointmentType } from "../Domain/Scheduling/Scheduling.js"
import type { ListFilter } from "./Lists.js"
import { blankToNull } from "./Repository.js"

/** `%`, `_` and `\` match themselves in the LIKE pattern built from search text. */
export const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** The first name, the last name or "first last" (columns named by `first`, `last`) contain `text`. */
export const nameMatches = (sql: SqlClient, first: string, last: string, text: string): Statement.Fragment => {
  const pattern = likePattern(text)
  return sql`(${sql.literal(first)} ILIKE ${pattern} ESCAPE '\\' OR ${sql.literal(last)} ILIKE ${pattern} ESCAPE '\\'
    OR (${sql.literal(first)} || ' ' || ${sql.literal(last)}) ILIKE ${pattern} ESCAPE '\\')`
}

/**
 * The criteria the visit lists (claims, appointments, session notes) share, as their filter bodies
 * give them (src/Api/Lists.ts `visitCriteriaOf`): search text, the patient's and the provider's
 * names (`participantFilters`), a day range (`zonedDayFilters`, or the list's own date column),
 * the appointment type and the sort direction. Each list's criteria schema spreads them.
 */
export const visitCriteriaFields = {
  search: Schema.optional(Schema.NullOr(Schema.String)),
  patientName: Schema.optional(Schema.NullOr(Schema.String)),
  providerName: Schema.optional(Schema.NullOr(Schema.String)),
  startDate: Schema.optional(Schema.NullOr(Schema.String)),
  endDate: Schema.optional(Schema.NullOr(Schema.String)),
  appointmentType: Schema.optional(Schema.NullOr(AppointmentType)),
  sortDir: Schema.optional(Schema.Literal("ASC", "DESC"))
}

/** The name filters of a list of a patient's records with a provider: each absent or blank filters nothing. */
export interface ParticipantNames {
  readonly patientName?: string | null | undefined
  readonly providerName?: string | null | undefined
  readonly search?: string | null | undefined
}

/**
 * The filters of a list that joins the patient as `pa` and the provider's user as `pu`: the
 * patient's name, the provider's name, and a search that matches either name or, when given,
 * the list's own text columns (`alsoSearched`, from the search's LIKE pattern).
 */
export const participantFilters = (
  sql: SqlClient,
  criteria: ParticipantNames,
  alsoSearched?: (pattern: string) => Statement.Fragment
): Array<ListFilter> => {
  const patientName = blankToNull(criteria.patientName)
  const providerName = blankToNull(criteria.providerName)
  const search = blankToNull(criteria.search)
  const patient = (text: string) => nameMatches(sql, "pa.first_name", "pa.last_name", text)
  const provider = (text: string) => nameMatches(sql, "pu.first_name", "pu.last_name", text)
  return [
    patientName !== null && patient(patientName),
    providerName !== null && provider(providerName),
    search !== null && (alsoSearched === undefined
      ? sql`(${patient(search)} OR ${provider(search)})`
      : sql`(${patient(search)} OR ${provider(search)} OR ${alsoSearched(likePattern(search))})`)
  ]
}

/** A calendar day: `YYYY-MM-DD` text (a parameter) or a `date` expression. */
export type Day = string | Statement.Fragment

const dateOf = (sql: SqlClient, day: Day) => typeof day === "string" ? sql`${day}::date` : sql`(${day})`

/** The instant a calendar day starts on the wall clock of `zone` (an IANA name, or `UTC`). */
export const dayStartIn = (sql: SqlClient, day: Day, zone: string): Statement.Fragment =>
  sql`(${dateOf(sql, day)}::timestamp AT TIME ZONE ${zone})`

/** The instant the day after `day` starts in `zone`: the end, excluded, of a range that includes `day`. */
export const dayEndIn = (sql: SqlClient, day: Day, zone: string): Statement.Fragment =>
  sql`((${dateOf(sql, day)} + 1)::timestamp AT TIME ZONE ${zone})`

/** A list's filters on a timestamp column for a range of days in `zone`, each end optional. */
export const zonedDayFilters = (
  sql: SqlClient,
  column: string,
  range: { readonly startDate?: string | null | undefined; readonly endDate?: string | null | undefined },
  zone: string
): Array<ListFilter> => [
  range.startDate != null && sql`${sql.literal(column)} >= ${dayStartIn(sql, range.startDate, zone)}`,
  range.endDate != null && sql`${sql.literal(column)} < ${dayEndIn(sql, range.endDate, zone)}`
]
