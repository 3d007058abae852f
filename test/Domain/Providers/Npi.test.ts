import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { isValidNpi, luhnValid, npiCheckDigit } from "../../../src/Domain/Providers/Npi.js"

const nineDigits = fc.stringMatching(/^[0-9]{9}$/)

describe("NPI check digit (CMS: Luhn over 80840 + the NPI)", () => {
  it("accepts the CMS example and known NPIs, refuses their neighbours", () => {
    // CMS's worked example: identifier 123456789, check digit 3.
    expect(isValidNpi("1234567893")).toBe(true)
    expect(npiCheckDigit("123456789")).toBe(3)
    expect(isValidNpi("1234567890")).toBe(false)
    // Without the 80840 prefix a plain Luhn check would pick another digit.
    expect(luhnValid("1234567893")).toBe(false)
  })

  it("refuses anything but ten digits", () => {
    for (const text of ["", "123456789", "12345678930", "123456789a", " 1234567893", "1234567893 ", "١٢٣٤٥٦٧٨٩٣"]) {
      expect(isValidNpi(text), JSON.stringify(text)).toBe(false)
    }
  })

  it("nine digits and their computed check digit always make a valid NPI", () => {
    fc.assert(fc.property(nineDigits, (base) => isValidNpi(base + npiCheckDigit(base))))
  })

  it("exactly one check digit completes nine digits", () => {
    fc.assert(fc.property(nineDigits, (base) =>
      Array.from({ length: 10 }, (_, d) => isValidNpi(`${base}${d}`)).filter(Boolean).length === 1))
  })

  it("changing any one digit of a valid NPI makes it invalid (Luhn catches every single-digit error)", () => {
    fc.assert(fc.property(nineDigits, fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 9 }), (base, position, shift) => {
      const npi = base + npiCheckDigit(base)
      const digit = (Number(npi[position]) + shift) % 10
      const changed = npi.slice(0, position) + digit + npi.slice(position + 1)
      return !isValidNpi(changed)
    }))
  })

  it("swapping two different adjacent digits makes it invalid, except 0 and 9 (Luhn's known blind spot)", () => {
    fc.assert(fc.property(nineDigits, fc.integer({ min: 0, max: 8 }), (base, position) => {
      const npi = base + npiCheckDigit(base)
      const [a, b] = [npi[position]!, npi[position + 1]!]
      fc.pre(a !== b && !(new Set([a, b]).has("0") && new Set([a, b]).has("9")))
      const swapped = npi.slice(0, position) + b + a + npi.slice(position + 2)
      return !isValidNpi(swapped)
    }))
  })
})
