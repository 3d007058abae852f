import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { cellText, checkRecord, fieldOfColumn, fileTypeOfName, parseMifDate, sniffFileType, usPhoneE164, zipText } from "../../../src/Domain/Ecm/Mif.js"

const noFallback = () => undefined

describe("MIF rules", () => {
  it("reads every real day written MM-DD-YYYY, M/D/YYYY or YYYY-MM-DD, and no other", () => {
    fc.assert(fc.property(fc.date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true }), (date) => {
      const iso = date.toISOString().slice(0, 10)
      const [y, m, d] = iso.split("-")
      expect(parseMifDate(`${m}-${d}-${y}`)).toBe(iso)
      expect(parseMifDate(`${Number(m)}/${Number(d)}/${y}`)).toBe(iso)
      expect(parseMifDate(iso)).toBe(iso)
      expect(parseMifDate(new Date(`${iso}T00:00:00.000Z`))).toBe(iso)
    }))
    for (const bad of ["02-30-1990", "13-01-2000", "00-10-2000", "1-1-90", "2000/01/01", "0999-01-01", "today", "", "01-01-2000x"]) {
      expect(parseMifDate(bad)).toBeUndefined()
    }
    expect(parseMifDate(36526)).toBeUndefined()
    // Day 29–31 of every month of any year: a real day exactly when the calendar has it.
    fc.assert(fc.property(fc.integer({ min: 1000, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 28, max: 31 }), (y, m, d) => {
      const date = new Date(Date.UTC(y, m - 1, d))
      const real = date.getUTCMonth() === m - 1
      expect(parseMifDate(`${m}/${d}/${y}`)).toBe(real ? date.toISOString().slice(0, 10) : undefined)
    }), { numRuns: 2000 })
    for (const [day, real] of [["02-29-2000", true], ["02-29-1900", false], ["02-29-2024", true], ["02-29-2023", false]] as const) {
      expect(parseMifDate(day) !== undefined).toBe(real)
    }
  })

  it("maps column names in any case and spacing, DOB to date_of_birth", () => {
    expect(fieldOfColumn(" First_Name ")).toBe("first_name")
    expect(fieldOfColumn("dob")).toBe("date_of_birth")
    expect(fieldOfColumn("ECM BENEFIT AUTH EFF DATE")).toBe("ecm_benefit_auth_eff_date")
    expect(fieldOfColumn("NOTES")).toBeUndefined()
  })

  it("writes numbers as written: integers without exponent", () => {
    expect(cellText(5105550142)).toBe("5105550142")
    expect(cellText(1e21)).toBe("1000000000000000000000")
    expect(cellText(2.5)).toBe("2.5")
    expect(cellText("  x ")).toBe("x")
    expect(cellText("   ")).toBeNull()
  })

  it("pads a ZIP that a spreadsheet typed as a number to 5 or 9 digits; ZIP text stays as written", () => {
    expect(zipText(501)).toBe("00501")
    expect(zipText(94612)).toBe("94612")
    expect(zipText(0)).toBe("00000")
    expect(zipText(5011234)).toBe("005011234")
    expect(zipText(946121234)).toBe("946121234")
    expect(zipText(12345678901)).toBe("12345678901")
    expect(zipText(501.5)).toBe("501.5")
    expect(zipText("501")).toBe("501")
    expect(zipText("00501-1234")).toBe("00501-1234")
    expect(zipText(null)).toBeNull()
  })

  it("a record's number cells: ZIP padded, ids and phone keep their digits as text (no .0, no exponent)", () => {
    const checked = checkRecord({
      line: 2,
      cells: {
        first_name: "a", last_name: "b", date_of_birth: "01-02-2003",
        zip: 501, member_id: 12345, cin: 91234567, ecm_service_auth_id: 7788990011, ecm_npi: 1234567893, phone: 5105550142
      }
    }, noFallback)
    expect(checked).toMatchObject({
      _tag: "Valid",
      record: {
        zip: "00501", member_id: "12345", cin: "91234567", ecm_service_auth_id: "7788990011", ecm_npi: "1234567893",
        phone: "5105550142", phone_e164: "+15105550142"
      }
    })
  })

  it("turns US numbers in any punctuation into E.164 without libphonenumber; N11 codes are not area codes", () => {
    expect(usPhoneE164("(510) 555-0100", noFallback)).toBe("+15105550100")
    expect(usPhoneE164("1-510-555-0100", noFallback)).toBe("+15105550100")
    expect(usPhoneE164("+1 510.555.0100", noFallback)).toBe("+15105550100")
    expect(usPhoneE164("411-555-0100", noFallback)).toBeUndefined()
    expect(usPhoneE164("510-155-0100", noFallback)).toBeUndefined()
    expect(usPhoneE164("+44 20 7946 0958", () => "+442079460958")).toBe("+442079460958")
  })

  it("lists every problem of a record, naming its line", () => {
    const checked = checkRecord({ line: 7, cells: { first_name: " ", date_of_birth: "31-12-2000", ecm_benefit_auth_end_date: "x", zip: "a\u0000" } }, noFallback)
    expect(checked).toEqual({
      _tag: "Invalid",
      problems: [
        "Line 7: Zip must not contain null characters",
        "Line 7: First name can't be blank",
        "Line 7: Last name can't be blank",
        "Line 7: Dob is invalid",
        "Line 7: Ecm benefit auth end date is invalid"
      ]
    })
    expect(checkRecord({ line: 3, label: "Member 2", cells: { first_name: "a", last_name: "b" } }, noFallback))
      .toEqual({ _tag: "Invalid", problems: ["Member 2: Dob can't be blank"] })
    expect(checkRecord({ line: 2, cells: { first_name: "a", last_name: "b", date_of_birth: "01-02-2003", member_record_status: "New Member" } }, noFallback))
      .toMatchObject({ _tag: "Valid", record: { date_of_birth: "2003-01-02", member_record_status: "new_member", member_id: null } })
  })

  it("detects a file's type from its content or name", () => {
    const bytes = (s: string) => new TextEncoder().encode(s)
    expect(sniffFileType(bytes("\uFEFF FIRST_NAME,LAST_NAME\n"))).toBe("csv")
    expect(sniffFileType(bytes("FIRST_NAME\tLAST_NAME\n"))).toBe("csv")
    expect(sniffFileType(bytes("\n  <?xml version=\"1.0\"?><Members/>"))).toBe("xml")
    expect(sniffFileType(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0]))).toBe("xlsx")
    expect(sniffFileType(bytes("just one column\n"))).toBeUndefined()
    expect(sniffFileType(new Uint8Array([1, 2, 44, 3]))).toBeUndefined()
    expect(fileTypeOfName("/files/March.XLSX?download=1")).toBe("xlsx")
    expect(fileTypeOfName("members.tsv")).toBe("csv")
    expect(fileTypeOfName("members")).toBeUndefined()
  })
})
