/**
 * Request field schemas shared by every area, with the Rails-style messages of general §7.
 *
 * Every text field of a request is bounded (`BoundedString`, `RequiredString` or one of the named
 * fields below) and every list has a maximum size (`BoundedArray`): the bound is part of the
 * schema, so the OpenAPI document states it (`maxLength`, `maxItems`), the harness tests it, and
 * an oversized value is a 422 naming the field rather than work for the database.
 * test/Api/Bounds.test.ts fails for an unbounded string or list in any request.
 */
import { Schema } from "effect"
import { IsoDate } from "../Domain/Time.js"
import { idFromText, maxId } from "../Domain/Ids.js"

/** Maximum lengths in characters (docs/spec-decisions.md, "Bounded inputs"). */
export const maxLengths = {
  /** RFC 5321: the longest address a mail server accepts. */
  email: 254,
  /** Far above any passphrase, far below what makes a hash expensive. */
  password: 128,
  /** First or last name. */
  name: 100,
  /** A phone number as typed, with spaces, dashes and an extension. */
  phone: 32,
  /** Search terms of a list. */
  search: 200,
  /** Secrets we issue (43 characters today), with room for a longer format. */
  token: 128,
  /** Confirmation codes are 6 digits. */
  confirmationCode: 16
} as const

/** PostgreSQL text cannot hold U+0000: refuse it at the door rather than fail in the database. */
const hasNoNullCharacter = (s: string) => !s.includes("\u0000")
const nullCharacterMessage = { message: () => "must not contain null characters" }

/**
 * Whether `s` has at most `max` characters, counted as JSON Schema's `maxLength` and PostgreSQL
 * count them (code points: an emoji is one character, not two UTF-16 units).
 */
export const hasAtMostCharacters = (s: string, max: number): boolean => {
  if (s.length <= max) return true
  if (s.length > 2 * max) return false
  let count = 0
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    if (++count > max) return false
  }
  return true
}

/** The length check first: a huge value fails here before any other check reads it. */
const atMostCharacters = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => hasAtMostCharacters(s, max), {
      message: () => `is too long (maximum is ${max} characters)`,
      jsonSchema: { maxLength: max }
    })
  )

/** Text of at most `max` characters, possibly empty (optional free text, search terms). */
export const BoundedString = (max: number) =>
  atMostCharacters(max).pipe(Schema.filter(hasNoNullCharacter, nullCharacterMessage))

/** Text of at most `max` characters that is present and not blank. */
export const RequiredString = (max: number) =>
  BoundedString(max).pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "can't be blank", jsonSchema: { minLength: 1 } })
  )

/** A list of at most `max` items. */
export const BoundedArray = <A, I, R>(item: Schema.Schema<A, I, R>, max: number) =>
  Schema.Array(item).pipe(
    Schema.filter((list) => list.length <= max, {
      message: () => `is too long (maximum is ${max} items)`,
      jsonSchema: { maxItems: max }
    })
  )

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const Email = RequiredString(maxLengths.email).pipe(
  Schema.filter((s) => emailPattern.test(s.trim()), { message: () => "is invalid" })
)

/** An email as typed where it is only looked up (sign-in, email check, reset request). */
export const EmailLookup = RequiredString(maxLengths.email)

export const minimumPasswordLength = 8
/** A new password (registration, update, reset). */
export const Password = atMostCharacters(maxLengths.password).pipe(
  // Sign-in refuses a blank password (RequiredString), so an all-space one could never be used.
  Schema.filter((s) => s.trim().length > 0, { message: () => "can't be blank" }),
  Schema.filter((s) => s.length >= minimumPasswordLength, {
    message: () => `is too short (minimum is ${minimumPasswordLength} characters)`,
    jsonSchema: { minLength: minimumPasswordLength }
  }),
  // Sign-in refuses U+0000 (RequiredString), so a password holding one could never be used.
  Schema.filter(hasNoNullCharacter, nullCharacterMessage)
)

/** A password as typed at sign-in: any length up to the maximum a password can have. */
export const PasswordAttempt = RequiredString(maxLengths.password)

export const Name = RequiredString(maxLengths.name)
export const Phone = BoundedString(maxLengths.phone)
export const Search = BoundedString(maxLengths.search)
/** A secret we issued and the client sends back (reset tokens). */
export const IssuedToken = RequiredString(maxLengths.token)

/** ISO 639-1 language code, e.g. `en`, `es`. */
export const Language = Schema.String.pipe(
  Schema.filter((s) => /^[a-z]{2}$/.test(s), { message: () => "is invalid", jsonSchema: { pattern: "^[a-z]{2}$", maxLength: 2 } })
)

export { IsoDate }

const isIsoDate = Schema.is(IsoDate)

/**
 * A day of a report's period (ECM §4.7 asks for YYYY-MM-DD): the message says how to write it; an
 * empty one is blank, like a missing one.
 */
export const PeriodDate = (description: string) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim() !== "" && isIsoDate(s), {
      message: (issue) => (String(issue.actual).trim() === "" ? "can't be blank" : "is invalid (use YYYY-MM-DD)")
    }),
    Schema.annotations({ description, jsonSchema: { type: "string", format: "date", maxLength: 10 } })
  )

/**
 * Path `:id` (a positive integer) without a brand. Prefer the branded `idFromText(SomeId)` of
 * src/Domain/Ids.ts; both parse strictly ("1e0", "01", " 1" are 422).
 */
export const IdParam = idFromText(
  Schema.Int.pipe(Schema.between(1, maxId), Schema.annotations({ message: () => "is invalid" }))
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
