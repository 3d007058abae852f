/**
 * Hostile variants of a valid request: required fields removed, wrong types, nulls, empty and
 * 10 kB strings, unicode, RTL and emoji, SQL and HTML injection, negative, zero, huge and
 * non-numeric ids, unknown extra fields, duplicated query parameters, broken JSON. Each is a
 * named mutation of a `Draft`, chosen by fast-check from those that apply to the operation.
 */
import fc from "fast-check"
import { type JsonSchema, type OpenApiDocument, type Operation, pathParameterNames, resolve } from "./document.js"
import { type Body, type Draft, encodeSegment } from "./generate.js"
import { signatureHeader, twilioSignature } from "./signature.js"

export interface Mutation {
  readonly name: string
  readonly apply: (draft: Draft) => Draft
  /**
   * The mutation makes the request invalid in a way the validator cannot see (broken JSON, a
   * content type the operation does not take): the server must refuse it.
   */
  readonly refusedByConstruction?: boolean
  /** The status the answer must have (403: a webhook without a valid signature). */
  readonly expectedStatus?: number
}

const tenKilobytes = 10 * 1024

export const hostileStrings: ReadonlyArray<string> = [
  "", " ", "\t\r\n",
  "a".repeat(tenKilobytes),
  "é".repeat(tenKilobytes / 2),
  "\u202Egnp.exe\u202C", "مرحبا بالعالم", "שָׁלוֹם עוֹלָם", "abc\u200Fdef",
  "👨‍👩‍👧‍👦🔥💩", "🏳️‍🌈".repeat(64), "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗͎",
  "\u200B\u200C\u200D\uFEFF", "a\u0000b", "\u0000", "\u0007\u001b[31mred", "\ud800", "\udfff\ud800x",
  "' OR '1'='1", "'; DROP TABLE users; --", "1; SELECT pg_sleep(10)--", "\\", "%", "_", "%_%\\", "$1", "E'\\x00'",
  "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\"><svg/onload=alert(1)>", "{{7*7}}", "${7*7}",
  "null", "undefined", "true", "NaN", "-1", "0", "1e309", "[]", "{}", "__proto__", "constructor"
]

export const hostileNumbers: ReadonlyArray<number> = [
  -1, 0, 1.5, 0.1, 1e-7, -2147483649, 2147483647, 2147483648, Number.MAX_SAFE_INTEGER + 2, 1e20, 1e308, -1e308
]

/** Path segments: negative, zero, huge, fractional and non-numeric ids, injection, unicode. */
export const hostileIds: ReadonlyArray<string> = [
  "-1", "0", "-0", "2147483648", "99999999999999999999999", "1e3", "1.5", "0x1A", "abc", " 1", "1 ", "+1",
  "１", "٣", "NaN", "Infinity", "1 OR 1=1", "1;DROP TABLE users", "<b>1</b>", "😀", "\u202E1", "9".repeat(tenKilobytes)
]

/** Segments sent as they are, not percent-encoded: broken or surprising escapes. */
export const rawSegments: ReadonlyArray<string> = ["%", "%zz", "%E0%A4%A", "%00", "%2F", "%C0%AE", "%FF%FE"]

/**
 * Node refuses a request line and headers over 16 KiB with 431 before the app sees it (a transport
 * limit, not part of the Api's contract), so what goes in a URL stays under 11 kB once encoded:
 * 10 kB strings in URLs are ASCII. Lone surrogates have no UTF-8 form, so no URL can carry them.
 */
const encodedLength = (text: string): number => {
  try {
    return encodeURIComponent(text).length
  } catch {
    return Infinity
  }
}
const fitsInUrl = (text: string) => encodedLength(text) <= 11 * 1024
const urlStrings = hostileStrings.filter(fitsInUrl)
const shortStrings = hostileStrings.filter((s) => encodedLength(s) <= 512)

/** Tokens a client might send that are not a session. */
export const hostileTokens: ReadonlyArray<string> = ["", "x".repeat(300), "' OR 1=1 --", "null", "Bearer abc", "%00"]

/** Raw JSON numbers no `JSON.stringify` writes. */
const rawNumbers: ReadonlyArray<string> = ["1e999", "-1e999", "123456789012345678901234567890", "-0", "0.0000000000000000001"]

const brokenJson: ReadonlyArray<string> = ["", "{", "{\"user\":", "{'a':1}", "[1,]", "\u0000", "null null"]

/** Valid JSON, but nested deeper than any payload: arrays, or objects, 5000 levels down. */
const deepJson: ReadonlyArray<string> = [`${"[".repeat(5000)}${"]".repeat(5000)}`, `${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}`]

const extraFields: ReadonlyArray<Record<string, unknown>> = [
  { unexpected_field: "x" },
  { role: "admin", admin: true, id: 1 },
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  { "": "empty key", "a.b": 1, "a[b]": 2 }
]

type JsonPath = ReadonlyArray<string | number>

/** Every node of a JSON value but the root, parents first. */
export const locationsOf = (value: unknown, path: JsonPath = []): Array<JsonPath> => {
  const children: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : typeof value === "object" && value !== null ? Object.entries(value) : []
  return children.flatMap(([key, child]) => [[...path, key], ...locationsOf(child, [...path, key])])
}

const valueAt = (value: unknown, path: JsonPath): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value)

const remove = Symbol("remove")

/** A copy of `value` with the node at `path` replaced (or removed, when `replacement` is `remove`). */
export const updateAt = (value: unknown, path: JsonPath, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const copy = structuredClone(value) as Record<string | number, unknown>
  const parent = valueAt(copy, path.slice(0, -1)) as Record<string | number, unknown>
  const key = path[path.length - 1]!
  if (replacement === remove) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1)
    else delete parent[key]
  } else {
    // defineProperty: a key such as `__proto__` becomes an own property, as JSON.parse makes it.
    Object.defineProperty(parent, key, { value: replacement, enumerable: true, writable: true, configurable: true })
  }
  return copy
}

/** Paths of the required properties present in `value`, as the schema declares them. */
export const requiredPaths = (document: OpenApiDocument, schema: JsonSchema, value: unknown, path: JsonPath = []): Array<JsonPath> => {
  const resolved = resolve(document, schema)
  const alternatives = (resolved.anyOf ?? resolved.oneOf) as Array<JsonSchema> | undefined
  if (alternatives !== undefined) {
    const objectLike = alternatives.map((s) => resolve(document, s)).find((s) => s.type === "object" || s.properties !== undefined)
    return objectLike === undefined ? [] : requiredPaths(document, objectLike, value, path)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return []
  const properties = (resolved.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((resolved.required ?? []) as Array<string>)
  return Object.entries(value).flatMap(([key, child]) => [
    ...(required.has(key) ? [[...path, key]] : []),
    ...(properties[key] ? requiredPaths(document, properties[key], child, [...path, key]) : [])
  ])
}

const wrongTypeOf = (value: unknown): unknown =>
  typeof value === "string" ? 12345
    : typeof value === "number" ? String(value)
    : typeof value === "boolean" ? "yes"
    : Array.isArray(value) ? { not: "a list" }
    : value === null ? [null]
    : "not an object"

const withBody = (draft: Draft, body: Body): Draft => ({ ...draft, body })

const jsonOf = (draft: Draft): unknown => (draft.body.kind === "json" ? draft.body.value : undefined)

/** Picks one of `items` by a generated index (the list is only known once the draft is). */
const pick = <A>(items: ReadonlyArray<A>): fc.Arbitrary<A> => fc.nat().map((i) => items[i % items.length]!)

const bodyMutations = (document: OpenApiDocument, operation: Operation, draft: Draft): Array<fc.Arbitrary<Mutation>> => {
  if (operation.body === undefined) return []
  const value = jsonOf(draft)
  const locations = locationsOf(value)
  const atLocation = (name: string, replacement: fc.Arbitrary<unknown>, only?: (v: unknown) => boolean) => {
    const chosen = locations.filter((p) => only === undefined || only(valueAt(value, p)))
    const places = chosen.length > 0 ? chosen : locations.length > 0 ? locations : [[]]
    return fc.tuple(pick(places), replacement).map(([path, next]): Mutation => ({
      name: `body: ${name}`,
      apply: (d) => withBody(d, { kind: "json", value: updateAt(jsonOf(d), path, next) })
    }))
  }
  const required = requiredPaths(document, operation.body, value)
  const mutations: Array<fc.Arbitrary<Mutation>> = [
    pick(locations.length > 0 ? locations : [[]]).map((path): Mutation => ({
      name: "body: wrong type",
      apply: (d) => withBody(d, { kind: "json", value: updateAt(jsonOf(d), path, wrongTypeOf(valueAt(jsonOf(d), path))) })
    })),
    atLocation("null", fc.constant(null)),
    atLocation("empty string", fc.constant("")),
    atLocation("10 kB string", fc.constantFrom("x".repeat(tenKilobytes), "ü".repeat(tenKilobytes / 2)), (v) => typeof v === "string"),
    atLocation("hostile text", fc.constantFrom(...hostileStrings), (v) => typeof v === "string"),
    atLocation("hostile number", fc.constantFrom(...hostileNumbers), (v) => typeof v === "number"),
    fc.tuple(pick([[], ...locations.filter((p) => isObject(valueAt(value, p)))]), fc.constantFrom(...extraFields)).map(([path, extra]): Mutation => ({
      name: "body: unknown extra fields",
      apply: (d) => withBody(d, { kind: "json", value: updateAt(jsonOf(d), path, withExtra(valueAt(jsonOf(d), path), extra)) })
    })),
    fc.constantFrom<unknown>([], "a string", 42, null, true, [{}]).map((replacement): Mutation => ({
      name: "body: not an object",
      apply: (d) => withBody(d, { kind: "json", value: replacement })
    })),
    fc.constantFrom(...brokenJson).map((text): Mutation => ({
      name: "body: malformed JSON",
      apply: (d) => withBody(d, { kind: "text", text, contentType: "application/json" }),
      refusedByConstruction: true
    })),
    fc.constantFrom(...deepJson).map((text): Mutation => ({
      name: "body: deeply nested JSON",
      apply: (d) => withBody(d, { kind: "text", text, contentType: "application/json" }),
      refusedByConstruction: true
    })),
    fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "application/xml").map((contentType): Mutation => ({
      name: "body: wrong content type",
      apply: (d) => withBody(d, { kind: "text", text: contentType.includes("urlencoded") ? "user%5Bemail%5D=a" : JSON.stringify(jsonOf(d) ?? {}), contentType }),
      refusedByConstruction: true
    })),
    fc.tuple(pick(locations.length > 0 ? locations : [[]]), fc.constantFrom(...rawNumbers)).map(([path, raw]): Mutation => ({
      name: "body: raw JSON number",
      apply: (d) => {
        const marker = "\u0001raw-number\u0001"
        const text = JSON.stringify(updateAt(jsonOf(d), path, marker)).replace(JSON.stringify(marker), raw)
        return withBody(d, { kind: "text", text, contentType: "application/json" })
      }
    }))
  ]
  if (operation.bodyRequired) {
    mutations.push(fc.constant<Mutation>({ name: "body: missing", apply: (d) => withBody(d, { kind: "none" }) }))
  }
  if (required.length > 0) {
    mutations.push(pick(required).map((path): Mutation => ({
      name: "body: required field removed",
      apply: (d) => withBody(d, { kind: "json", value: updateAt(jsonOf(d), path, remove) })
    })))
  }
  return mutations
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const withExtra = (target: unknown, extra: Record<string, unknown>): unknown => {
  if (!isObject(target)) return target
  const copy: Record<string, unknown> = { ...target }
  for (const key of Object.keys(extra)) Object.defineProperty(copy, key, { value: extra[key], enumerable: true, writable: true, configurable: true })
  // `{ __proto__: … }` in a literal sets the prototype: carry it over as an own key.
  if (Object.getPrototypeOf(extra) !== Object.prototype) {
    Object.defineProperty(copy, "__proto__", { value: Object.getPrototypeOf(extra), enumerable: true, writable: true, configurable: true })
  }
  return copy
}

const pathMutations = (operation: Operation): Array<fc.Arbitrary<Mutation>> => {
  const names = pathParameterNames(operation.path)
  if (names.length === 0) return []
  const replace = (name: string, segment: string) => (d: Draft): Draft => ({ ...d, pathParams: { ...d.pathParams, [name]: segment } })
  return [
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...hostileIds)).map(([name, id]): Mutation => ({
      name: "path: hostile id",
      apply: replace(name, encodeSegment(id))
    })),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...urlStrings)).map(([name, text]): Mutation => ({
      name: "path: hostile text",
      apply: replace(name, encodeSegment(text))
    })),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...rawSegments)).map(([name, raw]): Mutation => ({
      name: "path: raw escape",
      apply: replace(name, raw)
    }))
  ]
}

const queryMutations = (operation: Operation): Array<fc.Arbitrary<Mutation>> => {
  const declared = operation.parameters.filter((p) => p.in === "query")
  const names = declared.map((p) => p.name)
  const values = fc.oneof(fc.constantFrom(...urlStrings), fc.constantFrom(...hostileIds), fc.constantFrom("1", "2", ""))
  const shortValues = fc.oneof(fc.constantFrom(...shortStrings), fc.constantFrom(...hostileIds.filter(fitsInUrl).filter((s) => s.length < 512)), fc.constantFrom("1", "2", ""))
  const mutations: Array<fc.Arbitrary<Mutation>> = [
    fc.tuple(fc.constantFrom("unexpected", "__proto__", "page[]", "a.b", "constructor[prototype][x]"), values).map(([name, value]): Mutation => ({
      name: "query: unknown extra parameter",
      apply: (d) => ({ ...d, query: [...d.query, [name, value]] })
    }))
  ]
  if (names.length > 0) {
    mutations.push(
      fc.tuple(fc.constantFrom(...names), shortValues, shortValues).map(([name, a, b]): Mutation => ({
        name: "query: duplicated parameter",
        apply: (d) => ({ ...d, query: [...d.query.filter(([k]) => k !== name), [name, a], [name, b]] })
      })),
      fc.tuple(fc.constantFrom(...names), values).map(([name, value]): Mutation => ({
        name: "query: hostile value",
        apply: (d) => ({ ...d, query: [...d.query.filter(([k]) => k !== name), [name, value]] })
      }))
    )
  }
  const required = declared.filter((p) => p.required).map((p) => p.name)
  if (required.length > 0) {
    mutations.push(fc.constantFrom(...required).map((name): Mutation => ({
      name: "query: required parameter removed",
      apply: (d) => ({ ...d, query: d.query.filter(([k]) => k !== name) })
    })))
  }
  return mutations
}

/** The hostile mutations that apply to this operation and draft; there is always at least one. */
/**
 * A signed webhook without a valid signature: none, garbage, one made with another key, or one
 * made for another URL. Each must be refused with 403 before anything runs.
 */
const signatureMutations = (operation: Operation): Array<fc.Arbitrary<Mutation>> => {
  if (operation.signature === undefined) return []
  const withSignature = (value: string) => (d: Draft): Draft => ({ ...d, headers: { ...d.headers, [signatureHeader]: value } })
  return [
    fc.constantFrom<Mutation>(
      { name: "signature: missing", apply: withSignature(""), refusedByConstruction: true, expectedStatus: 403 },
      { name: "signature: another key", apply: withSignature(twilioSignature(operation.path, {}, "not-the-auth-token")), refusedByConstruction: true, expectedStatus: 403 },
      { name: "signature: another URL", apply: withSignature(twilioSignature("/v1/elsewhere", {})), refusedByConstruction: true, expectedStatus: 403 }
    ),
    fc.constantFrom(...hostileStrings.filter((s) => /^[\x21-\x7e]+$/.test(s))).map((value): Mutation => ({
      name: "signature: hostile value", apply: withSignature(value), refusedByConstruction: true, expectedStatus: 403
    }))
  ]
}

export const mutationArbitrary = (document: OpenApiDocument, operation: Operation, draft: Draft): fc.Arbitrary<Mutation> =>
  fc.oneof(
    ...bodyMutations(document, operation, draft),
    ...pathMutations(operation),
    ...queryMutations(operation),
    // As likely as the other families together: the signature is the whole of a webhook's access rule.
    ...signatureMutations(operation)
  )
