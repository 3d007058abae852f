/** Engagement status moves (docs/prtf.md): the table and what transitionProblems says about it. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { allowedNext, engagementStatuses, transitionProblems } from "../../../src/Domain/Ecm/Engagement.js"

const status = fc.constantFrom(...engagementStatuses)
const day = fc.integer({ min: 0, max: 2000 }).map((n) => new Date(Date.UTC(2024, 0, 1) + n * 86400000).toISOString().slice(0, 10))
const today = "2030-01-01"

describe("transitionProblems", () => {
  it("allows exactly the moves of the table (with a reason, on or after the current day)", () => {
    fc.assert(fc.property(status, status, day, (from, to, effective) => {
      const problems = transitionProblems({ status: from, effective_date: "2024-01-01" }, { status: to, effective_date: effective, reason: "r" }, today)
      expect(problems.length === 0).toBe(allowedNext[from].includes(to))
    }), { numRuns: 2000 })
  })

  it("after disenrolled only a re-referral; an enrolled member only disenrols; never the same status twice", () => {
    expect(allowedNext.disenrolled).toEqual(["new_member"])
    expect(allowedNext.enrolled).toEqual(["disenrolled"])
    for (const s of engagementStatuses) expect(allowedNext[s]).not.toContain(s)
  })

  it("refuses a day before the current entry or in the future, and disenrolment without a reason", () => {
    const current = { status: "enrolled", effective_date: "2026-02-01" }
    expect(transitionProblems(current, { status: "disenrolled", effective_date: "2026-01-31", reason: "r" }, today)).toEqual([
      "Effective date can't be before the current status's effective date (2026-02-01)"
    ])
    expect(transitionProblems(current, { status: "disenrolled", effective_date: "2030-01-02", reason: null }, today)).toEqual([
      "Effective date can't be in the future", "Reason can't be blank when disenrolling (the discontinuation reason)"
    ])
    expect(transitionProblems(undefined, { status: "new_member", effective_date: "2030-01-01", reason: null }, today)).toEqual([])
    expect(transitionProblems(undefined, { status: "disenrolled", effective_date: "2029-01-01", reason: "r" }, today)).toEqual([
      "Status can't be disenrolled before any other status"
    ])
    expect(transitionProblems({ status: "legacy", effective_date: "2024-01-01" }, { status: "enrolled", effective_date: "2025-01-01", reason: null }, today)).toEqual([
      "Status can't change from legacy to enrolled"
    ])
  })
})
