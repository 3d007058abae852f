/**
 * Personal data and credentials the harness generates. Each value is distinctive (made-up
 * syllables, a random tag) and at least 8 characters long, and is remembered in `Secrets` as it
 * is made, so the telemetry scan can prove none of it reached a span or a log line.
 */
import fc from "fast-check"
import type { Secrets } from "./secrets.js"

const syllables = ["zor", "vath", "quil", "mirel", "bexa", "tor", "lune", "skad", "drev", "fenn", "galox", "hyra", "ostri", "pavu", "wex"]

export interface Pii {
  readonly name: fc.Arbitrary<string>
  readonly email: fc.Arbitrary<string>
  readonly phone: fc.Arbitrary<string>
  readonly password: fc.Arbitrary<string>
  readonly token: fc.Arbitrary<string>
}

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/** Digits of a fictional US number: area code and 555-01xx (valid for libphonenumber, never assigned). */
const usNumber = fc.record({
  area: fc.constantFrom("415", "212", "312", "617", "206"),
  line: fc.integer({ min: 0, max: 99 }).map((n) => `01${String(n).padStart(2, "0")}`)
})

export const makePii = (secrets: Secrets): Pii => {
  const word = fc.array(fc.constantFrom(...syllables), { minLength: 3, maxLength: 4 }).map((parts) => parts.join(""))
  const accent = fc.constantFrom("", "", "", "é", "ñ", "ø")
  const name = fc.tuple(word, accent).map(([w, a]) => secrets.add("name", capitalise(w) + a))
  const email = fc.tuple(word, fc.integer({ min: 0x100000, max: 0xffffff }), fc.constantFrom("example.test", "mail.example.test"))
    .map(([local, tag, domain]) => {
      const value = `${local}.${tag.toString(16)}@${domain}`
      secrets.add("email", `${local}.${tag.toString(16)}`)
      return secrets.add("email", value)
    })
  const phone = fc.tuple(usNumber, fc.constantFrom("national", "dashed", "e164", "spaced"))
    .map(([{ area, line }, style]) => {
      const digits = `${area}555${line}`
      secrets.add("phone", digits)
      secrets.add("phone", `+1${digits}`)
      const shown = style === "national" ? `(${area}) 555-${line}`
        : style === "dashed" ? `${area}-555-${line}`
        : style === "e164" ? `+1${digits}`
        : `+1 ${area} 555 ${line}`
      return secrets.add("phone", shown)
    })
  const password = fc.tuple(word, fc.integer({ min: 100, max: 99_999 }))
    .map(([w, n]) => secrets.add("password", `pw-${w}-${n}`))
  const token = fc.uint8Array({ minLength: 32, maxLength: 32 })
    .map((bytes) => secrets.add("token", Buffer.from(bytes).toString("base64url")))
  // No bias toward small values: personal data should differ from one draw to the next.
  return { name: fc.noBias(name), email: fc.noBias(email), phone: fc.noBias(phone), password: fc.noBias(password), token: fc.noBias(token) }
}
