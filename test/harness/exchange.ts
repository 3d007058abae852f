/** Sending one case and checking its response: the step the campaign, the access matrix and the BOLA check share. */
import { Effect } from "effect"
import { type Case, describeCase, type Tokens, toWire, type Wire } from "./cases.js"
import { checkExchange, type Received, type Violation } from "./checks.js"
import type { Harness } from "./harness.js"
import { minimumSecretLength } from "./secrets.js"

export interface Outcome {
  readonly wire: Wire
  /** Undefined when no response came back (a transport error, itself a violation). */
  readonly received: Received | undefined
  readonly violations: ReadonlyArray<Violation>
  /** The request as a failure report prints it. */
  readonly request: string
  /** The response, clipped, as a failure report prints it. */
  readonly response: string
}

/** String values of `token`-named fields, at any depth. */
const tokensIn = (value: unknown): Array<string> =>
  Array.isArray(value) ? value.flatMap(tokensIn)
    : typeof value === "object" && value !== null
    ? Object.entries(value).flatMap(([key, v]) => (/token$/i.test(key) && typeof v === "string" && v.length >= minimumSecretLength ? [v] : tokensIn(v)))
    : []

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text)

export const exchange = (harness: Harness, testCase: Case, tokens: Tokens): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const wire = toWire(testCase, tokens, harness.tokenHeader)
    const request = describeCase(testCase, wire, harness.tokenHeader)
    const sent = yield* Effect.either(harness.send(wire))
    if (sent._tag === "Left") {
      return { wire, received: undefined, violations: [{ check: "transport error", message: sent.left.message }], request, response: "(no response)" }
    }
    const received = sent.right
    const violations = checkExchange({
      operation: testCase.operation,
      draft: testCase.draft,
      mustBeRefused: testCase.refusedByConstruction || harness.contract.requestViolations(testCase.operation, testCase.draft).length > 0,
      expectedStatus: testCase.expectedStatus,
      received
    }, harness.contract, harness.secrets)
    // Tokens the server issues (a sign-in's session) join the values telemetry must not hold.
    if (received.status < 300) for (const token of tokensIn(received.json)) harness.secrets.add("token", token)
    return { wire, received, violations, request, response: `${received.status} ${clip(received.text, 600)}` }
  })
