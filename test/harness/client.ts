/**
 * Sends a wire request to the server under test with `fetch`: raw bytes, no client of the Api's
 * own, so the harness sends what the document allows and more (duplicated parameters, broken
 * JSON, wrong content types). Not traced: only the server's telemetry is scanned.
 */
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import type { Received } from "./checks.js"
import type { Wire } from "./cases.js"

export type Send = (wire: Wire) => Effect.Effect<Received, TransportError>

export class TransportError {
  readonly _tag = "TransportError"
  constructor(readonly message: string) {}
}

const parse = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A sender for the server at `baseUrl`. */
export const sender = (baseUrl: string): Send => (wire) =>
  Effect.tryPromise({
    try: async (signal) => {
      const started = performance.now()
      const response = await fetch(`${baseUrl}${wire.url}`, {
        method: wire.method,
        headers: wire.headers,
        ...(wire.body === undefined ? {} : { body: wire.body }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)])
      })
      const text = await response.text()
      const headers: Record<string, string> = {}
      response.headers.forEach((value, key) => (headers[key] = value))
      return { status: response.status, headers, text, json: parse(text), elapsedMs: performance.now() - started }
    },
    catch: (error) => new TransportError(error instanceof Error ? `${error.name}: ${error.message}${error.cause ? ` (${String(error.cause)})` : ""}` : String(error))
  })

/** The sender for the in-process server of the current layer. */
export const serverSender = Effect.map(HttpServer.HttpServer, (server): Send => {
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("the harness needs a TCP server")
  return sender(`http://127.0.0.1:${address.port}`)
})
