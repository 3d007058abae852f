/**
 * HTTP_KEEP_ALIVE_TIMEOUT_MS on the Node server the app listens with (`nodeServer`): the timeout is
 * advertised, a connection idle for less is reused, and the server closes one idle for longer.
 * The headers timeout stays above it. The shutdown side (an idle connection closed at SIGTERM,
 * long before its timeout) is in test/Shutdown.test.ts.
 */
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { NodeServer, nodeServer, serverTimeouts } from "../../../src/Layers/Http/Shutdown.js"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { openConnection } from "../../support/keepAliveConnection.js"
import { testSettings } from "../fixtures.js"

/** `nodeServer` with the given keep-alive timeout, answering every request with "ok". */
const served = (keepAliveTimeoutMs: number) =>
  HttpServer.serve(Effect.succeed(HttpServerResponse.text("ok"))).pipe(
    Layer.provideMerge(nodeServer),
    Layer.provide(Layer.succeed(AppConfig, testSettings({ keepAliveTimeoutMs })))
  )

const serverPort = Effect.map(HttpServer.HttpServer, (server) => {
  if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP server")
  return server.address.port
})

describe("serverTimeouts", () => {
  it("headers may take a second longer than a connection may idle; a whole request at least Node's 300 s", () => {
    // AWS ALB's 60 s idle timeout under the default 65 s.
    expect(serverTimeouts(65_000)).toEqual({ keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 300_000 })
    // GCP's load balancers keep connections 600 s: past Node's request timeout, which follows.
    expect(serverTimeouts(620_000)).toEqual({ keepAliveTimeout: 620_000, headersTimeout: 621_000, requestTimeout: 621_000 })
    // Node accepts them (it refuses a headers timeout above the request timeout).
    expect(() => createServer(serverTimeouts(620_000)).close()).not.toThrow()
  })
})

describe("nodeServer", () => {
  it.effect("applies the configured keep-alive timeout and the timeouts that follow from it", () =>
    Effect.gen(function*() {
      const server = yield* NodeServer
      expect({ keepAlive: server.keepAliveTimeout, headers: server.headersTimeout, request: server.requestTimeout })
        .toEqual({ keepAlive: 120_000, headers: 121_000, request: 300_000 })
    }).pipe(Effect.provide(served(120_000))))

  it.live("reuses a connection idle for less than the timeout, and closes one idle for longer", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      const server = yield* NodeServer
      let connections = 0
      server.on("connection", () => connections++)
      const connection = yield* Effect.promise(() => openConnection(port))
      yield* Effect.addFinalizer(() => Effect.sync(connection.destroy))

      const first = yield* Effect.promise(() => connection.get("/"))
      expect(first).toMatchObject({ status: 200, body: "ok" })
      expect(first.headers["keep-alive"]).toBe("timeout=1")
      // Idle for a third of the timeout, then reused: the same connection answers.
      yield* Effect.sleep("300 millis")
      const second = yield* Effect.promise(() => connection.get("/"))
      expect(second).toMatchObject({ status: 200, body: "ok" })
      expect(connections).toBe(1)
      const answered = performance.now()

      // Left idle, the server closes it: not before the timeout, and long before Node's default
      // (5 s, and Node waits a second more than it advertises).
      const closedAfter = (yield* Effect.promise(() => connection.closed)) - answered
      expect(closedAfter).toBeGreaterThanOrEqual(1_000)
      expect(closedAfter).toBeLessThan(5_000)
    }).pipe(Effect.provide(served(1_000)), Effect.scoped), { timeout: 20_000 })
})
