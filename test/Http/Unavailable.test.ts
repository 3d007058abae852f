/**
 * PostgreSQL unreachable: the app talks to its database through a TCP relay the
 * test can cut, as a network partition or a database restart would. API calls answer 503 with
 * Retry-After in the general area's shape, not 500; when the database is back, so is the API.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as net from "node:net"
import { isDatabaseUnavailable } from "../../src/Layers/Database.js"
import { unavailableResponse } from "../../src/Layers/Http/Errors.js"
import { SqlError } from "@effect/sql/SqlError"
import { freshDatabase } from "../support/database.js"
import { admin, request, signIn, TestApp } from "../support/app.js"

/**
 * Relays connections to PostgreSQL until `cut`: then refuses new ones and resets open ones. While
 * `frozen`, it holds every byte in either direction, as a stalled network or a hung server would.
 */
class Relay {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private held: Array<() => void> | undefined
  constructor(private readonly target: { host: string; port: number }, public port = 0) {}

  open = () =>
    new Promise<void>((resolve, reject) => {
      const server = net.createServer((client) => {
        const upstream = net.connect(this.target)
        for (const socket of [client, upstream]) {
          this.sockets.add(socket)
          socket.on("close", () => this.sockets.delete(socket))
          socket.on("error", () => {
            client.destroy()
            upstream.destroy()
          })
        }
        this.forward(client, upstream)
        this.forward(upstream, client)
      })
      server.once("error", reject)
      server.listen(this.port, "127.0.0.1", () => {
        this.port = (server.address() as net.AddressInfo).port
        this.server = server
        resolve()
      })
    })

  private forward(from: net.Socket, to: net.Socket) {
    from.on("data", (chunk: Buffer) => {
      if (this.held === undefined) to.write(chunk)
      else this.held.push(() => to.write(chunk))
    })
  }

  freeze = () => {
    this.held ??= []
  }

  thaw = () => {
    const held = this.held ?? []
    this.held = undefined
    for (const write of held) write()
  }

  cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of this.sockets) socket.resetAndDestroy()
      this.server?.close(() => resolve())
      this.server = undefined
    })
}

class DatabaseRelay extends Context.Tag("test/DatabaseRelay")<DatabaseRelay, Relay>() {}

const RelayedApp = Layer.unwrapScoped(Effect.gen(function*() {
  const database = yield* freshDatabase()
  const url = new URL(database.url)
  const relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) })
  yield* Effect.acquireRelease(Effect.promise(relay.open), () => Effect.promise(relay.cut))
  url.host = `127.0.0.1:${relay.port}`
  return TestApp({ databaseUrl: Option.some(Redacted.make(url.toString())) }).pipe(
    Layer.merge(Layer.succeed(DatabaseRelay, relay))
  )
}))

layer(RelayedApp, { timeout: 60_000 })("database unreachable", (it) => {
  it.effect("answers 503 with Retry-After instead of 500, and recovers when PostgreSQL is back", () =>
    Effect.gen(function*() {
      const relay = yield* DatabaseRelay
      const token = yield* signIn()
      expect((yield* request("GET", "/v1/users", { token })).status).toBe(200)

      yield* Effect.promise(relay.cut)
      for (const [method, url, options] of [
        ["GET", "/v1/users", { token }],
        ["POST", "/v1/users/sign_in", { body: { user: admin } }],
        ["POST", "/v1/users/email_has_account", { body: { email: admin.email } }]
      ] as const) {
        const response = yield* request(method, url, options)
        expect({ url, status: response.status, body: response.body }).toEqual({
          url,
          status: 503,
          body: { errors: "Service temporarily unavailable" }
        })
        expect(response.headers["retry-after"]).toBe("5")
      }
      const health = yield* request("GET", "/health")
      expect(health.status).toBe(503)
      expect(health.headers["retry-after"]).toBe("5")

      yield* Effect.promise(relay.open)
      expect((yield* request("GET", "/v1/users", { token })).status).toBe(200)
    }))

  it.effect("a database that stops answering: /health answers 503 at its two-second deadline, then 200 once it answers again", () =>
    Effect.gen(function*() {
      const relay = yield* DatabaseRelay
      expect((yield* request("GET", "/health")).status).toBe(200)

      relay.freeze()
      const started = performance.now()
      const health = yield* request("GET", "/health")
      const elapsed = performance.now() - started
      relay.thaw()
      expect({ status: health.status, body: health.body }).toEqual({ status: 503, body: { status: "unavailable", database: "unreachable" } })
      expect(health.headers["retry-after"]).toBe("5")
      expect(elapsed).toBeGreaterThanOrEqual(1_900)
      expect(elapsed).toBeLessThan(4_000)

      expect((yield* request("GET", "/health")).status).toBe(200)
    }))

  it.effect("the ECM area gets the list form", () =>
    Effect.gen(function*() {
      const response = yield* unavailableResponse("ecm")
      expect(response.status).toBe(503)
      expect(response.headers["retry-after"]).toBe("5")
      const body = response.body as { _tag: string; body: Uint8Array }
      expect(JSON.parse(new TextDecoder().decode(body.body))).toEqual({ errors: ["Service temporarily unavailable"] })
    }))

  it("tells connection failures from statement errors", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
    expect(isDatabaseUnavailable(new SqlError({ cause: refused, message: "Failed to acquire connection" }))).toBe(true)
    expect(isDatabaseUnavailable(new SqlError({ cause: new Error("Connection terminated unexpectedly"), message: "Failed to execute statement" }))).toBe(true)
    const shutdown = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })
    expect(isDatabaseUnavailable(new SqlError({ cause: shutdown, message: "Failed to execute statement" }))).toBe(true)
    const syntax = Object.assign(new Error("syntax error at or near"), { code: "42601" })
    expect(isDatabaseUnavailable(new SqlError({ cause: syntax, message: "Failed to execute statement" }))).toBe(false)
    expect(isDatabaseUnavailable(new Error("Failed to acquire connection"))).toBe(false)
  })
})
