/** The pure rules of ECM activities and events: property-tested. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type ActivityForEvent,
  activityStatuses,
  activityTypes,
  eventOf,
  eventStatusOf,
  eventTypeOf,
  missingFieldMessages,
  requiredFieldsOf,
  statusMoveRefusal
} from "../../../src/Domain/Ecm/Activity.js"

const activity: fc.Arbitrary<ActivityForEvent> = fc.record({
  activity_type: fc.constantFrom(...activityTypes),
  status: fc.constantFrom(...activityStatuses),
  occurred_at: fc.date({ noInvalidDate: true }),
  subject: fc.option(fc.string(), { nil: null }),
  body: fc.option(fc.string(), { nil: null }),
  message: fc.option(fc.string(), { nil: null }),
  duration: fc.option(fc.nat(1440), { nil: null })
})

describe("activity → event (ECM §6)", () => {
  it("maps each type as the §6 table says; a note has no event", () => {
    expect(activityTypes.map((t) => [t, eventTypeOf(t)])).toEqual([
      ["task", "task"], ["note", null], ["sms", "sms"], ["call", "call"], ["email", "email"], ["in_person_appointment", "appointment"]
    ])
  })

  it("the event mirrors the activity: type, status, time, subject, body; duration only for calls and appointments", () => {
    fc.assert(fc.property(activity, (a) => {
      const event = eventOf(a)
      if (a.activity_type === "note") {
        expect(event).toBeNull()
        return
      }
      expect(event).toEqual({
        event_type: eventTypeOf(a.activity_type),
        status: eventStatusOf(a.activity_type, a.status),
        occurred_at: a.occurred_at,
        subject: a.subject,
        body: a.body ?? (a.activity_type === "task" ? a.message : null),
        duration: a.activity_type === "call" || a.activity_type === "in_person_appointment" ? a.duration : null
      })
    }), { numRuns: 2000 })
  })

  it("event status: final states follow the activity; open work is scheduled, open outreach attempted", () => {
    fc.assert(fc.property(fc.constantFrom(...activityTypes), fc.constantFrom(...activityStatuses), (type, status) => {
      const result = eventStatusOf(type, status)
      if (status !== "created") expect(result).toBe(status)
      else expect(result).toBe(type === "task" || type === "in_person_appointment" ? "scheduled" : "attempted")
    }))
  })
})

describe("required fields (ECM §2.2)", () => {
  const requirable = ["message", "body", "text_message_id", "voice_call_id", "email_to", "booked_at", "assigned_to_id"] as const
  const labels: Record<(typeof requirable)[number], string> = {
    message: "Message", body: "Body", text_message_id: "Text message", voice_call_id: "Voice call", email_to: "Email to",
    booked_at: "Booked at", assigned_to_id: "Assigned to"
  }
  it("names exactly the type's missing fields, in the table's order, then Assigned to", () => {
    const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant(""), fc.constant("  "), fc.constant("x"), fc.constant(3))
    fc.assert(fc.property(fc.constantFrom(...activityTypes), fc.record(Object.fromEntries(requirable.map((f) => [f, value]))), (type, fields) => {
      const present = (v: unknown) => v !== undefined && v !== null && !(typeof v === "string" && v.trim() === "")
      const expected = [...requiredFieldsOf[type], "assigned_to_id" as const].filter((f) => !present(fields[f])).map((f) => `${labels[f]} can't be blank`)
      expect(missingFieldMessages({ ...fields, activity_type: type })).toEqual(expected)
    }), { numRuns: 2000 })
    expect(missingFieldMessages({})).toEqual(["Activity type can't be blank", "Assigned to can't be blank"])
  })
})

describe("status moves (§3.1)", () => {
  it("refuses only direct moves between complete and cancelled", () => {
    for (const from of activityStatuses) {
      for (const to of activityStatuses) {
        const refused = (from === "complete" && to === "cancelled") || (from === "cancelled" && to === "complete")
        expect([from, to, statusMoveRefusal(from, to) !== null]).toEqual([from, to, refused])
      }
    }
  })
})
