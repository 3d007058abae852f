/**
 * The PRTF report file (ECM §2.7, §4.7, docs/prtf.md): its columns in order, its file name, and
 * the classification rule laid out as a table for SQL.
 *
 * One source of truth for what an event counts as: `contactOf` (./Prtf.ts). The report counts
 * events of every included member in one grouped SQL query that joins each event to `ruleTable()`,
 * which is the rule evaluated on every combination of what it reads. SQL reduces an event to that
 * combination: the engagement status on the event's day to "enrolled or not" and the duration to
 * none / zero / positive. test/Domain/Ecm/PrtfReport.test.ts checks that the rule gives the same
 * answer on each class's representative as on any member of the class, and
 * test/Http/Ecm/PrtfRule.test.ts that the report and the counts endpoint give the rule's answer on
 * every event type × status × engagement status × duration class stored in PostgreSQL.
 */
import { type EventStatus, eventStatuses, type EventType, eventTypes } from "./Activity.js"
import type { EngagementStatus } from "./Engagement.js"
import { enrolledStatus, type PrtfCategory, prtfCategories, prtfCategoryOf } from "./Prtf.js"

/** What the rule reads of a duration. SQL computes the same with `durationClassSql`. */
export const durationClasses = ["none", "zero", "positive"] as const
export type DurationClass = (typeof durationClasses)[number]

export const durationClassOf = (duration: number | null): DurationClass =>
  duration === null ? "none" : duration > 0 ? "positive" : "zero"

/** A duration standing for its class when the rule is evaluated. */
export const representativeDuration: Readonly<Record<DurationClass, number | null>> = { none: null, zero: 0, positive: 1 }

/** The same classes in SQL, for an `ecm_events` row aliased `e`. */
export const durationClassSql = "CASE WHEN e.duration IS NULL THEN 'none' WHEN e.duration > 0 THEN 'positive' ELSE 'zero' END"

/** What the rule reads of the engagement status on the event's day: enrolled or not. */
export const isEnrolled = (engagement: EngagementStatus | null): boolean => engagement === enrolledStatus

/** An engagement status standing for its class (not enrolled: no status yet). */
export const representativeEngagement = (enrolled: boolean): EngagementStatus | null => (enrolled ? enrolledStatus : null)

export interface RuleRow {
  readonly event_type: EventType
  readonly status: EventStatus
  readonly enrolled: boolean
  readonly duration_class: DurationClass
  readonly category: PrtfCategory | null
}

/** The rule on every (type, status, enrolled, duration class): 6 × 4 × 2 × 3 rows. */
export const ruleTable = (): ReadonlyArray<RuleRow> =>
  eventTypes.flatMap((event_type) =>
    eventStatuses.flatMap((status) =>
      [false, true].flatMap((enrolled) =>
        durationClasses.map((duration_class) => ({
          event_type,
          status,
          enrolled,
          duration_class,
          category: prtfCategoryOf({ event_type, status, duration: representativeDuration[duration_class] }, representativeEngagement(enrolled))
        })))))

/** Categories that are outreach attempts, and encounters (by name: `…_outreach`, `…_encounters`). */
export const outreachCategories: ReadonlyArray<PrtfCategory> = prtfCategories.filter((c) => c.endsWith("_outreach"))
export const encounterCategories: ReadonlyArray<PrtfCategory> = prtfCategories.filter((c) => c.endsWith("_encounters"))

/** The file's columns, in order. docs/prtf.md gives each one's source. */
export const prtfColumns = [
  "Report Period Start", "Report Period End", "ECM Provider Name", "ECM Provider NPI", "ECM Provider Phone",
  "Member ID (CIN)", "Client Index Number", "Member Last Name", "Member First Name", "Member Date of Birth",
  "Member Gender", "Member Residential Address", "Member Residential City", "Member Residential State",
  "Member Residential Zip", "Member Phone Number", "ECM Service Authorization ID",
  "ECM Benefit Authorization Effective Date", "ECM Benefit Authorization End Date", "Acuity Level",
  "Member Record Status", "ECM Enrollment Start Date", "ECM Enrollment End Date", "Current Engagement Status",
  "Engagement Status Effective Date", "Previous Engagement Status", "Previous Engagement Status Date",
  "Date of First Outreach Attempt", "Date of Most Recent Outreach Attempt", "Date of Most Recent Encounter",
  "Telehealth Encounters", "In-Person Encounters", "Telehealth Outreach Attempts", "In-Person Outreach Attempts",
  "Total Encounters", "Total Outreach Attempts", "SMS Count", "Call Count", "Email Count", "Appointment Count",
  "Meeting Count", "Task Count", "Total Call Minutes", "Date of Most Recent Completed Assessment (Form C)",
  "Outreach Lead Care Manager Name", "Outreach Lead Care Manager Email", "Intensive Lead Care Manager Name",
  "Intensive Lead Care Manager Email", "Discontinuation Date", "Discontinuation Reason", "Report Production Date"
] as const
export type PrtfColumn = (typeof prtfColumns)[number]

/** A cell: text (neutralised against formulas when written), a count, or empty. */
export type Cell = string | number | null

/** `2026-03-31` → `032026`; `2026-04-02` → `04022026`. */
const mmyyyy = (day: string) => `${day.slice(5, 7)}${day.slice(0, 4)}`
const mmddyyyy = (day: string) => `${day.slice(5, 7)}${day.slice(8, 10)}${day.slice(0, 4)}`

/** `PRTF_<NPI or ALL>_<MMYYYY of end_date>_<MMDDYYYY of generation>.csv` (ECM §2.7). */
export const prtfFilename = (npi: string | null, endDate: string, generatedOn: string) =>
  `PRTF_${npi ?? "ALL"}_${mmyyyy(endDate)}_${mmddyyyy(generatedOn)}.csv`

/** An NPI as §4.7 takes it: exactly 10 digits. */
export const npiPattern = /^[0-9]{10}$/

/** Formula neutralisation is the shared CSV rule (src/Domain/Csv.ts). */
export { formulaStart, neutralised } from "../Csv.js"

/**
 * A phone number for the report: NANP numbers (`+1` and ten digits, how patients' phones are
 * stored) as the ten digits health plans' files use; anything else as stored.
 */
export const reportPhone = (phone: string | null): string | null =>
  phone === null ? null : /^\+1[0-9]{10}$/.test(phone) ? phone.slice(2) : phone
