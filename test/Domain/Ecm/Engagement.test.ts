/** Engagement status moves (docs/prtf.md): the table, and where a change (on time or late) goes. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { allowedNext, engagementStatuses, type HistoryEntry, placementOf } from "../../../src/Domain/Ecm/Engagement.js"

const status = fc.constantFrom(...engagementStatuses)
const day = fc.integer({ min: 0, max: 2000 }).map((n) => new Date(Date.UTC(2024, 0, 1) + n * 86400000).toISOString().slice(0, 10))
const today = "2030-01-01"
let ids = 0
const entry = (status: string, effective_date: string, source: HistoryEntry["source"] = "user"): HistoryEntry =>
  ({ id: ++ids, status, effective_date, source })

describe("placementOf", () => {
  it("on the latest day, allows exactly the moves of the table", () => {
    fc.assert(fc.property(status, status, day, (from, to, effective) => {
      const { problems } = placementOf([entry(from, "2024-01-01")], { status: to, effective_date: effective, reason: "r" }, today)
      expect(problems.length === 0).toBe(allowedNext[from].includes(to))
    }), { numRuns: 2000 })
  })

  it("after disenrolled only a re-referral; an enrolled member only disenrols; never the same status twice", () => {
    expect(allowedNext.disenrolled).toEqual(["new_member"])
    expect(allowedNext.enrolled).toEqual(["disenrolled"])
    for (const s of engagementStatuses) expect(allowedNext[s]).not.toContain(s)
  })

  it("never in the future; a day in the past needs a reason; disenrolment always does", () => {
    const history = [entry("enrolled", "2026-02-01")]
    expect(placementOf(history, { status: "disenrolled", effective_date: "2030-01-02", reason: "r" }, today).problems).toEqual([
      "Effective date can't be in the future"
    ])
    expect(placementOf(history, { status: "disenrolled", effective_date: "2030-01-01", reason: null }, today).problems).toEqual([
      "Reason can't be blank when disenrolling (the discontinuation reason)"
    ])
    expect(placementOf([], { status: "new_member", effective_date: "2029-12-31", reason: " " }, today).problems).toEqual([
      "Reason can't be blank when the effective date is in the past (say why it is recorded late)"
    ])
    expect(placementOf([], { status: "new_member", effective_date: "2030-01-01", reason: null }, today).problems).toEqual([])
    expect(placementOf([], { status: "disenrolled", effective_date: "2029-01-01", reason: "r" }, today).problems).toEqual([
      "Status can't be disenrolled before any other status"
    ])
    expect(placementOf([entry("legacy", "2024-01-01")], { status: "enrolled", effective_date: "2030-01-01", reason: null }, today).problems).toEqual([
      "Status can't change from legacy to enrolled"
    ])
  })

  it("a late entry is checked against the status in force on its day and replaces it from that day", () => {
    const mif = entry("new_member", "2026-01-01", "mif")
    const outreach = entry("outreach_in_progress", "2026-01-10")
    const history = [mif, outreach]
    const late = placementOf(history, { status: "pending_outreach", effective_date: "2026-01-05", reason: "Entered late" }, today)
    expect(late).toEqual({ problems: [], replaced: mif, withdrawn: [] })
    // Before the first entry: nothing replaced, and the first entry must follow it.
    expect(placementOf(history, { status: "declined", effective_date: "2025-12-01", reason: "Late" }, today).problems).toEqual([
      "Status can't be declined from 2025-12-01: the later entry new_member (2026-01-01) can't follow declined"
    ])
    // Same day as an entry: after it.
    expect(placementOf(history, { status: "enrolled", effective_date: "2026-01-10", reason: "Late" }, today)).toEqual({
      problems: [], replaced: outreach, withdrawn: []
    })
  })

  it("a late entry that a later user entry cannot follow is refused", () => {
    const history = [entry("new_member", "2026-01-01", "mif"), entry("declined", "2026-01-20")]
    expect(placementOf(history, { status: "enrolled", effective_date: "2026-01-15", reason: "Late" }, today).problems).toEqual([
      "Status can't be enrolled from 2026-01-15: the later entry declined (2026-01-20) can't follow enrolled"
    ])
  })

  it("automatic outreach moves the late entry makes untrue are withdrawn; those still true stay", () => {
    const mif = entry("new_member", "2026-01-01", "mif")
    const automatic = entry("outreach_in_progress", "2026-01-18", "system")
    const enrolment = placementOf([mif, automatic], { status: "enrolled", effective_date: "2026-01-15", reason: "Consent form found" }, today)
    expect(enrolment).toEqual({ problems: [], replaced: mif, withdrawn: [automatic] })
    const pending = placementOf([mif, automatic], { status: "pending_outreach", effective_date: "2026-01-15", reason: "Late" }, today)
    expect(pending).toEqual({ problems: [], replaced: mif, withdrawn: [] })
    // The same status entered late by a user: the automatic move after it is redundant.
    const same = placementOf([mif, automatic], { status: "outreach_in_progress", effective_date: "2026-01-12", reason: "Late" }, today)
    expect(same.withdrawn).toEqual([automatic])
    // A later user entry is never withdrawn: it still has to follow.
    const user = entry("disenrolled", "2026-02-01")
    expect(placementOf([mif, automatic, user], { status: "enrolled", effective_date: "2026-01-15", reason: "Late" }, today)).toEqual({
      problems: [], replaced: mif, withdrawn: [automatic]
    })
  })

  it("whatever the history, an accepted change leaves every move in the history allowed", () => {
    const history = fc.array(fc.record({ status, day, source: fc.constantFrom<HistoryEntry["source"]>("mif", "user", "system") }), { maxLength: 6 })
    fc.assert(fc.property(history, status, day, (raw, to, effective) => {
      const entries = raw.map((e, i) => ({ id: i + 1, status: e.source === "system" ? "outreach_in_progress" : e.status, effective_date: e.day, source: e.source }))
        .sort((a, b) => a.effective_date.localeCompare(b.effective_date) || a.id - b.id)
      // Only consistent histories (as the service keeps them).
      const consistent = entries.every((e, i) => i === 0 ? e.status !== "disenrolled" : allowedNext[entries[i - 1]!.status as typeof to].includes(e.status as typeof to))
      fc.pre(consistent)
      const placement = placementOf(entries, { status: to, effective_date: effective, reason: "r" }, today)
      if (placement.problems.length > 0) return
      const after = [...entries.filter((e) => e.effective_date <= effective), { id: 99, status: to, effective_date: effective, source: "user" as const },
        ...entries.filter((e) => e.effective_date > effective && !placement.withdrawn.includes(e))]
      after.forEach((e, i) => {
        if (i === 0) expect(e.status).not.toBe("disenrolled")
        else expect(allowedNext[after[i - 1]!.status as typeof to]).toContain(e.status)
      })
    }), { numRuns: 3000 })
  })
})
