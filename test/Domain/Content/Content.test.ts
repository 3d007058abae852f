import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { ageGroupOf, canMove, collectionStatusOf, isOpen, type UserPieceStatus } from "../../../src/Domain/Content/Content.js"

const statuses: ReadonlyArray<UserPieceStatus> = ["assigned", "started", "in_progress", "completed", "skipped"]
const status = fc.constantFrom(...statuses)

describe("user piece status machine", () => {
  it("allows exactly: staying, forward moves, skipping an open piece, reopening a skip", () => {
    const allowed = statuses.flatMap((from) => statuses.filter((to) => canMove(from, to)).map((to) => `${from}→${to}`))
    expect(allowed).toEqual([
      "assigned→assigned", "assigned→started", "assigned→in_progress", "assigned→completed", "assigned→skipped",
      "started→started", "started→in_progress", "started→completed", "started→skipped",
      "in_progress→in_progress", "in_progress→completed", "in_progress→skipped",
      "completed→completed",
      "skipped→assigned", "skipped→skipped"
    ])
  })

  it("completed is final; any open piece can be skipped", () =>
    fc.assert(fc.property(status, status, (from, to) => {
      if (from === "completed") expect(canMove(from, to)).toBe(to === "completed")
      if (isOpen(from) && to === "skipped") expect(canMove(from, to)).toBe(true)
    })))
})

describe("user collection status", () => {
  it("is derived from its pieces", () => {
    expect(collectionStatusOf(["assigned", "assigned"])).toBe("assigned")
    expect(collectionStatusOf(["assigned", "skipped"])).toBe("assigned")
    expect(collectionStatusOf(["assigned", "started"])).toBe("in_progress")
    expect(collectionStatusOf(["assigned", "completed"])).toBe("in_progress")
    expect(collectionStatusOf(["completed", "skipped"])).toBe("completed")
    expect(collectionStatusOf(["skipped", "skipped"])).toBe("skipped")
  })

  it("is completed or skipped exactly when nothing is open", () =>
    fc.assert(fc.property(fc.array(status, { minLength: 1, maxLength: 12 }), (list) => {
      const derived = collectionStatusOf(list)
      const open = list.some(isOpen)
      expect(derived === "completed" || derived === "skipped").toBe(!open)
      if (derived === "completed") expect(list).toContain("completed")
    })))
})

describe("age groups", () => {
  it("under 13 child, 13–17 teen, 18 and over adult", () => {
    expect([0, 5, 12, 13, 17, 18, 40].map(ageGroupOf)).toEqual(["child", "child", "child", "teen", "teen", "adult", "adult"])
  })
})
