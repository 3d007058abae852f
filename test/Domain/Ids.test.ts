/** Ids as text parse strictly: the canonical decimal form of 1 … 2^31−1, nothing `Number()` would also read. */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { maxId, UserIdFromText } from "../../src/Domain/Ids.js"
import { IdParam } from "../../src/Api/Schemas.js"

const decode = (text: string) => Schema.decodeUnknownEither(UserIdFromText)(text)

describe("ids from text", () => {
  it("refuses every other spelling of a number", () => {
    for (const text of ["1e0", "1.0", "01", " 1", "1 ", "0x10", "+1", "-1", "0", "1_000", "１", "", "2147483648", "99999999999", "Infinity"]) {
      expect(Either.isLeft(decode(text)), JSON.stringify(text)).toBe(true)
    }
    expect(decode("1")).toEqual(Either.right(1))
    expect(decode(String(maxId))).toEqual(Either.right(maxId))
  })

  it("accepts exactly the canonical decimal text of an id (property)", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: maxId }), (n) => {
      expect(decode(String(n))).toEqual(Either.right(n))
      expect(Schema.decodeUnknownEither(IdParam)(String(n))).toEqual(Either.right(n))
    }))
    const nearMisses = fc.tuple(
      fc.constantFrom("", " ", "0", "+", "-", "00"),
      fc.integer({ min: 0, max: maxId + 10 }),
      fc.constantFrom("", " ", ".0", "e0", ".", "\n")
    ).map(([before, n, after]) => `${before}${n}${after}`)
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 12 }), nearMisses), (text) => {
      const n = Number(text)
      const canonical = Number.isInteger(n) && n >= 1 && n <= maxId && String(n) === text
      expect(Either.isRight(decode(text))).toBe(canonical)
      expect(Either.isRight(Schema.decodeUnknownEither(IdParam)(text))).toBe(canonical)
    }), { numRuns: 2_000 })
  })
})
