/**
 * Everything a run needs, built from the served document: its operations, the validator, the
 * generators, the sender, and what was generated so far (for the scans).
 */
import { Effect } from "effect"
import { serverSender, type Send } from "./client.js"
import { type Contract, makeContract } from "./contract.js"
import { type OpenApiDocument, type Operation, operationsOf, tokenHeaderName } from "./document.js"
import { makePii, type Pii } from "./pii.js"
import { Secrets } from "./secrets.js"
import type { Telemetry } from "./telemetry.js"

export interface Harness {
  readonly document: OpenApiDocument
  readonly operations: ReadonlyArray<Operation>
  readonly tokenHeader: string
  /** Lower-cased header names that carry the user token (never generated as parameters). */
  readonly tokenHeaders: ReadonlySet<string>
  readonly contract: Contract
  readonly secrets: Secrets
  readonly pii: Pii
  readonly send: Send
  readonly telemetry: Telemetry
}

export const documentPath = "/v1/openapi.json"

/** Fetches the document the server serves and builds the harness around it. */
export const makeHarness = (send: Send, telemetry: Telemetry): Effect.Effect<Harness> =>
  Effect.gen(function*() {
    const served = yield* Effect.orDie(send({ method: "GET", url: documentPath, headers: {}, body: undefined }))
    if (served.status !== 200) return yield* Effect.dieMessage(`GET ${documentPath} answered ${served.status}`)
    const document = served.json as OpenApiDocument
    const secrets = new Secrets()
    const tokenHeader = tokenHeaderName(document)
    return {
      document,
      operations: operationsOf(document),
      tokenHeader,
      tokenHeaders: new Set([tokenHeader.toLowerCase()]),
      contract: makeContract(document),
      secrets,
      pii: makePii(secrets),
      send,
      telemetry
    }
  })

/** The harness for the in-process server of the current layer. */
export const serverHarness = (telemetry: Telemetry) => Effect.flatMap(serverSender, (send) => makeHarness(send, telemetry))
