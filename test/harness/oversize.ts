/**
 * Oversize mode: every string a request carries (body field at any depth, array item, query, path
 * or header parameter) at its declared `maxLength` + 1, and every array at its `maxItems` + 1,
 * one at a time in an otherwise minimal valid request. Each must be refused with 422 naming the
 * field (413 for a body past the body limit, 414/431 for a URL or header past Node's limits),
 * never a 5xx, within a latency bound: a limit checked after the work (hashing a huge password,
 * binding 100,000 parameters) is no limit. Request strings and arrays that declare no maximum are
 * failures too (every text field declares its maximum, so the document says it and this
 * mode tests it); path parameters, enums, formats with a fixed shape (dates) and numbers sent as
 * strings are bounded otherwise and exempt.
 */
import { fieldLabel } from "../../src/Api/Errors.js"
import { Effect } from "effect"
import fc from "fast-check"
import { harnessMaxBodyBytes } from "./app.js"
import type { Case } from "./cases.js"
import { caseSeed, generationContext } from "./campaign.js"
import { type JsonSchema, type OpenApiDocument, type Operation, resolve } from "./document.js"
import { exchange, type Outcome } from "./exchange.js"
import { type Draft, encodeSegment, schemaArbitrary, validDraft, withBodyValue } from "./generate.js"
import type { Harness } from "./harness.js"
import { raceCaller } from "./race.js"
import type { Seeder } from "./world.js"

export type LocationIn = "body" | "query" | "path" | "header"

/** Where a string or an array sits in a request: a parameter, or a body path (a number: an array's items). */
export interface FieldLocation {
  readonly in: LocationIn
  readonly path: ReadonlyArray<string | number>
  readonly kind: "string" | "array"
  /** The declared `maxLength` / `maxItems`; undefined when none is declared. */
  readonly max: number | undefined
  /** For arrays, the schema of the items. */
  readonly items?: JsonSchema
}

/** `body user.email`, `body filters.roles[]` (an item), `query search`. */
export const describeLocation = (location: FieldLocation): string =>
  `${location.in} ${location.path.map((s, i) => (typeof s === "number" ? "[]" : i === 0 ? s : `.${s}`)).join("")}`

/** Effect's NumberFromString: a number on the wire as a string, bounded by its decoded range. */
const numericStringDescription = "a string to be decoded into a number"
const fixedShapeFormats = new Set(["date", "date-time", "time", "uuid"])
/** `^[a-z]{2}$`: anchored, no unbounded repetition. */
const isBoundedPattern = (pattern: unknown) =>
  typeof pattern === "string" && /^\^.*\$$/.test(pattern) && !/[*+]|\{\d+,\}/.test(pattern.replace(/\\./g, ""))

const typesOf = (schema: JsonSchema): ReadonlyArray<string> =>
  Array.isArray(schema.type) ? schema.type as Array<string> : typeof schema.type === "string" ? [schema.type] : []

/** A string its shape already bounds: an enum, a constant, a date, a number as a string, a bounded pattern. */
const boundedByShape = (schema: JsonSchema) =>
  Array.isArray(schema.enum) || "const" in schema || (typeof schema.format === "string" && fixedShapeFormats.has(schema.format)) ||
  schema.description === numericStringDescription || isBoundedPattern(schema.pattern)

/** Every string and array of a body schema, at any depth (through `$ref`, `anyOf`, `oneOf`, `allOf`). */
const bodyLocations = (document: OpenApiDocument, root: JsonSchema): Array<FieldLocation> => {
  const found = new Map<string, FieldLocation>()
  const walk = (input: JsonSchema, path: ReadonlyArray<string | number>, depth: number): void => {
    if (depth > 12) return
    const schema = resolve(document, input)
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      for (const branch of (schema[key] ?? []) as Array<JsonSchema>) walk(branch, path, depth + 1)
    }
    const types = typesOf(schema)
    const add = (location: FieldLocation) => {
      const key = `${location.kind} ${JSON.stringify(location.path)}`
      if (!found.has(key)) found.set(key, location)
    }
    if (types.includes("string") && !boundedByShape(schema) && path.length > 0) {
      add({ in: "body", path, kind: "string", max: typeof schema.maxLength === "number" ? schema.maxLength : undefined })
    }
    if (types.includes("array")) {
      const items = (schema.items ?? {}) as JsonSchema
      add({ in: "body", path, kind: "array", max: typeof schema.maxItems === "number" ? schema.maxItems : undefined, items })
      walk(items, [...path, 0], depth + 1)
    }
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
      walk(property, [...path, name], depth + 1)
    }
  }
  walk(root, [], 0)
  return [...found.values()]
}

/** The strings and arrays a request of the operation can carry; the caller's token header excluded. */
export const requestFields = (document: OpenApiDocument, operation: Operation, tokenHeaders: ReadonlySet<string>): Array<FieldLocation> => {
  const parameters = operation.parameters.flatMap((parameter): Array<FieldLocation> => {
    if (parameter.in === "cookie" || (parameter.in === "header" && tokenHeaders.has(parameter.name.toLowerCase()))) return []
    const schema = resolve(document, parameter.schema)
    if (typesOf(schema).includes("array")) {
      return [{ in: parameter.in, path: [parameter.name], kind: "array", max: typeof schema.maxItems === "number" ? schema.maxItems : undefined, items: (schema.items ?? {}) as JsonSchema }]
    }
    if (!typesOf(schema).includes("string")) return []
    const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined
    // Path parameters are exempt from declaring one (an id's parse and the URL limit bound them), not from being tested.
    if (max === undefined && (boundedByShape(schema) || parameter.in === "path")) return []
    return [{ in: parameter.in, path: [parameter.name], kind: "string", max }]
  })
  return [...parameters, ...(operation.body === undefined ? [] : bodyLocations(document, operation.body))]
}

/** A string of `length` characters the field would otherwise accept: ASCII, an email's shape for emails. */
export const oversizeString = (name: string, length: number): string =>
  /email/i.test(name) && length > 16 ? `${"a".repeat(length - 13)}@example.test` : "a".repeat(length)

/** The field's name as the server's 422 names it: the last property name on the path. */
const leafName = (location: FieldLocation) => String([...location.path].reverse().find((s) => typeof s === "string") ?? "")

const withValue = (draft: Draft, location: FieldLocation, value: unknown): Draft => {
  const name = String(location.path[0])
  const asStrings = Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))) : [String(value)]
  switch (location.in) {
    case "body":
      return withBodyValue(draft, location.path, value)
    case "query":
      return { ...draft, query: [...draft.query.filter(([k]) => k !== name), ...asStrings.map((v) => [name, v] as const)] }
    case "path":
      return { ...draft, pathParams: { ...draft.pathParams, [name]: encodeSegment(asStrings.join(",")) } }
    case "header":
      return { ...draft, headers: { ...draft.headers, [name]: asStrings.join(",") } }
  }
}

/** Does the 422 name the field? General area: a key of `errors`; ECM: a message with its label. */
const namesField = (json: unknown, leaf: string): boolean => {
  const errors = (json as { errors?: unknown } | undefined)?.errors
  if (Array.isArray(errors)) {
    // The ECM area labels fields Rails-style (`provider_id` → "Provider": src/Api/Errors.ts).
    const labels = [leaf.replace(/_/g, " ").toLowerCase(), fieldLabel(leaf).toLowerCase()]
    return errors.some((m) => typeof m === "string" && labels.some((label) => m.toLowerCase().includes(label)))
  }
  if (typeof errors === "object" && errors !== null) {
    return Object.keys(errors).some((key) => key.split(/[.[\]]+/).includes(leaf))
  }
  return false
}

export interface OversizeFailure {
  readonly operation: string
  /** `body user.email`; `-` for a failure of the whole operation. */
  readonly location: string
  readonly check: string
  readonly message: string
  readonly seed: number
  readonly operationIndex: number
  readonly request: string
  readonly response: string
}

export interface OversizeOptions {
  readonly harness: Harness
  readonly seeder: Seeder
  readonly seed: number
  /** A refusal slower than this fails (default 2000 ms: a decode-time refusal takes a few ms). */
  readonly latencyBoundMs?: number
  readonly operations?: ReadonlyArray<string>
  /**
   * The app's MAX_BODY_BYTES (default: the harness app's). A body string whose maximum + 1 could
   * never fit is sent just past this instead: the same refusal (413), without the upload.
   */
  readonly maxBodyBytes?: number
}

export interface OversizeReport {
  readonly seed: number
  readonly operations: number
  /** Strings and arrays with a declared maximum, each sent once over it. */
  readonly bounded: number
  /** Request strings and arrays without one (each a failure). */
  readonly unbounded: number
  readonly requests: number
  readonly slowestMs: number
  readonly failures: ReadonlyArray<OversizeFailure>
  readonly durationMs: number
}

/** The seed of operation `index`'s base request: apart from the campaign's and the race's. */
export const oversizeSeed = (seed: number, index: number): number => caseSeed(seed ^ 0x4f_56_45_52, index)

export const defaultLatencyBoundMs = 2000

/** Statuses that refuse an oversized value other than 422, and when they may. */
const acceptedRefusal = (location: FieldLocation, status: number, outcome: Outcome, valueLength: number): boolean =>
  status === 422 ||
  (status === 413 && location.in === "body" && (outcome.wire.body?.length ?? 0) >= 1024) ||
  ((status === 414 || status === 431) && location.in !== "body" && valueLength > 8000)

export const runOversize = (options: OversizeOptions): Effect.Effect<OversizeReport> =>
  Effect.gen(function*() {
    const started = performance.now()
    const { harness, seed, seeder } = options
    const bound = options.latencyBoundMs ?? defaultLatencyBoundMs
    const maxBodyBytes = options.maxBodyBytes ?? harnessMaxBodyBytes
    const failures: Array<OversizeFailure> = []
    let operations = 0
    let bounded = 0
    let unbounded = 0
    let requests = 0
    let slowestMs = 0
    for (const [operationIndex, operation] of harness.operations.entries()) {
      if (options.operations !== undefined && !options.operations.includes(operation.id)) continue
      operations++
      const locations = requestFields(harness.document, operation, harness.tokenHeaders)
      const fail = (location: FieldLocation, check: string, message: string, outcome?: Outcome) =>
        failures.push({
          operation: operation.id,
          location: describeLocation(location),
          check,
          message,
          seed,
          operationIndex,
          request: outcome?.request ?? "(not sent)",
          response: outcome?.response ?? ""
        })
      for (const location of locations.filter((l) => l.max === undefined)) {
        unbounded++
        fail(location, "no declared maximum", `${describeLocation(location)}: ${location.kind === "string" ? "a string without maxLength" : "an array without maxItems"}`)
      }
      const sized = locations.filter((l) => l.max !== undefined)
      if (sized.length === 0) continue
      yield* seeder.resetThrottles
      const world = yield* seeder.world([])
      const target = world.principals.parent
      const context = { ...generationContext(harness, [target.id]), ids: fc.constant(target.id), plausible: true, minimal: true }
      const base = fc.sample(validDraft(operation, context, harness.tokenHeaders), { seed: oversizeSeed(seed, operationIndex), numRuns: 1 })[0]!
      for (const location of sized) {
        bounded++
        const length = location.in === "body" && location.kind === "string"
          ? Math.min(location.max! + 1, maxBodyBytes + 1)
          : location.max! + 1
        const value = location.kind === "string"
          ? oversizeString(leafName(location), length)
          : fc.sample(schemaArbitrary(location.items ?? {}, context, leafName(location)), { seed: oversizeSeed(seed, operationIndex), numRuns: length })
        const valueLength = typeof value === "string" ? value.length : JSON.stringify(value).length
        const testCase: Case = {
          operation,
          caller: raceCaller(operation),
          badToken: "",
          variant: `oversize ${describeLocation(location)}`,
          draft: withValue(base, location, value),
          refusedByConstruction: true
        }
        const outcome = yield* exchange(harness, testCase, (role) => world.principals[role].token)
        requests++
        for (const v of outcome.violations) fail(location, v.check, v.message, outcome)
        const received = outcome.received
        if (received === undefined) continue
        const elapsed = received.elapsedMs ?? 0
        slowestMs = Math.max(slowestMs, elapsed)
        if (elapsed > bound) fail(location, "slow", `${elapsed.toFixed(0)} ms to answer (bound ${bound} ms)`, outcome)
        if (!acceptedRefusal(location, received.status, outcome, valueLength)) {
          fail(location, "oversize not refused with 422", `${location.kind === "string" ? `${length} characters` : `${length} items`} (maximum ${location.max}) got ${received.status}`, outcome)
        } else if (received.status === 422 && !namesField(received.json, leafName(location))) {
          fail(location, "422 does not name the field", `the 422 should name ${leafName(location)}`, outcome)
        }
      }
    }
    return { seed, operations, bounded, unbounded, requests, slowestMs, failures, durationMs: performance.now() - started }
  })

/** The failures as text, fields without a declared maximum listed together; "" when there are none. */
export const formatOversizeFailures = (failures: ReadonlyArray<OversizeFailure>): string => {
  const undeclared = failures.filter((f) => f.check === "no declared maximum")
  const blocks = undeclared.length === 0 ? [] : [[`✗ no declared maximum (${undeclared.length}):`, ...undeclared.map((f) => `  ${f.operation.padEnd(32)} ${f.location}`)].join("\n")]
  for (const f of failures.filter((f) => f.check !== "no declared maximum")) {
    blocks.push([`✗ ${f.check} — ${f.operation} ${f.location}: ${f.message}`,
      `  reproduce: seed ${f.seed}, operation ${f.operationIndex} of the document`, f.request.replace(/^/gm, "  "), `  → ${f.response}`].join("\n"))
  }
  return blocks.join("\n\n")
}

/** The report as text: figures, then the failures. */
export const formatOversizeReport = (report: OversizeReport): string =>
  [
    `oversize mode, seed ${report.seed}: ${report.operations} operations, ${report.bounded} bounded strings and arrays sent over their maximum, ` +
    `${report.unbounded} without a declared maximum; ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s, slowest ${report.slowestMs.toFixed(0)} ms`,
    `failures: ${report.failures.length}`,
    ...(report.failures.length > 0 ? ["", formatOversizeFailures(report.failures)] : [])
  ].join("\n")
