import { describe, expect, it } from "@effect/vitest"
import { getHeapStatistics } from "node:v8"
import { heapKeeper } from "../../../src/Services/Reports/HeapKeeper.js"

const heapUsed = () => getHeapStatistics().used_heap_size
const mb = 1024 * 1024

/** Objects that live long enough to be promoted, then become garbage. */
const promotedGarbage = async () => {
  let rows: Array<{ n: number; text: string }> | null = []
  for (let i = 0; i < 600_000; i++) rows.push({ n: i, text: `row ${i}` })
  await new Promise((resolve) => setImmediate(resolve))
  const count = rows.length
  rows = null
  return count
}

describe("heapKeeper", () => {
  it("collects once the heap has grown by the slack, and not before", async () => {
    const keep = heapKeeper(16 * mb)
    expect(keep()).toBe(false)
    expect(await promotedGarbage()).toBe(600_000)
    const before = heapUsed()
    expect(before).toBeGreaterThan(16 * mb)
    expect(keep()).toBe(true)
    // The garbage is gone, and the floor moved down with it: no collection right after one.
    expect(heapUsed()).toBeLessThan(before - 16 * mb)
    expect(keep()).toBe(false)
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("undefined")
  })
})
