/** Request field schemas shared by the groups, with the Rails-style messages of general §7. */
import { Schema } from "effect"
import { IsoDate } from "../Domain/Time.js"

/** PostgreSQL text cannot hold U+0000: refuse it at the door rather than fail in the database. */
const hasNoNullCharacter = (s: string) => !s.includes("\u0000")
const nullCharacterMessage = { message: () => "must not contain null characters" }

/** A present, non-blank string. */
export const RequiredString = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "can't be blank" }),
  Schema.filter(hasNoNullCharacter, nullCharacterMessage)
)

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const Email = RequiredString.pipe(
  Schema.filter((s) => s.length <= 254 && emailPattern.test(s.trim()), { message: () => "is invalid" })
)

export const minimumPasswordLength = 8
export const Password = Schema.String.pipe(
  Schema.filter((s) => s.length > 0, { message: () => "can't be blank" }),
  Schema.filter((s) => s.length >= minimumPasswordLength, {
    message: () => `is too short (minimum is ${minimumPasswordLength} characters)`
  }),
  Schema.filter((s) => s.length <= 128, { message: () => "is too long (maximum is 128 characters)" }),
  // Sign-in refuses U+0000 (RequiredString), so a password holding one could never be used.
  Schema.filter(hasNoNullCharacter, nullCharacterMessage)
)

/** A short free-text field (names, phone). */
export const ShortText = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.length <= max, { message: () => `is too long (maximum is ${max} characters)` }),
    Schema.filter(hasNoNullCharacter, nullCharacterMessage)
  )

export const Name = RequiredString.pipe(
  Schema.filter((s) => s.length <= 100, { message: () => "is too long (maximum is 100 characters)" })
)

/** ISO 639-1 language code, e.g. `en`, `es`. */
export const Language = Schema.String.pipe(
  Schema.filter((s) => /^[a-z]{2}$/.test(s), { message: () => "is invalid" })
)

export { IsoDate }

/** Path `:id` (a positive integer). */
export const IdParam = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "is invalid" }),
  Schema.greaterThan(0, { message: () => "is invalid" }),
  Schema.lessThanOrEqualTo(2_147_483_647, { message: () => "is invalid" })
)

/** `ASC` or `DESC`, any case. */
export const SortDir = Schema.transform(
  Schema.Literal("ASC", "DESC", "asc", "desc"),
  Schema.Literal("ASC", "DESC"),
  { strict: true, decode: (s) => s.toUpperCase() as "ASC" | "DESC", encode: (s) => s }
)

/** Boolean query parameter: `true`/`false`. */
export const BooleanFromQuery = Schema.transform(
  Schema.Literal("true", "false"),
  Schema.Boolean,
  { strict: true, decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") }
)

export class Message extends Schema.Class<Message>("Message")({ message: Schema.String }) {}
