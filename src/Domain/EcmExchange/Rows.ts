/**
 * The files' rows from what the record says (docs/ecm-exchange.md "How each column is derived"):
 * pure builders over one member's RTF record, or one outreach attempt's OTF record, as the
 * repository reads them (days as `YYYY-MM-DD`). Values the record cannot know stay blank.
 */
import type { EventType } from "../Ecm/Activity.js"
import { reportPhone } from "../Ecm/PrtfReport.js"
import type { Cell, OtfSource, RtfSource } from "./Files.js"

/** What every row of a file repeats: the plan, the period, the production day. */
export interface FileHeader {
  readonly mcpId: string
  readonly mcpName: string
  readonly providerTin: string | null
  readonly providerType: string | null
  readonly startDate: string
  readonly endDate: string
  readonly producedOn: string
}

/** One member of the plan authorised in the period, as the RTF statement reads them. */
export interface RtfRecord {
  readonly cin: string | null
  readonly last_name: string
  readonly first_name: string
  readonly address: string | null
  readonly city: string | null
  readonly state: string | null
  readonly zip: string | null
  readonly phone: string | null
  /** The plan's last MIF record of the member: address and phone as the file had them. */
  readonly mif_address: string | null
  readonly mif_city: string | null
  readonly mif_state: string | null
  readonly mif_zip: string | null
  readonly mif_phone: string | null
  readonly homelessness_indicator: string | null
  readonly pof_indicator: string | null
  readonly pof: string | null
  readonly ecm_status: string | null
  readonly status_day: string | null
  readonly status_reason: string | null
  readonly acuity_level: string | null
  readonly enrollment_start: string | null
  readonly enrollment_end: string | null
  readonly assessment_started: string | null
  readonly assessment_completed: string | null
  readonly last_encounter: string | null
  readonly lcm_name: string | null
  readonly lcm_phone: string | null
  readonly lcm_email: string | null
  readonly in_person: number
  readonly telephonic_video: number
  readonly provider_name: string | null
  readonly provider_npi: string | null
  readonly provider_phone: string | null
}

/** One outreach attempt, as the OTF statement reads it. */
export interface OtfRecord {
  readonly patient_id: number
  readonly cin: string | null
  readonly last_name: string
  readonly first_name: string
  readonly provider_name: string | null
  readonly provider_npi: string | null
  readonly outreach_day: string
  readonly event_type: EventType
  readonly status: string
  /** The event's minutes (calls, appointments), else null. */
  readonly duration: number | null
  /** The activity's recorded minutes, else null. */
  readonly activity_duration: number | null
  /** The member texted back within `responseWindowHours` of the attempt. */
  readonly responded: boolean
}

/** How long after a text or email a reply from the member counts as the attempt succeeding. */
export const responseWindowHours = 72

const disenrolled = "disenrolled"

const normalisedText = (text: string | null) => (text ?? "").trim().replace(/\s+/g, " ").toLowerCase()
/** Digits of a phone number, the last ten (a NANP number with or without its `+1`). */
const phoneDigits = (phone: string | null) => (phone ?? "").replace(/\D/g, "").slice(-10)

/** `Y` when the address differs from the plan's last MIF record of the member, else `N`. */
export const newAddressIndicator = (r: RtfRecord): "Y" | "N" =>
  [[r.address, r.mif_address], [r.city, r.mif_city], [r.state, r.mif_state], [r.zip, r.mif_zip]]
      .some(([ours, theirs]) => normalisedText(ours ?? null) !== normalisedText(theirs ?? null))
    ? "Y"
    : "N"

/** `Y` when the phone number differs (as digits) from the plan's last MIF record of the member, else `N`. */
export const newPhoneIndicator = (r: RtfRecord): "Y" | "N" => (phoneDigits(r.phone) !== phoneDigits(r.mif_phone) ? "Y" : "N")

/** The reporting period as the file says it: its first and last day. */
export const reportingPeriod = (header: FileHeader) => `${header.startDate} to ${header.endDate}`

/** The RTF row of a member: every source column. */
export const rtfCells = (header: FileHeader, r: RtfRecord): Record<RtfSource, Cell> => {
  const discontinued = r.ecm_status === disenrolled
  return {
    mcp_id: header.mcpId,
    mcp_name: header.mcpName,
    cin: r.cin,
    last_name: r.last_name,
    first_name: r.first_name,
    new_address_indicator: newAddressIndicator(r),
    homelessness_indicator: r.homelessness_indicator,
    address: r.address,
    city: r.city,
    state: r.state,
    zip: r.zip,
    new_phone_indicator: newPhoneIndicator(r),
    phone: reportPhone(r.phone),
    pof_indicator: r.pof_indicator,
    pof: r.pof,
    ecm_status: r.ecm_status,
    acuity_level: r.acuity_level,
    enrollment_start: r.enrollment_start,
    enrollment_end: r.enrollment_end,
    // Not kept by the record: blank, never invented.
    care_plan_revision: null,
    care_conference: null,
    assessment_started: r.assessment_started,
    assessment_completed: r.assessment_completed,
    last_encounter: r.last_encounter,
    lcm_name: r.lcm_name,
    lcm_phone: reportPhone(r.lcm_phone),
    lcm_email: r.lcm_email,
    discontinuation_date: discontinued ? r.status_day : null,
    // Reasons are kept as free text; DHCS's code list is not: the code stays blank.
    discontinuation_reason_code: null,
    discontinuation_reason: discontinued ? r.status_reason : null,
    in_person: r.in_person,
    telephonic_video: r.telephonic_video,
    production_date: header.producedOn,
    reporting_period: reportingPeriod(header),
    provider_name: r.provider_name,
    provider_npi: r.provider_npi,
    provider_tin: header.providerTin,
    provider_phone: reportPhone(r.provider_phone)
  }
}

/** DHCS's outreach methods. */
export type OutreachMethod = "In Person" | "Phone" | "Text" | "Email" | "Other Electronic"

/** The method of an attempt by its event type (tasks are never attempts). */
export const outreachMethodOf = (type: EventType): OutreachMethod =>
  type === "call" ? "Phone" : type === "sms" ? "Text" : type === "email" ? "Email" : type === "task" ? "Other Electronic" : "In Person"

/**
 * Whether the attempt reached the member: a call that connected (completed with minutes), an
 * appointment or meeting held (complete), a text or email the member answered by text.
 */
export const outreachSuccessful = (r: OtfRecord): boolean => {
  switch (r.event_type) {
    case "call":
      return r.status === "complete" && r.duration !== null && r.duration > 0
    case "appointment":
    case "meeting":
      return r.status === "complete"
    case "sms":
    case "email":
      return r.responded
    case "task":
      return false
  }
}

/** Minutes spent: the call's (or appointment's) duration, else the activity's recorded time, else blank. */
export const outreachMinutes = (r: OtfRecord): number | null => r.duration ?? r.activity_duration

/** The OTF row of an attempt: every source column. */
export const otfCells = (header: FileHeader, r: OtfRecord): Record<OtfSource, Cell> => ({
  mcp_id: header.mcpId,
  mcp_name: header.mcpName,
  provider_name: r.provider_name,
  provider_npi: r.provider_npi,
  provider_tin: header.providerTin,
  client_name: `${r.first_name} ${r.last_name}`,
  cin: r.cin,
  provider_type: header.providerType,
  outreach_date: r.outreach_day,
  outreach_method: outreachMethodOf(r.event_type),
  outreach_successful: outreachSuccessful(r) ? "Y" : "N",
  minutes: outreachMinutes(r)
})
