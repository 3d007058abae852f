/**
 * Requests generated from the document's schemas: a fast-check arbitrary for any JSON Schema the
 * document holds, steered by field names toward values the server can accept (a real email in
 * `email`, an existing id in `id`), so generated requests reach the handlers and not only the
 * decoder. The names are hints; the structure, types, enums and bounds come from the document.
 */
import fc from "fast-check"
import { type JsonSchema, type OpenApiDocument, type Operation, pathParameterNames, resolve } from "./document.js"
import type { Pii } from "./pii.js"

/** What generation may draw on besides the document. */
export interface GenerationContext {
  readonly document: OpenApiDocument
  readonly pii: Pii
  /** Ids of records that exist (users now; patients once they exist), plus the odd unknown one. */
  readonly ids: fc.Arbitrary<number>
  /** Only what the document requires: optional fields and parameters left out. */
  readonly minimal?: boolean
  /**
   * Only values the server has reason to accept: days in 1900–2100 rather than any RFC 3339 day
   * (year 0000 is valid by the document, not in PostgreSQL). For requests meant to succeed.
   */
  readonly plausible?: boolean
  /** Credentials of users that exist, so sign-in and account lookups also succeed now and then. */
  readonly known?: { readonly emails: ReadonlyArray<string>; readonly password: string }
}

/** The parts of a request the harness fills in; path values are already percent-encoded. */
export interface Draft {
  readonly pathParams: Readonly<Record<string, string>>
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly headers: Readonly<Record<string, string>>
  readonly body: Body
}

export type Body =
  | { readonly kind: "none" }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "text"; readonly text: string; readonly contentType: string }

/** Effect's NumberFromString: the document says string, the value is a number. */
const numericStringDescription = "a string to be decoded into a number"

const isoDate = fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2100-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10))
/** Any day RFC 3339 allows, year 0000 to 9999: the document's `format: date` says no more. */
const anyIsoDate = fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10))
const isoTimestamp = fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString())
const smallText = fc.string({ maxLength: 24, unit: "grapheme" })

type Hint = (context: GenerationContext) => fc.Arbitrary<unknown>

/** Field-name hints for string fields. */
const stringHints: ReadonlyArray<readonly [RegExp, Hint]> = [
  [/(^|_)email$/, (c) => c.known && c.known.emails.length > 0 ? fc.oneof({ weight: 2, arbitrary: c.pii.email }, fc.constantFrom(...c.known.emails)) : c.pii.email],
  [/password/, (c) => c.known ? fc.oneof({ weight: 2, arbitrary: c.pii.password }, fc.constant(c.known.password)) : c.pii.password],
  [/(^|_)(first_|last_|patient_)?name$/, (c) => c.pii.name],
  [/phone/, (c) => c.pii.phone],
  // Twilio's webhook parameters: the numbers of a message or call.
  [/^(From|To)$/, (c) => c.pii.phone],
  [/^language$/, () => fc.constantFrom("en", "es", "fr", "vi")],
  [/^search$/, (c) => fc.oneof(c.pii.name.map((n) => n.slice(0, 6)), smallText)],
  [/(^|_)code$/, () => fc.integer({ min: 0, max: 999_999 }).map((n) => String(n).padStart(6, "0"))],
  [/token$/, (c) => c.pii.token],
  [/(^|_)date$|_on$|date_of_birth/, () => isoDate]
]

/** Field-name hints for integers (and numbers sent as strings). */
const integerHints: ReadonlyArray<readonly [RegExp, Hint]> = [
  [/(^|_)id$/, (c) => c.ids],
  [/^(page|per_page|page_size|limit)$/, () => fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 250 }))]
]

const hinted = (hints: ReadonlyArray<readonly [RegExp, Hint]>, name: string | undefined, context: GenerationContext) => {
  if (name === undefined) return undefined
  const hint = hints.find(([pattern]) => pattern.test(name))
  return hint?.[1](context)
}

const typesOf = (schema: JsonSchema): ReadonlyArray<string> =>
  Array.isArray(schema.type) ? schema.type as Array<string> : typeof schema.type === "string" ? [schema.type] : []

const integerBounds = (schema: JsonSchema) => {
  let min = typeof schema.minimum === "number" ? schema.minimum : -1_000_000
  let max = typeof schema.maximum === "number" ? schema.maximum : 1_000_000
  if (typeof schema.exclusiveMinimum === "number") min = Math.max(min, Math.floor(schema.exclusiveMinimum) + 1)
  if (typeof schema.exclusiveMaximum === "number") max = Math.min(max, Math.ceil(schema.exclusiveMaximum) - 1)
  return { min, max: Math.max(min, max) }
}

const stringArbitrary = (schema: JsonSchema, name: string | undefined, context: GenerationContext): fc.Arbitrary<unknown> => {
  // Ids in paths are strict decimal text (src/Domain/Ids.ts: `pattern` ^[1-9][0-9]{0,9}$): known ids, like numeric strings.
  if (schema.description === numericStringDescription || (typeof schema.pattern === "string" && schema.pattern.startsWith("^[1-9][0-9]"))) {
    return (hinted(integerHints, name, context) ?? fc.integer({ min: -5, max: 1000 })).map(String)
  }
  if (schema.format === "date") {
    const day = hinted(stringHints, name, context) ?? isoDate
    return context.plausible ? day : fc.oneof({ weight: 4, arbitrary: day }, anyIsoDate)
  }
  if (schema.format === "date-time") return isoTimestamp
  const hint = hinted(stringHints, name, context)
  if (hint !== undefined) return hint
  if (typeof schema.pattern === "string") return fc.stringMatching(new RegExp(schema.pattern))
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 0
  const maxLength = typeof schema.maxLength === "number" ? schema.maxLength : Math.max(minLength, 24)
  const text = fc.string({ minLength, maxLength, unit: "grapheme" })
  // A required text of only spaces is blank to the server (RequiredString trims): not plausible.
  return context.plausible && minLength > 0 ? text.filter((value) => value.trim().length > 0) : text
}

const objectArbitrary = (schema: JsonSchema, context: GenerationContext, depth: number): fc.Arbitrary<unknown> => {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((schema.required ?? []) as Array<string>)
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, property] of Object.entries(properties)) {
    if (!context.minimal || required.has(key)) model[key] = schemaArbitrary(property, context, key, depth + 1)
  }
  const record = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) })
  const extra = schema.additionalProperties
  if (Object.keys(properties).length === 0 && typeof extra === "object" && extra !== null) {
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), schemaArbitrary(extra as JsonSchema, context, undefined, depth + 1), { maxKeys: 3 })
  }
  return record
}

/** A value the schema describes (for the fields named, one the server is likely to accept). */
export const schemaArbitrary = (
  input: JsonSchema,
  context: GenerationContext,
  name?: string,
  depth = 0
): fc.Arbitrary<unknown> => {
  if (depth > 8) return fc.constant(null)
  const schema = resolve(context.document, input)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Array<unknown>))
  if ("const" in schema) return fc.constant(schema.const)
  const alternatives = (schema.anyOf ?? schema.oneOf) as Array<JsonSchema> | undefined
  if (alternatives !== undefined) return fc.oneof(...alternatives.map((s) => schemaArbitrary(s, context, name, depth + 1)))
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return schemaArbitrary(schema.allOf[0] as JsonSchema, context, name, depth + 1)
  const types = typesOf(schema)
  if (types.length > 1) return fc.oneof(...types.map((type) => schemaArbitrary({ ...schema, type }, context, name, depth)))
  switch (types[0]) {
    case "string":
      return stringArbitrary(schema, name, context)
    case "integer": {
      const { min, max } = integerBounds(schema)
      const hint = hinted(integerHints, name, context) as fc.Arbitrary<number> | undefined
      return (hint ?? fc.integer({ min, max })).filter((n) => n >= min && n <= max)
    }
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array": {
      const items = (schema.items ?? {}) as JsonSchema
      const minLength = typeof schema.minItems === "number" ? schema.minItems : 0
      const maxLength = Math.max(minLength, typeof schema.maxItems === "number" ? Math.min(schema.maxItems, 4) : 4)
      return fc.array(schemaArbitrary(items, context, name, depth + 1), { minLength, maxLength })
    }
    case "object":
      return objectArbitrary(schema, context, depth)
    default:
      return schema.properties !== undefined ? objectArbitrary(schema, context, depth) : fc.jsonValue({ maxDepth: 2 })
  }
}

/** Path values must stay one segment: never empty, never a dot segment. */
export const encodeSegment = (value: string): string => {
  const safe = value === "" || /^\.{1,2}$/.test(value) ? `${value}x` : value
  return encodeURIComponent(safe)
}

const asQueryValues = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.map(String) : [typeof value === "string" ? value : JSON.stringify(value)]

/**
 * A request the document says is valid, with hinted values. Optional query parameters and body
 * fields are present about half the time. Headers carrying the user token are the caller's, not
 * generated here.
 */
export const validDraft = (operation: Operation, context: GenerationContext, tokenHeaders: ReadonlySet<string>): fc.Arbitrary<Draft> => {
  const pathArbitraries: Record<string, fc.Arbitrary<string>> = {}
  for (const name of pathParameterNames(operation.path)) {
    const declared = operation.parameters.find((p) => p.in === "path" && p.name === name)
    const value = declared === undefined ? fc.string({ minLength: 1 }) : schemaArbitrary(declared.schema, context, name)
    pathArbitraries[name] = value.map((v) => encodeSegment(typeof v === "string" ? v : String(v)))
  }
  const queryArbitraries = operation.parameters.filter((p) => p.in === "query").map((p) => {
    const values = schemaArbitrary(p.schema, context, p.name).map((v) => asQueryValues(v).map((s) => [p.name, s] as const))
    return p.required ? values : context.minimal ? fc.constant([]) : fc.option(values, { nil: undefined }).map((v) => v ?? [])
  })
  const headerArbitraries: Record<string, fc.Arbitrary<string>> = {}
  for (const p of operation.parameters) {
    if (p.in !== "header" || tokenHeaders.has(p.name.toLowerCase()) || (context.minimal && !p.required)) continue
    const value = schemaArbitrary(p.schema, context, p.name).map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
    headerArbitraries[p.name] = value.filter((v) => /^[\x20-\x7e]*$/.test(v))
  }
  const body: fc.Arbitrary<Body> = operation.body === undefined
    ? fc.constant({ kind: "none" })
    : schemaArbitrary(operation.body, context).map((value) => ({ kind: "json", value }))
  return fc.record({
    pathParams: fc.record(pathArbitraries),
    query: fc.tuple(...queryArbitraries).map((lists) => lists.flat()),
    headers: fc.record(headerArbitraries, { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>,
    body
  })
}

/**
 * The value at `path` in `root` replaced (objects and arrays made on the way as needed): how a
 * fixture or the oversize mode puts one value into a generated body.
 */
export const setAt = (root: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown => {
  if (path.length === 0) return value
  const [head, ...rest] = path
  if (typeof head === "number") {
    const list = Array.isArray(root) ? [...root] : []
    while (list.length < head) list.push(null)
    list[head] = setAt(list[head], rest, value)
    return list
  }
  const record = typeof root === "object" && root !== null && !Array.isArray(root) ? root as Record<string, unknown> : {}
  return { ...record, [head!]: setAt(record[head!], rest, value) }
}

/** The draft with a JSON body value at `path` (a body is made when there is none). */
export const withBodyValue = (draft: Draft, path: ReadonlyArray<string | number>, value: unknown): Draft => ({
  ...draft,
  body: { kind: "json", value: setAt(draft.body.kind === "json" ? draft.body.value : undefined, path, value) }
})
