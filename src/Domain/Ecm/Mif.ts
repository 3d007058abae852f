/**
 * Member information files (ECM §2.6, §4.6): the input field mapping and the pure rules that turn
 * one raw record of a file (cells as a CSV, XML or XLSX reader produced them) into a checked
 * member record, or the list of its problems.
 */
import { Schema } from "effect"

export const MifFileType = Schema.Literal("csv", "xml", "xlsx")
export type MifFileType = typeof MifFileType.Type

export const MifSourceType = Schema.Literal("base64", "url", "path")
export type MifSourceType = typeof MifSourceType.Type

export const MifStatus = Schema.Literal("pending", "processing", "completed", "failed")
export type MifStatus = typeof MifStatus.Type

/** The data URI prefix of each file type (§4.6). */
export const dataUriPrefixes: Readonly<Record<MifFileType, string>> = {
  csv: "data:text/csv;base64,",
  xml: "data:text/xml;base64,",
  xlsx: "data:application/vnd.openxmlformats-officedocument.spreadsheetml.sheet;base64,"
}

export const contentTypes: Readonly<Record<MifFileType, string>> = {
  csv: "text/csv",
  xml: "text/xml",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
}

/** Stored fields in the order of the §2.6 mapping; input columns are these upper-cased. */
export const mifFields = [
  "member_id", "cin", "first_name", "last_name", "date_of_birth", "gender", "address", "city", "state", "zip",
  "phone", "ecm_service_auth_id", "ecm_provider_name", "ecm_npi", "ecm_benefit_auth_eff_date",
  "ecm_benefit_auth_end_date", "acuity_level", "member_record_status"
] as const
export type MifField = (typeof mifFields)[number]

/**
 * Input column name (trimmed, any case) → stored field. `DOB` is the spec's column for the date of
 * birth; `MEMBER_RECORD_STATUS` is optional (the spec does not list it, plans do send it).
 */
export const fieldOfColumn = (column: string): MifField | undefined => {
  const key = column.trim().toLowerCase().replace(/[\s-]+/g, "_")
  if (key === "dob") return "date_of_birth"
  return (mifFields as ReadonlyArray<string>).includes(key) ? (key as MifField) : undefined
}

/** A cell as a reader produced it: text (CSV, XML, XLSX text), or an XLSX number or date. */
export type Cell = string | number | Date | null | undefined

export interface RawRecord {
  /** The record's line: the header is line 1 (XML: the Member element's position, from 1). */
  readonly line: number
  /** How messages name the record; `Line <line>` unless set (XML: `Member 3`). */
  readonly label?: string
  readonly cells: Partial<Record<MifField, Cell>>
}

/** A checked record: text fields trimmed (null when blank), dates as YYYY-MM-DD. */
export interface MemberRecord {
  readonly line: number
  readonly member_id: string | null
  readonly cin: string | null
  readonly first_name: string
  readonly last_name: string
  readonly date_of_birth: string
  readonly gender: string | null
  readonly address: string | null
  readonly city: string | null
  readonly state: string | null
  readonly zip: string | null
  /** As the file had it (the eligibility record keeps the raw text). */
  readonly phone: string | null
  /** E.164 when the phone is a dialable number; the patient keeps this one. */
  readonly phone_e164: string | null
  readonly ecm_service_auth_id: string | null
  readonly ecm_provider_name: string | null
  readonly ecm_npi: string | null
  readonly ecm_benefit_auth_eff_date: string | null
  readonly ecm_benefit_auth_end_date: string | null
  readonly acuity_level: string | null
  readonly member_record_status: string | null
}

export type Checked =
  | { readonly _tag: "Valid"; readonly record: MemberRecord }
  | { readonly _tag: "Invalid"; readonly problems: ReadonlyArray<string> }

/** Longest text a field may hold: generous for plan data, small enough to refuse garbage. */
export const maxFieldLength = 500

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

/**
 * YYYY-MM-DD of a real day (years 1000–9999, Gregorian), or undefined. Arithmetic rather than a
 * `Date` per check: three dates a record, 300,000 objects for a 100,000-row file.
 */
const isoDay = (year: number, month: number, day: number): string | undefined => {
  if (year < 1000 || year > 9999 || month < 1 || month > 12 || day < 1) return undefined
  if (day > (month === 2 && isLeapYear(year) ? 29 : daysInMonth[month - 1]!)) return undefined
  return `${year}-${pad(month)}-${pad(day)}`
}

/**
 * A date cell: MM-DD-YYYY (the spec's format; `/` separators and one-digit month or day accepted,
 * as spreadsheets write them), YYYY-MM-DD, or an XLSX date cell. Undefined when not a real date.
 */
export const parseMifDate = (cell: Cell): string | undefined => {
  if (cell instanceof Date) {
    // XLSX date cells carry no zone: exceljs returns the wall-clock day at UTC midnight.
    return Number.isNaN(cell.getTime()) ? undefined : isoDay(cell.getUTCFullYear(), cell.getUTCMonth() + 1, cell.getUTCDate())
  }
  if (typeof cell !== "string") return undefined
  const text = cell.trim()
  const us = /^(\d{1,2})[-/](\d{1,2})[-/](\d{4})$/.exec(text)
  if (us) return isoDay(Number(us[3]), Number(us[1]), Number(us[2]))
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (iso) return isoDay(Number(iso[1]), Number(iso[2]), Number(iso[3]))
  return undefined
}

/** A text cell: numbers as written (integers without exponent), blank → null. */
export const cellText = (cell: Cell): string | null => {
  if (cell === null || cell === undefined) return null
  if (cell instanceof Date) return Number.isNaN(cell.getTime()) ? null : cell.toISOString().slice(0, 10)
  const text = typeof cell === "number"
    ? (Number.isInteger(cell) ? BigInt(cell).toString() : String(cell))
    : cell.trim()
  return text.length === 0 ? null : text
}

/**
 * A ZIP code cell. A spreadsheet that typed the column as numbers dropped its leading zeros
 * (`00501` → 501): a number is padded from the left to the 5 or 9 digits of a US ZIP (ZIP+4 kept
 * as 9 digits, as the number held them). Text is taken as written.
 */
export const zipText = (cell: Cell): string | null => {
  const text = cellText(cell)
  if (typeof cell !== "number" || text === null || !/^\d+$/.test(text)) return text
  return text.length <= 5 ? text.padStart(5, "0") : text.length <= 9 ? text.padStart(9, "0") : text
}

const nanp = /^(?:\+?1)?([2-9]\d{2})([2-9]\d{6})$/

/**
 * E.164 of a US number written with any punctuation (10 digits, optionally a leading 1), or
 * undefined. The fast path for MIF phones: libphonenumber costs ~14 µs a number, 1.4 s per 100,000
 * rows; `fallback` handles every other form.
 */
export const usPhoneE164 = (text: string, fallback: (text: string) => string | undefined): string | undefined => {
  const digits = text.replace(/[\s().-]/g, "")
  const match = nanp.exec(digits)
  if (match) {
    // N11 codes (211, 311 … 911) are service codes, not area codes.
    if (match[1]!.slice(1) === "11") return undefined
    return `+1${match[1]}${match[2]}`
  }
  return fallback(text)
}

const labels: Readonly<Record<MifField, string>> = {
  member_id: "Member id",
  cin: "Cin",
  first_name: "First name",
  last_name: "Last name",
  date_of_birth: "Dob",
  gender: "Gender",
  address: "Address",
  city: "City",
  state: "State",
  zip: "Zip",
  phone: "Phone",
  ecm_service_auth_id: "Ecm service auth",
  ecm_provider_name: "Ecm provider name",
  ecm_npi: "Ecm npi",
  ecm_benefit_auth_eff_date: "Ecm benefit auth eff date",
  ecm_benefit_auth_end_date: "Ecm benefit auth end date",
  acuity_level: "Acuity level",
  member_record_status: "Member record status"
}

const dateFields = ["ecm_benefit_auth_eff_date", "ecm_benefit_auth_end_date"] as const
const textFields = [
  "member_id", "cin", "first_name", "last_name", "gender", "address", "city", "state", "zip", "phone",
  "ecm_service_auth_id", "ecm_provider_name", "ecm_npi", "acuity_level", "member_record_status"
] as const

/**
 * Checks one record: first name, last name and date of birth present; every date a real date;
 * no text over `maxFieldLength` or holding a NUL. Problems read `Line 7: Dob is invalid`.
 */
export const checkRecord = (raw: RawRecord, phoneFallback: (text: string) => string | undefined): Checked => {
  const problems: Array<string> = []
  const at = (field: MifField, message: string) => problems.push(`${raw.label ?? `Line ${raw.line}`}: ${labels[field]} ${message}`)
  const text: Partial<Record<MifField, string | null>> = {}
  for (const field of textFields) {
    // Other number cells keep their digits as written (`cellText`): ids have no fixed width to pad
    // to, and a US phone never starts with 0.
    const value = field === "zip" ? zipText(raw.cells.zip) : cellText(raw.cells[field])
    if (value !== null && value.length > maxFieldLength) at(field, `is too long (maximum is ${maxFieldLength} characters)`)
    else if (value !== null && value.includes("\u0000")) at(field, "must not contain null characters")
    text[field] = value
  }
  if (text.first_name == null) at("first_name", "can't be blank")
  if (text.last_name == null) at("last_name", "can't be blank")
  const dobCell = raw.cells.date_of_birth
  const dob = parseMifDate(dobCell)
  if (cellText(dobCell) === null) at("date_of_birth", "can't be blank")
  else if (dob === undefined) at("date_of_birth", "is invalid")
  const dates: Partial<Record<MifField, string | null>> = {}
  for (const field of dateFields) {
    const cell = raw.cells[field]
    if (cellText(cell) === null) {
      dates[field] = null
      continue
    }
    const day = parseMifDate(cell)
    if (day === undefined) at(field, "is invalid")
    dates[field] = day ?? null
  }
  if (problems.length > 0) return { _tag: "Invalid", problems }
  const phone = text.phone ?? null
  return {
    _tag: "Valid",
    record: {
      line: raw.line,
      member_id: text.member_id ?? null,
      cin: text.cin ?? null,
      first_name: text.first_name!,
      last_name: text.last_name!,
      date_of_birth: dob!,
      gender: text.gender ?? null,
      address: text.address ?? null,
      city: text.city ?? null,
      state: text.state ?? null,
      zip: text.zip ?? null,
      phone,
      phone_e164: phone === null ? null : usPhoneE164(phone, phoneFallback) ?? null,
      ecm_service_auth_id: text.ecm_service_auth_id ?? null,
      ecm_provider_name: text.ecm_provider_name ?? null,
      ecm_npi: text.ecm_npi ?? null,
      ecm_benefit_auth_eff_date: dates.ecm_benefit_auth_eff_date ?? null,
      ecm_benefit_auth_end_date: dates.ecm_benefit_auth_end_date ?? null,
      acuity_level: text.acuity_level ?? null,
      member_record_status: text.member_record_status === undefined || text.member_record_status === null
        ? null
        : text.member_record_status.toLowerCase().replace(/[\s-]+/g, "_")
    }
  }
}

/** Detects the type of file content: XLSX is a ZIP, XML starts with `<`, anything else is CSV text. */
export const sniffFileType = (bytes: Uint8Array): MifFileType | undefined => {
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return "xlsx"
  let i = 0
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3
  while (i < bytes.length && i < 4096 && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
  if (i >= bytes.length) return undefined
  if (bytes[i] === 0x3c) return "xml"
  // Text with a comma or tab in its first line reads as CSV; binary or one-column junk does not.
  const head = new TextDecoder("latin1").decode(bytes.subarray(i, Math.min(bytes.length, i + 4096)))
  const firstLine = head.split(/\r?\n/)[0] ?? ""
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000e-\u001f]/.test(head)) return undefined
  return /[,\t]/.test(firstLine) ? "csv" : undefined
}

/** The type named by a file name's extension. */
export const fileTypeOfName = (name: string): MifFileType | undefined => {
  const ext = /\.([A-Za-z]+)$/.exec(name.split(/[?#]/)[0] ?? "")?.[1]?.toLowerCase()
  return ext === "csv" || ext === "xml" || ext === "xlsx" ? ext : ext === "tsv" || ext === "txt" ? "csv" : undefined
}
