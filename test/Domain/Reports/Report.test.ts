/** A report's progress: 0–100, and 100 only once its file is stored (completed, or expired since). */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { progressOf, type ReportStatus } from "../../../src/Domain/Reports/Report.js"

const statuses: ReadonlyArray<ReportStatus> = ["queued", "generating", "completed", "failed", "expired"]

describe("report progress", () => {
  it("is a whole percentage from 0 to 100, 100 only when the file is stored (property)", () => {
    fc.assert(fc.property(
      fc.constantFrom(...statuses),
      fc.nat(1_000_000),
      fc.option(fc.nat(1_000_000)),
      (status, written, total) => {
        const progress = progressOf(status, written, total)
        expect(Number.isInteger(progress)).toBe(true)
        expect(progress).toBeGreaterThanOrEqual(0)
        expect(progress).toBeLessThanOrEqual(100)
        expect(progress === 100).toBe(status === "completed" || status === "expired")
      }
    ))
  })

  it("a report with no rows is at 0 until completed", () => {
    expect(progressOf("generating", 0, 0)).toBe(0)
    expect(progressOf("failed", 0, 0)).toBe(0)
    expect(progressOf("completed", 0, 0)).toBe(100)
  })

  it("counts rows written against rows counted", () => {
    expect(progressOf("queued", 0, null)).toBe(0)
    expect(progressOf("generating", 0, null)).toBe(0)
    expect(progressOf("generating", 128, 300)).toBe(42)
    // Rows added between the count and the cursor: still short of 100 until stored.
    expect(progressOf("generating", 310, 300)).toBe(99)
  })
})
