/**
 * The state's return files (docs/ecm-exchange.md): the DHCS Return Transmission File (RTF) and
 * Outreach Tracker File (OTF) — their source columns in the DHCS standard's order with its headers,
 * and the exchange profile (a plan's variant: which columns under which headers in which order,
 * date format, delimiter, file format, file name) with its rendering of cells, lines and names.
 */
import { formulaStart } from "../Csv.js"

export const fileKinds = ["rtf", "otf"] as const
export type FileKind = (typeof fileKinds)[number]

/** RTF source columns and their DHCS headers, in the standard's order (38). */
export const rtfStandard = [
  ["mcp_id", "Primary Payer (MCP) Identifier"],
  ["mcp_name", "MCP Name"],
  ["cin", "Member Client Index Number (CIN)"],
  ["last_name", "Member Last Name"],
  ["first_name", "Member First Name"],
  ["new_address_indicator", "Member New Address Indicator"],
  ["homelessness_indicator", "Member Homelessness Indicator"],
  ["address", "Member Residential Address"],
  ["city", "Member Residential City"],
  ["state", "Member Residential State"],
  ["zip", "Member Residential Zip"],
  ["new_phone_indicator", "Member New Phone Number Indicator"],
  ["phone", "Member Phone Number"],
  ["pof_indicator", "Member POF Indicator"],
  ["pof", "Member POF"],
  ["ecm_status", "Member ECM Status"],
  ["acuity_level", "Member Acuity Level"],
  ["enrollment_start", "ECM Enrollment Start Date"],
  ["enrollment_end", "ECM Enrollment End Date"],
  ["care_plan_revision", "Date of Latest Care Plan Revision"],
  ["care_conference", "Date of Most Recent Care Conference"],
  ["assessment_started", "Date Assessment Started"],
  ["assessment_completed", "Date of Most Recent Completed Assessment"],
  ["last_encounter", "Date of Most Recent Encounter with Member"],
  ["lcm_name", "ECM Lead Care Manager Name"],
  ["lcm_phone", "ECM Lead Care Manager Name Phone Number"],
  ["lcm_email", "ECM Lead Care Manager Email"],
  ["discontinuation_date", "Discontinuation Date"],
  ["discontinuation_reason_code", "Discontinuation Reason Code"],
  ["discontinuation_reason", "Discontinuation Reason"],
  ["in_person", "In Person"],
  ["telephonic_video", "Telephonic/Video"],
  ["production_date", "Member Information Return Transmission File Production Date"],
  ["reporting_period", "Member Information File Reporting Period"],
  ["provider_name", "ECM Provider Name"],
  ["provider_npi", "ECM Provider NPI"],
  ["provider_tin", "ECM Provider TIN"],
  ["provider_phone", "ECM Provider Phone Number"]
] as const

/** OTF source columns and their DHCS headers, in the standard's order (12). */
export const otfStandard = [
  ["mcp_id", "Primary Payer (MCP) Identifier"],
  ["mcp_name", "MCP Name"],
  ["provider_name", "ECM Provider Name"],
  ["provider_npi", "NPI"],
  ["provider_tin", "TIN"],
  ["client_name", "Client Name"],
  ["cin", "Member Client Index Number"],
  ["provider_type", "Provider Type"],
  ["outreach_date", "Date of Outreach Attempt"],
  ["outreach_method", "Outreach Attempt Method"],
  ["outreach_successful", "Outreach Attempt Successful"],
  ["minutes", "Time Spent Performing Outreach"]
] as const

export type RtfSource = (typeof rtfStandard)[number][0]
export type OtfSource = (typeof otfStandard)[number][0]

export const standardOf: Record<FileKind, ReadonlyArray<readonly [string, string]>> = { rtf: rtfStandard, otf: otfStandard }

/** The source columns a profile of the file may name. */
export const sourcesOf = (kind: FileKind): ReadonlyArray<string> => standardOf[kind].map(([source]) => source)

/** Columns holding a day (`YYYY-MM-DD` in the record): written in the profile's date format. */
export const dateSources: ReadonlySet<string> = new Set([
  "enrollment_start", "enrollment_end", "care_plan_revision", "care_conference", "assessment_started",
  "assessment_completed", "last_encounter", "discontinuation_date", "production_date", "outreach_date"
])

export const dateFormats = ["YYYY-MM-DD", "MM/DD/YYYY", "YYYYMMDD"] as const
export type DateFormat = (typeof dateFormats)[number]
export const delimiters = ["comma", "pipe", "tab"] as const
export type Delimiter = (typeof delimiters)[number]
export const fileFormats = ["csv", "xlsx"] as const
export type FileFormat = (typeof fileFormats)[number]

const delimiterChar: Record<Delimiter, string> = { comma: ",", pipe: "|", tab: "\t" }

export interface ProfileColumn {
  readonly source: string
  readonly header: string
}

/** What a file is written with; stored with each report as it was when the report was asked for. */
export interface ExchangeProfile {
  /** Null: the DHCS standard (no profile of the plan). */
  readonly id: number | null
  readonly columns: ReadonlyArray<ProfileColumn>
  readonly date_format: DateFormat
  readonly delimiter: Delimiter
  readonly file_format: FileFormat
  readonly file_name_pattern: string
}

/** The default file name: `RTF_<MCP id>_<YYYYMM of the period's end>_<YYYYMMDD of production>` + extension. */
export const standardFileNamePattern = (kind: FileKind) => `${kind.toUpperCase()}_{mcp_id}_{period_end:YYYYMM}_{produced:YYYYMMDD}`

/** The DHCS standard: every column, its header, ISO dates, commas, CSV. */
export const standardProfile = (kind: FileKind): ExchangeProfile => ({
  id: null,
  columns: standardOf[kind].map(([source, header]) => ({ source, header })),
  date_format: "YYYY-MM-DD",
  delimiter: "comma",
  file_format: "csv",
  file_name_pattern: standardFileNamePattern(kind)
})

/** A `YYYY-MM-DD` day in the profile's format. */
export const formatDay = (day: string, format: DateFormat): string => {
  const y = day.slice(0, 4)
  const m = day.slice(5, 7)
  const d = day.slice(8, 10)
  return format === "YYYY-MM-DD" ? day : format === "MM/DD/YYYY" ? `${m}/${d}/${y}` : `${y}${m}${d}`
}

/** A cell: text, a count, or blank. */
export type Cell = string | number | null

/** The profile's cells of a record (source → value): its columns in its order, days in its format. */
export const projectRow = (profile: ExchangeProfile, record: Readonly<Record<string, Cell>>): Array<Cell> =>
  profile.columns.map(({ source }) => {
    const value = record[source] ?? null
    return typeof value === "string" && dateSources.has(source) && /^\d{4}-\d{2}-\d{2}$/.test(value)
      ? formatDay(value, profile.date_format)
      : value
  })

export const headerRow = (profile: ExchangeProfile): Array<string> => profile.columns.map((column) => column.header)

/**
 * One delimited cell: quoted when it holds the delimiter, a quote, CR or LF, or leading/trailing
 * spaces (quotes doubled); a text a spreadsheet would run as a formula gets a leading `'`.
 */
export const delimitedCell = (cell: Cell, delimiter: Delimiter): string => {
  if (cell === null) return ""
  if (typeof cell === "number") return String(cell)
  const sep = delimiterChar[delimiter]
  const text = formulaStart.test(cell) ? `'${cell}` : cell
  const quote = text !== cell || text.includes(sep) || /[",\r\n]|^\s|\s$/.test(text)
  return quote ? `"${text.replace(/"/g, "\"\"")}"` : text
}

/** Rows as delimited lines, each ending with CRLF. */
export const delimitedLines = (rows: ReadonlyArray<ReadonlyArray<Cell>>, delimiter: Delimiter): string => {
  const sep = delimiterChar[delimiter]
  let text = ""
  for (const row of rows) text += row.map((cell) => delimitedCell(cell, delimiter)).join(sep) + "\r\n"
  return text
}

/** The placeholders a file name pattern may use. */
export const fileNamePlaceholders = [
  "{mcp_id}", "{plan_id}", "{period_start:YYYYMMDD}", "{period_end:YYYYMMDD}", "{period_end:YYYYMM}", "{produced:YYYYMMDD}",
  "{report_id}"
] as const

const placeholder = /\{[^{}]*\}/g
/** Characters a file name keeps; anything else (slashes, spaces, controls) becomes `_`. */
const unsafeName = /[^A-Za-z0-9._-]/g

/** The pattern's unknown placeholders (empty when it is valid). */
export const unknownPlaceholders = (pattern: string): Array<string> =>
  (pattern.match(placeholder) ?? []).filter((p) => !(fileNamePlaceholders as ReadonlyArray<string>).includes(p))

export interface FileNameValues {
  readonly mcpId: string
  readonly planId: number
  readonly startDate: string
  readonly endDate: string
  readonly producedOn: string
  readonly reportId: number
}

const compact = (day: string) => day.replace(/-/g, "")

/** The file's name: the pattern's placeholders filled, unsafe characters replaced, the format's extension. */
export const fileNameOf = (pattern: string, format: FileFormat, values: FileNameValues): string => {
  const filled = pattern
    .replaceAll("{mcp_id}", values.mcpId)
    .replaceAll("{plan_id}", String(values.planId))
    .replaceAll("{period_start:YYYYMMDD}", compact(values.startDate))
    .replaceAll("{period_end:YYYYMMDD}", compact(values.endDate))
    .replaceAll("{period_end:YYYYMM}", compact(values.endDate).slice(0, 6))
    .replaceAll("{produced:YYYYMMDD}", compact(values.producedOn))
    .replaceAll("{report_id}", String(values.reportId))
  return `${filled.replace(unsafeName, "_")}.${format}`
}

/**
 * Why a profile cannot be used (empty when it can): only the file's source columns, each at most
 * once, at least one, headers not blank; a file name pattern of known placeholders.
 */
export const profileProblems = (kind: FileKind, profile: Omit<ExchangeProfile, "id">): Array<string> => {
  const problems: Array<string> = []
  const known = sourcesOf(kind)
  if (profile.columns.length === 0) problems.push("Columns can't be empty")
  const seen = new Set<string>()
  for (const column of profile.columns) {
    if (!known.includes(column.source)) problems.push(`Column source ${JSON.stringify(column.source)} is not a ${kind.toUpperCase()} column`)
    else if (seen.has(column.source)) problems.push(`Column source ${JSON.stringify(column.source)} appears more than once`)
    seen.add(column.source)
    if (column.header.trim() === "") problems.push(`Column header of ${JSON.stringify(column.source)} can't be blank`)
  }
  if (profile.file_name_pattern.trim() === "") problems.push("File name pattern can't be blank")
  for (const p of unknownPlaceholders(profile.file_name_pattern)) problems.push(`File name pattern has an unknown placeholder ${p}`)
  return problems
}
