/** What an event counts as (docs/prtf.md "The rule"): property-tested, and the counts built on it. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { eventStatuses, eventTypes } from "../../../src/Domain/Ecm/Activity.js"
import { type EngagementStatus, engagementStatuses } from "../../../src/Domain/Ecm/Engagement.js"
import { type ClassifiableEvent, contactOf, prtfCategories, prtfCategoryOf } from "../../../src/Domain/Ecm/Prtf.js"
import { countsOf, type EventGroup } from "../../../src/Services/Ecm/Events.js"

const event: fc.Arbitrary<ClassifiableEvent> = fc.record({
  event_type: fc.constantFrom(...eventTypes),
  status: fc.constantFrom(...eventStatuses),
  duration: fc.option(fc.nat(1440), { nil: null })
})
const engagement: fc.Arbitrary<EngagementStatus | null> = fc.constantFrom(null, ...engagementStatuses)

describe("contactOf", () => {
  it("cancelled and planned (scheduled) events are neither an attempt nor an encounter, whatever the type", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      if (e.status === "cancelled" || e.status === "scheduled") expect(contactOf(e, s)).toBeNull()
    }), { numRuns: 3000 })
  })

  it("the table of docs/prtf.md", () => {
    const enrolled: EngagementStatus = "enrolled"
    const cases: ReadonlyArray<[ClassifiableEvent, EngagementStatus | null, string | null]> = [
      // Appointments: held → encounter when enrolled, in-person outreach otherwise; planned or cancelled → neither.
      [{ event_type: "appointment", status: "complete", duration: 30 }, enrolled, "in_person_encounters"],
      [{ event_type: "appointment", status: "complete", duration: 30 }, "outreach_in_progress", "in_person_outreach"],
      [{ event_type: "appointment", status: "complete", duration: null }, null, "in_person_outreach"],
      [{ event_type: "appointment", status: "scheduled", duration: 30 }, enrolled, null],
      [{ event_type: "appointment", status: "cancelled", duration: 30 }, enrolled, null],
      [{ event_type: "appointment", status: "cancelled", duration: 30 }, "new_member", null],
      // Calls: connected → encounter (enrolled) or outreach; not connected → outreach; cancelled before it rang → neither.
      [{ event_type: "call", status: "complete", duration: 12 }, enrolled, "telehealth_encounters"],
      [{ event_type: "call", status: "complete", duration: 12 }, "pending_outreach", "telehealth_outreach"],
      [{ event_type: "call", status: "complete", duration: 0 }, enrolled, "telehealth_outreach"],
      [{ event_type: "call", status: "attempted", duration: null }, enrolled, "telehealth_outreach"],
      [{ event_type: "call", status: "attempted", duration: null }, "new_member", "telehealth_outreach"],
      [{ event_type: "call", status: "cancelled", duration: null }, "new_member", null],
      // Messages: electronic outreach attempts, delivered or not, enrolled or not.
      [{ event_type: "sms", status: "attempted", duration: null }, null, "telehealth_outreach"],
      [{ event_type: "sms", status: "complete", duration: null }, enrolled, "telehealth_outreach"],
      [{ event_type: "email", status: "complete", duration: null }, "declined", "telehealth_outreach"],
      [{ event_type: "email", status: "cancelled", duration: null }, null, null],
      // Meetings as appointments; tasks never.
      [{ event_type: "meeting", status: "complete", duration: null }, enrolled, "in_person_encounters"],
      [{ event_type: "meeting", status: "complete", duration: null }, "unable_to_reach", "in_person_outreach"],
      [{ event_type: "meeting", status: "scheduled", duration: null }, enrolled, null],
      [{ event_type: "task", status: "complete", duration: null }, enrolled, null]
    ]
    for (const [e, s, expected] of cases) expect([e, s, prtfCategoryOf(e, s)]).toEqual([e, s, expected])
  })

  it("only an enrolled member has encounters (DHCS: encounters are services to enrolled members)", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      if (contactOf(e, s)?.kind === "encounter") expect(s).toBe("enrolled")
    }), { numRuns: 3000 })
  })

  it("enrolment only ever turns an attempt into an encounter of the same mode", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      const before = contactOf(e, s === "enrolled" ? null : s)
      const after = contactOf(e, "enrolled")
      if (before === null) expect(after).toBeNull()
      else expect(after?.mode).toBe(before.mode)
      if (before?.kind === "encounter") expect(after?.kind).toBe("encounter")
    }), { numRuns: 3000 })
  })

  it("calls and messages are telehealth, appointments and meetings in person", () => {
    fc.assert(fc.property(event, engagement, (e, s) => {
      const c = contactOf(e, s)
      if (c === null) return
      expect(c.mode).toBe(e.event_type === "appointment" || e.event_type === "meeting" ? "in_person" : "telehealth")
    }), { numRuns: 3000 })
  })
})

describe("countsOf (the counts endpoint)", () => {
  it("equals counting event by event; all keys present; total = sum by type", () => {
    fc.assert(fc.property(fc.array(fc.tuple(event, engagement), { maxLength: 60 }), (events) => {
      // Group as the SQL does.
      const groups = new Map<string, EventGroup>()
      for (const [e, s] of events) {
        const key = JSON.stringify([e.event_type, e.status, e.duration, s])
        const group = groups.get(key)
        groups.set(key, { ...e, engagement: s, count: (group?.count ?? 0) + 1 })
      }
      const counts = countsOf([...groups.values()])
      expect(counts.total).toBe(events.length)
      expect(Object.keys(counts.by_type).sort()).toEqual([...eventTypes].sort())
      expect(Object.keys(counts.prtf_categories).sort()).toEqual([...prtfCategories].sort())
      for (const type of eventTypes) expect(counts.by_type[type]).toBe(events.filter(([e]) => e.event_type === type).length)
      for (const category of prtfCategories) {
        expect(counts.prtf_categories[category]).toBe(events.filter(([e, s]) => prtfCategoryOf(e, s) === category).length)
      }
    }), { numRuns: 1000 })
  })
})
