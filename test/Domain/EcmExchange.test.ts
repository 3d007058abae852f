/** The return files' pure parts: profiles, cells, names, and the row builders' derived columns. */
import { describe, expect, it } from "vitest"
import {
  delimitedLines, fileNameOf, formatDay, otfStandard, profileProblems, projectRow, rtfStandard, standardProfile
} from "../../src/Domain/EcmExchange/Files.js"
import { newAddressIndicator, newPhoneIndicator, type OtfRecord, outreachMinutes, outreachSuccessful, otfCells, type RtfRecord, rtfCells } from "../../src/Domain/EcmExchange/Rows.js"

const header = { mcpId: "MCP", mcpName: "Plan", providerTin: "9", providerType: "ECM", startDate: "2026-01-01", endDate: "2026-03-31", producedOn: "2026-04-02" }

const rtfRecord: RtfRecord = {
  cin: "C", last_name: "L", first_name: "F", address: "1 Main St", city: "Oakland", state: "CA", zip: "94612", phone: "+15105550100",
  mif_address: " 1  main st", mif_city: "OAKLAND", mif_state: "CA", mif_zip: "94612", mif_phone: "(510) 555-0100",
  homelessness_indicator: null, pof_indicator: null, pof: null, ecm_status: "enrolled", status_day: "2026-02-01", status_reason: "Consented",
  acuity_level: null, enrollment_start: "2026-02-01", enrollment_end: null, assessment_started: null, assessment_completed: null,
  last_encounter: null, lcm_name: null, lcm_phone: null, lcm_email: null, in_person: 0, telephonic_video: 0, provider_name: null,
  provider_npi: null, provider_phone: null
}

const otfRecord: OtfRecord = {
  patient_id: 1, cin: "C", last_name: "L", first_name: "F", provider_name: null, provider_npi: null, outreach_day: "2026-01-02",
  event_type: "call", status: "complete", duration: 3, activity_duration: 9, responded: false
}

describe("exchange profiles", () => {
  it("formats days in each date format", () => {
    expect(["YYYY-MM-DD", "MM/DD/YYYY", "YYYYMMDD"].map((f) => formatDay("2026-03-09", f as never))).toEqual(["2026-03-09", "03/09/2026", "20260309"])
  })

  it("projects a record through a profile: its columns, in its order, days formatted, counts kept", () => {
    const profile = { ...standardProfile("rtf"), date_format: "YYYYMMDD" as const, columns: [{ source: "in_person", header: "N" }, { source: "enrollment_start", header: "S" }] }
    expect(projectRow(profile, rtfCells(header, rtfRecord))).toEqual([0, "20260201"])
  })

  it("quotes for the delimiter in use and neutralises formulas", () => {
    expect(delimitedLines([["a|b", "c,d", "=1+1", 3, null]], "pipe")).toBe("\"a|b\"|\"c,d\"|\"'=1+1\"|3|\r\n")
    expect(delimitedLines([["a\tb", "x"]], "tab")).toBe("\"a\tb\"\tx\r\n")
  })

  it("names files from the pattern, with only safe characters", () => {
    const values = { mcpId: "M/1", planId: 4, startDate: "2026-01-01", endDate: "2026-03-31", producedOn: "2026-04-02", reportId: 7 }
    expect(fileNameOf(standardProfile("otf").file_name_pattern, "csv", values)).toBe("OTF_M_1_202603_20260402.csv")
    expect(fileNameOf("{plan_id} {report_id}-{period_start:YYYYMMDD}", "xlsx", values)).toBe("4_7-20260101.xlsx")
  })

  it("accepts the standards and refuses unknown, repeated or blank columns and unknown placeholders", () => {
    expect(profileProblems("rtf", standardProfile("rtf"))).toEqual([])
    expect(profileProblems("otf", standardProfile("otf"))).toEqual([])
    expect(rtfStandard.length).toBe(38)
    expect(otfStandard.length).toBe(12)
    expect(profileProblems("otf", { ...standardProfile("otf"), columns: [] })).toEqual(["Columns can't be empty"])
    expect(profileProblems("rtf", { ...standardProfile("rtf"), file_name_pattern: "{x}", columns: [{ source: "cin", header: " " }, { source: "minutes", header: "M" }] }))
      .toEqual(["Column header of \"cin\" can't be blank", "Column source \"minutes\" is not a RTF column", "File name pattern has an unknown placeholder {x}"])
  })
})

describe("row builders", () => {
  it("new address and phone compare with the plan's last file, ignoring case, spacing and phone punctuation", () => {
    expect([newAddressIndicator(rtfRecord), newPhoneIndicator(rtfRecord)]).toEqual(["N", "N"])
    expect(newAddressIndicator({ ...rtfRecord, zip: "94613" })).toBe("Y")
    expect(newAddressIndicator({ ...rtfRecord, mif_address: null })).toBe("Y")
    expect(newPhoneIndicator({ ...rtfRecord, mif_phone: null })).toBe("Y")
  })

  it("discontinuation only for a disenrolled member; unknowable columns blank", () => {
    const enrolled = rtfCells(header, rtfRecord)
    expect([enrolled.discontinuation_date, enrolled.discontinuation_reason, enrolled.care_plan_revision, enrolled.care_conference, enrolled.discontinuation_reason_code])
      .toEqual([null, null, null, null, null])
    const gone = rtfCells(header, { ...rtfRecord, ecm_status: "disenrolled", status_day: "2026-03-01", status_reason: "Moved" })
    expect([gone.discontinuation_date, gone.discontinuation_reason]).toEqual(["2026-03-01", "Moved"])
  })

  it("an attempt's success and minutes by its kind", () => {
    expect(outreachSuccessful(otfRecord)).toBe(true)
    expect(outreachSuccessful({ ...otfRecord, duration: 0 })).toBe(false)
    expect(outreachSuccessful({ ...otfRecord, status: "attempted" })).toBe(false)
    expect(outreachSuccessful({ ...otfRecord, event_type: "sms", responded: true })).toBe(true)
    expect(outreachSuccessful({ ...otfRecord, event_type: "email", responded: false })).toBe(false)
    expect(outreachSuccessful({ ...otfRecord, event_type: "meeting" })).toBe(true)
    expect([outreachMinutes(otfRecord), outreachMinutes({ ...otfRecord, duration: null }), outreachMinutes({ ...otfRecord, duration: null, activity_duration: null })])
      .toEqual([3, 9, null])
    expect(otfCells(header, { ...otfRecord, event_type: "appointment" }).outreach_method).toBe("In Person")
  })
})
