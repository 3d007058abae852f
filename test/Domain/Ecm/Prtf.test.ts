/** The PRTF categorisation (docs/prtf.md): property-tested, and the counts built on it. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { eventStatuses, eventTypes } from "../../../src/Domain/Ecm/Activity.js"
import { type CategorisableEvent, prtfCategories, prtfCategoryOf } from "../../../src/Domain/Ecm/Prtf.js"
import { countsOf, type EventGroup } from "../../../src/Services/Ecm/Events.js"

const event: fc.Arbitrary<CategorisableEvent> = fc.record({
  event_type: fc.constantFrom(...eventTypes),
  status: fc.constantFrom(...eventStatuses),
  duration: fc.option(fc.nat(1440), { nil: null }),
  enrolled: fc.boolean()
})

describe("prtfCategoryOf", () => {
  it("follows the rule: calls connect to enrolled members as encounters, appointments while enrolled, sms/email outreach, meetings encounters, tasks none", () => {
    fc.assert(fc.property(event, (e) => {
      const expected = {
        call: e.enrolled && e.status === "complete" && (e.duration ?? 0) > 0 ? "telehealth_encounters" : "telehealth_outreach",
        appointment: e.enrolled ? "in_person_encounters" : "in_person_outreach",
        sms: "telehealth_outreach",
        email: "telehealth_outreach",
        meeting: "in_person_encounters",
        task: null
      }[e.event_type]
      expect(prtfCategoryOf(e)).toBe(expected)
    }), { numRuns: 5000 })
  })

  it("a member who is not enrolled has no encounters but meetings (DHCS: encounters are services to enrolled members)", () => {
    fc.assert(fc.property(event, (e) => {
      const category = prtfCategoryOf({ ...e, enrolled: false })
      if (e.event_type !== "meeting") expect(category === null || category.endsWith("_outreach")).toBe(true)
    }))
  })

  it("enrolment only ever turns outreach into an encounter of the same channel", () => {
    fc.assert(fc.property(event, (e) => {
      const before = prtfCategoryOf({ ...e, enrolled: false })
      const after = prtfCategoryOf({ ...e, enrolled: true })
      if (before === after) return
      expect([before, after]).toContainEqual(expect.stringMatching(/outreach$/))
      expect(before?.split("_")[0]).toBe(after?.split("_")[0])
      expect(after).toMatch(/encounters$/)
    }))
  })
})

describe("countsOf (the counts endpoint)", () => {
  it("equals counting event by event; all keys present; total = sum by type", () => {
    fc.assert(fc.property(fc.array(event, { maxLength: 60 }), (events) => {
      // Group as the SQL does.
      const groups = new Map<string, EventGroup>()
      for (const e of events) {
        const key = JSON.stringify([e.event_type, e.status, e.duration, e.enrolled])
        const group = groups.get(key)
        groups.set(key, { ...e, count: (group?.count ?? 0) + 1 })
      }
      const counts = countsOf([...groups.values()])
      expect(counts.total).toBe(events.length)
      expect(Object.keys(counts.by_type).sort()).toEqual([...eventTypes].sort())
      expect(Object.keys(counts.prtf_categories).sort()).toEqual([...prtfCategories].sort())
      for (const type of eventTypes) expect(counts.by_type[type]).toBe(events.filter((e) => e.event_type === type).length)
      for (const category of prtfCategories) expect(counts.prtf_categories[category]).toBe(events.filter((e) => prtfCategoryOf(e) === category).length)
      expect(Object.values(counts.prtf_categories).reduce((a, b) => a + b, 0)).toBe(events.length - counts.by_type.task)
    }), { numRuns: 1000 })
  })
})
