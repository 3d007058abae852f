/**
 * One generated case: an operation, a caller and a draft request (valid, or a named hostile
 * variant), derived from a seed alone so a failure can be regenerated. `toWire` turns it into
 * the bytes sent; `describeCase` prints it for a failure report, tokens replaced by the caller.
 */
import fc from "fast-check"
import type { Operation } from "./document.js"
import { type Draft, type GenerationContext, validDraft } from "./generate.js"
import { hostileTokens, mutationArbitrary } from "./hostile.js"
import { formParamsOf, signatureHeader, twilioSignature } from "./signature.js"
import type { Role, World } from "./world.js"

export type Caller = "anonymous" | "bad token" | Role

export interface Case {
  readonly operation: Operation
  readonly caller: Caller
  /** For `bad token`: what is sent. */
  readonly badToken: string
  /** `valid`, or the name of the hostile mutation. */
  readonly variant: string
  readonly draft: Draft
  readonly refusedByConstruction: boolean
  /** The status the answer must have whatever else it is (403 for a webhook without a valid signature). */
  readonly expectedStatus?: number | undefined
}

export interface Wire {
  readonly method: string
  /** Path and query, percent-encoded. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

/**
 * Who calls: mostly a caller the operation is meant for (an admin for admin-only operations, a
 * signed-in user for the others, no one for public ones), sometimes anyone else.
 */
const callerArbitrary = (operation: Operation): fc.Arbitrary<Caller> => {
  const intended: ReadonlyArray<Caller> = operation.adminOnly ? ["admin"]
    : operation.staffOnly ? ["staff", "admin"]
    : operation.tokenHeader !== undefined ? ["parent", "staff", "admin"]
    : ["anonymous"]
  const anyone: ReadonlyArray<Caller> = ["anonymous", "bad token", "parent", "staff", "admin"]
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...intended) }, { weight: 1, arbitrary: fc.constantFrom(...anyone) })
}

export type Kind = "valid" | "hostile" | "any"

/** Valid requests one time in four (always, for `valid`), hostile variants otherwise. */
export const caseArbitrary = (
  operation: Operation,
  context: GenerationContext,
  tokenHeaders: ReadonlySet<string>,
  kind: Kind
): fc.Arbitrary<Case> => {
  const valid = validDraft(operation, context, tokenHeaders)
  const hostile = valid.chain((draft) =>
    mutationArbitrary(context.document, operation, draft).map((mutation) => ({
      variant: mutation.name,
      draft: mutation.apply(draft),
      refusedByConstruction: mutation.refusedByConstruction ?? false,
      expectedStatus: mutation.expectedStatus
    }))
  )
  const plain = valid.map((draft) => ({ variant: "valid", draft, refusedByConstruction: false, expectedStatus: undefined }))
  const request = kind === "valid" ? plain : kind === "hostile" ? hostile : fc.oneof({ weight: 1, arbitrary: plain }, { weight: 3, arbitrary: hostile })
  return fc.record({
    caller: callerArbitrary(operation),
    badToken: fc.oneof(context.pii.token, fc.constantFrom(...hostileTokens)),
    request
  }).map(({ badToken, caller, request }) => ({ operation, caller, badToken, ...request }))
}

/** The token each signed-in caller sends. */
export type Tokens = (caller: Role) => string

export const tokensOf = (world: World): Tokens => (caller) => world.principals[caller].token

/** The case as an HTTP request, callers signed in with `tokens`. */
export const toWire = (testCase: Case, tokens: Tokens, tokenHeader: string): Wire => {
  const { draft, operation } = testCase
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => draft.pathParams[name] ?? "")
  const query = draft.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")
  const headers: Record<string, string> = { ...draft.headers }
  const header = operation.tokenHeader ?? tokenHeader
  if (testCase.caller === "bad token") headers[header] = testCase.badToken
  else if (testCase.caller !== "anonymous") headers[header] = tokens(testCase.caller)
  let body: string | undefined
  let formParams: Record<string, string> = {}
  if (draft.body.kind === "json" && operation.bodyEncoding === "form") {
    formParams = formParamsOf(draft.body.value)
    headers["content-type"] = "application/x-www-form-urlencoded"
    body = new URLSearchParams(formParams).toString()
  } else if (draft.body.kind === "json") {
    headers["content-type"] = "application/json"
    body = JSON.stringify(draft.body.value)
  } else if (draft.body.kind === "text") {
    headers["content-type"] = draft.body.contentType
    body = draft.body.text
    if (/urlencoded/.test(draft.body.contentType)) formParams = Object.fromEntries(new URLSearchParams(draft.body.text))
  }
  const url = query === "" ? path : `${path}?${query}`
  // Signed as the provider signs, unless a hostile variant put its own (or an empty) signature.
  if (operation.signature !== undefined && headers[signatureHeader] === undefined) {
    headers[signatureHeader] = twilioSignature(url, formParams)
  }
  if (headers[signatureHeader] === "") delete headers[signatureHeader]
  return { method: operation.method, url, headers, body }
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text)

/** For a failure report: the request as sent, the caller's token named rather than shown. */
export const describeCase = (testCase: Case, wire: Wire, tokenHeader: string): string => {
  const headers = Object.entries(wire.headers)
    .map(([k, v]) => `${k}: ${k.toLowerCase() === tokenHeader.toLowerCase() ? `<${testCase.caller} token${testCase.caller === "bad token" ? ` ${JSON.stringify(clip(v, 40))}` : ""}>` : v}`)
  return [
    `${wire.method} ${clip(wire.url, 400)}  [${testCase.variant}; caller: ${testCase.caller}]`,
    ...headers.map((h) => `  ${h}`),
    ...(wire.body === undefined ? [] : [`  ${clip(wire.body, 600)}`])
  ].join("\n")
}
