/**
 * Properties every response must have, whatever was sent: no 5xx; a status the document declares
 * for the operation; a body valid against the document's schema for that status; error bodies in
 * the spec's shape for the area; the security headers of every response and the headers the
 * document declares for the status (`Retry-After` on 429); nothing that looks like a stack trace,
 * SQL, a file path or a secret; and no success for a request the document itself calls invalid.
 */
import type { Contract } from "./contract.js"
import type { Area, Operation } from "./document.js"
import type { Draft } from "./generate.js"
import type { Secrets } from "./secrets.js"

export interface Received {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The parsed body; undefined when empty or not JSON. */
  readonly json: unknown
  /** Wall-clock time from sending to the whole body read (the oversize mode's latency bound). */
  readonly elapsedMs?: number
}

/** A broken property: `check` names the class of bug (the report groups by it). */
export interface Violation {
  readonly check: string
  readonly message: string
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isStringList = (u: unknown): u is Array<string> => Array.isArray(u) && u.every((m) => typeof m === "string" && m.length > 0)

/**
 * The spec's error bodies (general §7, ECM §7): general `{"errors":"…"}`, or for 422 an object of
 * field → messages; ECM `{"errors":["…"]}`, but 401 keeps the string in both areas. Statuses the
 * spec does not show (413) may use either form.
 */
export const errorShapeProblem = (area: Area, status: number, body: unknown): string | undefined => {
  if (!isRecord(body) || !("errors" in body)) return "an error body must be an object with `errors`"
  const extra = Object.keys(body).filter((k) => k !== "errors")
  if (extra.length > 0) return `unexpected keys beside errors: ${extra.join(", ")}`
  const errors = body.errors
  const isMessage = typeof errors === "string" && errors.length > 0
  if (status === 413) return isMessage || isStringList(errors) ? undefined : "errors must be a message or a list of messages"
  if (status === 401) return isMessage ? undefined : "401: errors must be a string"
  if (area === "ecm") return isStringList(errors) && errors.length > 0 ? undefined : "ECM area: errors must be a non-empty list of messages"
  if (status === 422) {
    const ok = isRecord(errors) && Object.keys(errors).length > 0 && Object.values(errors).every((m) => isStringList(m) && m.length > 0)
    return ok ? undefined : "general area 422: errors must map each field to a non-empty list of messages"
  }
  return isMessage ? undefined : "general area: errors must be a non-empty string"
}

/**
 * Headers every response of the API carries, error or success (what the app
 * sends is pinned in test/Http/ResponseHeaders.test.ts): personal health data is not cached, not
 * MIME-sniffed, and no referrer leaks the URL. The document cannot declare them on every response.
 */
export const securityHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
} as const

/** Comma-separated header directives, lower-cased: `no-store, max-age=0` -> ["no-store", "max-age=0"]. */
const directives = (value: string) => value.split(",").map((d) => d.trim().toLowerCase())

/** The security headers, and the headers the document declares required for the response's status. */
export const headerProblems = (operation: Operation, received: Received): Array<Violation> => {
  const found: Array<Violation> = []
  for (const [name, expected] of Object.entries(securityHeaders)) {
    const value = received.headers[name]
    if (value === undefined) found.push({ check: "missing security header", message: `no ${name} (expected ${expected}) on a ${received.status}` })
    else if (!directives(value).includes(expected)) {
      found.push({ check: "wrong security header", message: `${name}: ${value} on a ${received.status} (expected ${expected})` })
    }
  }
  for (const header of operation.responseHeaders.get(received.status) ?? []) {
    const value = received.headers[header.name]
    if (value === undefined) {
      if (header.required) found.push({ check: "missing declared header", message: `no ${header.name} on a ${received.status}; the document requires it` })
      continue
    }
    if (header.schema.type === "integer") {
      const minimum = typeof header.schema.minimum === "number" ? header.schema.minimum : -Infinity
      if (!/^\d+$/.test(value) || Number(value) < minimum) {
        found.push({ check: "declared header invalid", message: `${header.name}: ${JSON.stringify(value)} is not an integer of at least ${minimum}` })
      }
    }
  }
  return found
}

/** Stack frames, raw or inside a JSON string (where the newline is written `\n`). */
const stackTrace = [/(?:\n|\\n)\s*at [^\n"]+:\d+:\d+/, /\bat (?:async )?[\w$.<>]+ \((?:file:|node:|\/)[^)]*:\d+:\d+\)/]
const filePath = [/node_modules[\\/]/, /file:\/\/\//, /(?:^|[\s"'(=])\/(?:work|home|usr|var|tmp|opt|root|srv|app|src|etc)\/[\w.-]+\//, /\.(?:ts|js|mjs|cjs):\d+(?::\d+)?\b/, /\b[A-Z]:\\[\w-]+\\/]
const sql = [
  /\bSELECT\b[\s\S]{1,200}\bFROM\b/i, /\bINSERT\s+INTO\b/i, /\bUPDATE\s+\w+\s+SET\b/i, /\bDELETE\s+FROM\b/i,
  /syntax error at or near/i, /violates (?:unique|foreign key|not-null|check) constraint/i, /duplicate key value/i,
  /\brelation "[^"]+"/i, /\bSQLSTATE\b/, /invalid input syntax for/i, /invalid byte sequence for encoding/i, /out of range for type/i,
  /\bpg_\w+/, /\bpostgres(?:ql)?:\/\//i
]
const secretShapes = [/\bscrypt\$\d+\$/, /\$argon2(?:id|i|d)\$/, /\$2[aby]\$\d\d\$/, /"(?:password_hash|token_hash|code_hash)"/, /-----BEGIN [A-Z ]*PRIVATE KEY-----/]

/**
 * What a response (headers and body) must never contain. Success bodies echo what was stored,
 * which may be an injection string the harness sent as a name, so SQL is looked for in error
 * responses only.
 */
export const leaks = (received: Received, secrets: Secrets): Array<Violation> => {
  const headers = Object.entries(received.headers).map(([k, v]) => `${k}: ${v}`).join("\n")
  const text = `${headers}\n\n${received.text}`
  const found: Array<Violation> = []
  const first = (patterns: ReadonlyArray<RegExp>) => patterns.find((p) => p.test(text))
  const trace = first(stackTrace)
  if (trace) found.push({ check: "leak: stack trace", message: `matches ${trace}` })
  const path = first(filePath)
  if (path) found.push({ check: "leak: file path", message: `matches ${path}` })
  if (received.status >= 400) {
    const statement = first(sql)
    if (statement) found.push({ check: "leak: SQL", message: `matches ${statement}` })
  }
  const shape = first(secretShapes)
  if (shape) found.push({ check: "leak: secret", message: `matches ${shape}` })
  for (const hit of secrets.find(text, "response").filter((h) => h.kind === "password" || h.kind === "token")) {
    found.push({ check: "leak: secret", message: `the response holds a ${hit.kind} the harness sent` })
  }
  return found
}

export interface Exchange {
  readonly operation: Operation
  readonly draft: Draft
  /** The document says the request is invalid, or the mutation made sure of it. */
  readonly mustBeRefused: boolean
  /** The status the answer must have (403 for a webhook without a valid signature). */
  readonly expectedStatus?: number | undefined
  readonly received: Received
}

/** Every property of one exchange. */
export const checkExchange = (exchange: Exchange, contract: Contract, secrets: Secrets): Array<Violation> => {
  const { operation, received } = exchange
  const violations: Array<Violation> = []
  if (received.status >= 500) violations.push({ check: "5xx", message: `status ${received.status}` })
  if (!operation.responses.has(received.status)) {
    violations.push({
      check: "undeclared status",
      message: `status ${received.status}; declared: ${[...operation.responses.keys()].join(", ")}`
    })
  } else {
    const errors = contract.responseErrors(operation, received.status, received.json)
    if (errors.length > 0) violations.push({ check: "body does not match the document", message: errors.slice(0, 5).join("; ") })
  }
  if (received.text.length > 0 && received.json !== undefined && !/^application\/json\b/.test(received.headers["content-type"] ?? "")) {
    violations.push({ check: "content type", message: `JSON body sent as ${received.headers["content-type"] ?? "(none)"}` })
  }
  // 5xx bodies are "not shown" by the spec; the 5xx itself is the failure.
  if (received.status >= 400 && received.status < 500) {
    const problem = errorShapeProblem(operation.area, received.status, received.json)
    if (problem) violations.push({ check: "error body shape", message: `${operation.area} area, ${received.status}: ${problem}` })
  }
  violations.push(...headerProblems(operation, received))
  if (exchange.expectedStatus !== undefined && received.status !== exchange.expectedStatus) {
    violations.push({ check: "wrong refusal", message: `status ${received.status}; expected ${exchange.expectedStatus}` })
  }
  if (exchange.mustBeRefused && received.status < 400) {
    violations.push({ check: "invalid request accepted", message: `status ${received.status} for a request the document says is invalid` })
  }
  violations.push(...leaks(received, secrets))
  return violations
}
