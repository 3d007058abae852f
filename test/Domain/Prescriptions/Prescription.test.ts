import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  canMove, canonicalFrequency, commonFrequencies, isFinal, prescriptionStatuses
} from "../../../src/Domain/Prescriptions/Prescription.js"
import { calendarDayIn } from "../../../src/Domain/Time.js"

describe("prescription status machine", () => {
  it("allows exactly these moves", () => {
    const moves = prescriptionStatuses.flatMap((from) => prescriptionStatuses.filter((to) => to !== from && canMove(from, to)).map((to) => `${from}→${to}`))
    expect(moves.sort()).toEqual([
      "active→cancelled", "active→completed", "active→discontinued", "active→expired", "active→on_hold", "on_hold→active"
    ])
    expect(prescriptionStatuses.filter(isFinal).sort()).toEqual(["cancelled", "completed", "discontinued", "expired"])
  })

  it("never leaves a final state, and staying put is always allowed", () => {
    const status = fc.constantFrom(...prescriptionStatuses)
    fc.assert(fc.property(status, status, (from, to) => {
      expect(canMove(from, from)).toBe(true)
      if (isFinal(from) && from !== to) expect(canMove(from, to)).toBe(false)
    }))
  })

  it("spells common frequencies canonically and keeps free text", () => {
    expect(canonicalFrequency("  Twice   DAILY ")).toBe("twice daily")
    expect(canonicalFrequency(" every 6 hours ")).toBe("every 6 hours")
    fc.assert(fc.property(fc.constantFrom(...commonFrequencies), (f) => {
      expect(canonicalFrequency(f.toUpperCase())).toBe(f)
    }))
  })
})

describe("calendarDayIn", () => {
  it("gives the day in the zone", () => {
    const instant = Date.UTC(2026, 0, 1, 5, 0, 0)
    expect(calendarDayIn(instant, "UTC")).toBe("2026-01-01")
    expect(calendarDayIn(instant, "America/Los_Angeles")).toBe("2025-12-31")
  })
})
