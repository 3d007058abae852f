/** The PRTF report's pure parts: the rule table, file names, columns, CSV writing and injection. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import fc from "fast-check"
import Papa from "papaparse"
import { eventStatuses, eventTypes } from "../../../src/Domain/Ecm/Activity.js"
import { type EngagementStatus, engagementStatuses } from "../../../src/Domain/Ecm/Engagement.js"
import { type ClassifiableEvent, prtfCategoryOf } from "../../../src/Domain/Ecm/Prtf.js"
import {
  durationClassOf,
  isEnrolled,
  neutralised,
  prtfColumns,
  prtfFilename,
  reportPhone,
  representativeDuration,
  representativeEngagement,
  ruleTable
} from "../../../src/Domain/Ecm/PrtfReport.js"
import { csvLines, writeCsv } from "../../../src/Services/Ecm/PrtfCsv.js"

const event: fc.Arbitrary<ClassifiableEvent> = fc.record({
  event_type: fc.constantFrom(...eventTypes),
  status: fc.constantFrom(...eventStatuses),
  duration: fc.option(fc.nat(100000), { nil: null })
})
const engagement: fc.Arbitrary<EngagementStatus | null> = fc.constantFrom(null, ...engagementStatuses)

describe("ruleTable", () => {
  it("the rule reads a duration only through its class: a class's representative gets the same category (guards the SQL table)", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      const representative = { ...e, duration: representativeDuration[durationClassOf(e.duration)] }
      expect(prtfCategoryOf(representative, s)).toBe(prtfCategoryOf(e, s))
    }), { numRuns: 5000 })
  })

  it("the rule reads an engagement status only as enrolled or not (guards the SQL table)", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      expect(prtfCategoryOf(e, representativeEngagement(isEnrolled(s)))).toBe(prtfCategoryOf(e, s))
    }), { numRuns: 5000 })
  })

  it("has one row per combination, each the rule's answer for any event of that combination", () => {
    const table = ruleTable()
    expect(table.length).toBe(eventTypes.length * eventStatuses.length * 2 * 3)
    fc.assert(fc.property(event, engagement, (e, s) => {
      const rows = table.filter((r) => r.event_type === e.event_type && r.status === e.status && r.enrolled === isEnrolled(s) &&
        r.duration_class === durationClassOf(e.duration))
      expect(rows.map((r) => r.category)).toEqual([prtfCategoryOf(e, s)])
    }), { numRuns: 2000 })
  })
})

describe("the file", () => {
  it("has its 51 columns, in order, named once", () => {
    expect(prtfColumns.length).toBe(51)
    expect(new Set(prtfColumns).size).toBe(51)
    expect(prtfColumns[0]).toBe("Report Period Start")
    expect(prtfColumns[50]).toBe("Report Production Date")
  })

  it("is named PRTF_<NPI or ALL>_<MMYYYY of end>_<MMDDYYYY of generation>.csv", () => {
    expect(prtfFilename(null, "2026-03-31", "2026-04-02")).toBe("PRTF_ALL_032026_04022026.csv")
    expect(prtfFilename("1234567893", "2026-12-31", "2027-01-05")).toBe("PRTF_1234567893_122026_01052027.csv")
  })

  it("writes NANP phones as ten digits and keeps anything else", () => {
    expect(reportPhone("+15105550100")).toBe("5105550100")
    expect(reportPhone("+442071838750")).toBe("+442071838750")
    expect(reportPhone(null)).toBe(null)
  })
})

describe("CSV writing", () => {
  const cell = fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom("=", "+", "-", "@", ",", "\"", "\r", "\n", "\t", " ", "a", "é") }),
    fc.nat(), fc.constant(null))

  it("round-trips any cells through a CSV reader: quoting, CRLF, neutralised formulas, numbers untouched", () => {
    fc.assert(fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 6 }), { minLength: 1, maxLength: 5 }), (rows) => {
      const width = rows[0]!.length
      const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? null))
      const text = csvLines(table)
      expect(text.endsWith("\r\n")).toBe(true)
      const parsed = Papa.parse<Array<string>>(text, { newline: "\r\n", delimiter: "," }).data.slice(0, table.length)
      expect(parsed).toEqual(table.map((r) => r.map((c) => (c === null ? "" : typeof c === "number" ? String(c) : neutralised(c)))))
    }), { numRuns: 2000 })
  })

  it("neutralises cells a spreadsheet would run, and only those", () => {
    for (const text of ["=1+2", "+1", "-1", "@SUM(A1)", "  =cmd", "\t=1", "\r=1", "=a\nb"]) expect(neutralised(text)).toBe(`'${text}`)
    for (const text of ["a=1", "1-2", "", "x@y.z", "'quoted"]) expect(neutralised(text)).toBe(text)
    expect(csvLines([["=1+2", "-5", -5, "a,b", "say \"hi\"", "two\nlines"]])).toBe(
      `"'=1+2","'-5",-5,"a,b","say ""hi""","two\nlines"\r\n`
    )
  })

  it.effect("writes the header and rows in batches, UTF-8 without a byte order mark, and counts the rows", () =>
    Effect.gen(function*() {
      const rows = Array.from({ length: 5 }, (_, i) => [`Zoë ${i}`, i])
      const { body, rowCount } = yield* writeCsv(Stream.make(rows.slice(0, 2), rows.slice(2)))
      expect(rowCount).toBe(5)
      expect([body[0], body[1], body[2]]).not.toEqual([0xef, 0xbb, 0xbf])
      const text = new TextDecoder("utf-8", { fatal: true }).decode(body)
      expect(text).toBe(`${prtfColumns.join(",")}\r\n${rows.map((r) => r.join(",")).join("\r\n")}\r\n`)
    }))
})
