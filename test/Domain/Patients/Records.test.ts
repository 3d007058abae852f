import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { canMoveSpot, isReadOnlyPlan, spotStatuses, treatmentPlanStatuses } from "../../../src/Domain/Patients/Records.js"

describe("waitlist moves", () => {
  it("follow waiting → offered → accepted | declined, or expired from an open spot; final states stay final", () => {
    const allowed = new Set(["waiting>offered", "waiting>expired", "offered>accepted", "offered>declined", "offered>expired"])
    fc.assert(fc.property(fc.constantFrom(...spotStatuses), fc.constantFrom(...spotStatuses), (from, to) => {
      expect(canMoveSpot(from, to)).toBe(from === to || allowed.has(`${from}>${to}`))
    }))
    for (const final of ["accepted", "declined", "expired"] as const) {
      expect(spotStatuses.filter((to) => to !== final && canMoveSpot(final, to))).toEqual([])
    }
  })
})

describe("treatment plans", () => {
  it("only a completed plan is read-only", () => {
    expect(treatmentPlanStatuses.filter(isReadOnlyPlan)).toEqual(["completed"])
  })
})
