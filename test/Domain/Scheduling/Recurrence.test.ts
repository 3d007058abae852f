import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { laterOccurrences, parseRule, type Rule, ruleOfPattern } from "../../../src/Domain/Scheduling/Recurrence.js"
import { instantOf, wallClockAt } from "../../../src/Domain/Scheduling/ZonedTime.js"

const zone = "America/Los_Angeles"
const far = new Date("2100-01-01T00:00:00Z")
const ruleOf = (text: string): Rule => {
  const parsed = parseRule(text)
  if ("error" in parsed) throw new Error(parsed.error)
  return parsed.rule
}
const starts = (first: string, minutes: number, rule: Rule, horizon = far) => {
  const start = new Date(first)
  return laterOccurrences({ start, end: new Date(start.getTime() + minutes * 60_000) }, rule, zone, horizon).map((o) => o.start.toISOString())
}

describe("recurrence", () => {
  it("a weekly 9:00 slot stays at 9:00 on the wall clock across both daylight saving changes", () => {
    // Monday 4 March 2030, 9:00 PST (UTC−8); clocks go forward on 10 March and back on 3 November.
    const spring = starts("2030-03-04T17:00:00.000Z", 60, ruleOf("FREQ=WEEKLY;COUNT=3"))
    expect(spring).toEqual(["2030-03-11T16:00:00.000Z", "2030-03-18T16:00:00.000Z"])
    const autumn = starts("2030-10-28T16:00:00.000Z", 60, ruleOf("FREQ=WEEKLY;COUNT=2"))
    expect(autumn).toEqual(["2030-11-04T17:00:00.000Z"])
    for (const iso of [...spring, ...autumn]) expect(wallClockAt(new Date(iso), zone)).toMatchObject({ hour: 9, minute: 0 })
  })

  it("monthly on the 31st occurs only in months with a 31st", () => {
    const monthly = starts("2031-01-31T18:00:00.000Z", 60, ruleOfPattern("monthly"), new Date("2031-09-01T00:00:00Z"))
    expect(monthly).toEqual([
      "2031-03-31T17:00:00.000Z", "2031-05-31T17:00:00.000Z", "2031-07-31T17:00:00.000Z", "2031-08-31T17:00:00.000Z"
    ])
  })

  it("daily, biweekly and the horizon", () => {
    expect(starts("2030-01-01T17:00:00.000Z", 30, ruleOfPattern("daily"), new Date("2030-01-04T00:00:00Z")))
      .toEqual(["2030-01-02T17:00:00.000Z", "2030-01-03T17:00:00.000Z"])
    expect(starts("2030-01-01T17:00:00.000Z", 30, ruleOfPattern("biweekly"), new Date("2030-02-01T00:00:00Z")))
      .toEqual(["2030-01-15T17:00:00.000Z", "2030-01-29T17:00:00.000Z"])
  })

  it("custom rules: BYDAY weeks, INTERVAL, COUNT counts the first slot, UNTIL includes its day", () => {
    // Monday 7 January 2030 10:00 PST.
    expect(starts("2030-01-07T18:00:00.000Z", 50, ruleOf("RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=5")))
      .toEqual(["2030-01-09T18:00:00.000Z", "2030-01-14T18:00:00.000Z", "2030-01-16T18:00:00.000Z", "2030-01-21T18:00:00.000Z"])
    expect(starts("2030-01-07T18:00:00.000Z", 50, ruleOf("FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;UNTIL=20300201")))
      .toEqual(["2030-01-11T18:00:00.000Z", "2030-01-25T18:00:00.000Z"])
    expect(starts("2030-01-07T18:00:00.000Z", 50, ruleOf("FREQ=DAILY;BYDAY=SA,SU;COUNT=3")))
      .toEqual(["2030-01-12T18:00:00.000Z", "2030-01-13T18:00:00.000Z"])
  })

  it("refuses rules outside the subset, and unbounded ones", () => {
    const errors = ["FREQ=WEEKLY", "FREQ=YEARLY;COUNT=2", "FREQ=WEEKLY;COUNT=0", "FREQ=WEEKLY;COUNT=501", "FREQ=WEEKLY;BYMONTH=1;COUNT=2",
      "FREQ=MONTHLY;BYDAY=1MO;COUNT=2", "FREQ=WEEKLY;COUNT=2;UNTIL=20300101", "FREQ=WEEKLY;UNTIL=20300231", "garbage", "",
      "FREQ=WEEKLY;FREQ=DAILY;COUNT=2", "FREQ=WEEKLY;BYDAY=XX;COUNT=2", "FREQ=DAILY;INTERVAL=0;COUNT=2"]
    for (const text of errors) expect("error" in parseRule(text), text).toBe(true)
  })

  it("a time skipped by the spring change lands an hour later; wall clock and instant round-trip otherwise", () => {
    expect(instantOf({ year: 2030, month: 3, day: 10, hour: 2, minute: 30, second: 0, millisecond: 0 }, zone).toISOString())
      .toBe("2030-03-10T10:30:00.000Z")
    // The repeated 1:30 of the autumn change is the first (PDT) one.
    expect(instantOf({ year: 2030, month: 11, day: 3, hour: 1, minute: 30, second: 0, millisecond: 0 }, zone).toISOString())
      .toBe("2030-11-03T08:30:00.000Z")
    fc.assert(fc.property(fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2090-01-01T00:00:00Z"), noInvalidDate: true }), (instant) => {
      const wall = wallClockAt(instant, zone)
      const back = instantOf(wall, zone)
      // Equal, except in the repeated autumn hour, where the first instant is chosen.
      expect(back.getTime() === instant.getTime() || instant.getTime() - back.getTime() === 3_600_000).toBe(true)
    }))
  })
})
