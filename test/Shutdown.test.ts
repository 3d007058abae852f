/**
 * Graceful shutdown, on the real entry point: SIGTERM while a request is in flight
 * (its body still arriving) stops new connections, lets the request finish with a full response,
 * then closes the pool and logs one line with the time taken and the requests drained. A
 * request that outlives SHUTDOWN_GRACE_SECONDS is cut, and the process still exits. An idle
 * keep-alive connection is closed at once, however long HTTP_KEEP_ALIVE_TIMEOUT_MS would keep it.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import * as net from "node:net"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { freshDatabase } from "./support/database.js"
import { freePort } from "../src/Layers/FreePort.js"
import { openConnection } from "./support/keepAliveConnection.js"

const root = fileURLToPath(new URL("../", import.meta.url))

interface Server {
  readonly child: ChildProcess
  readonly port: number
  readonly lines: Array<Record<string, unknown>>
  /** Resolves with the first log line whose message matches. */
  readonly logged: (message: string) => Promise<Record<string, unknown>>
  readonly exited: Promise<number | null>
}

const startServer = async (env: Record<string, string>): Promise<Server> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info", LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const lines: Array<Record<string, unknown>> = []
  const waiters: Array<{ message: string; resolve: (line: Record<string, unknown>) => void }> = []
  let buffered = ""
  let stderr = ""
  child.stderr!.on("data", (d) => (stderr += d))
  child.stdout!.on("data", (chunk) => {
    buffered += chunk
    let newline: number
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const text = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      let line: Record<string, unknown>
      try {
        line = JSON.parse(text)
      } catch {
        continue
      }
      lines.push(line)
      for (const waiter of waiters.filter((w) => w.message === line.message)) waiter.resolve(line)
    }
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const logged = (message: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const seen = lines.find((l) => l.message === message)
      if (seen) return resolve(seen)
      waiters.push({ message, resolve })
      void exited.then(() => reject(new Error(`exited before logging "${message}": ${stderr}`)))
    })
  await logged(`Listening on http://127.0.0.1:${port}`)
  return { child, port, lines, logged, exited }
}

interface SlowRequest {
  /** Resolves once the server has the request and asked for its body (100 Continue). */
  readonly accepted: Promise<void>
  readonly finish: () => void
  readonly outcome: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string } | { error: string }>
}

/** A sign-in whose body arrives only when `finish` is called: a request in flight on demand. */
const slowSignIn = (port: number): SlowRequest => {
  const body = JSON.stringify({ user: { email: "nobody@example.test", password: "wrong-password-1" } })
  const req = http.request({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/v1/users/sign_in",
    agent: false,
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), expect: "100-continue" }
  })
  const accepted = new Promise<void>((resolve) => req.once("continue", () => resolve()))
  const outcome = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string } | { error: string }>((resolve) => {
    req.once("response", (res) => {
      let text = ""
      res.on("data", (d) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }))
    })
    req.once("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
  })
  req.flushHeaders()
  return { accepted, finish: () => req.end(body), outcome }
}

const connectOutcome = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
  })

const appConnections = (databaseUrl: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      const result = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'care-coordination-api'"
      )
      return result.rows[0].n as number
    } finally {
      await client.end()
    }
  })

it.live("SIGTERM drains a request in flight, then closes the pool and logs the drain", () =>
  Effect.gen(function*() {
    const database = yield* freshDatabase()
    const server = yield* Effect.promise(() => startServer({ DATABASE_URL: database.url, SHUTDOWN_GRACE_SECONDS: "20" }))
    const slow = slowSignIn(server.port)
    yield* Effect.promise(() => slow.accepted)
    expect(yield* appConnections(database.url)).toBeGreaterThan(0)

    server.child.kill("SIGTERM")
    const draining = yield* Effect.promise(() => server.logged("shutting down: no new connections, draining requests in flight"))
    expect(draining["http.server.active_requests"]).toBe(1)
    // No new connections once the drain began.
    expect(yield* Effect.promise(() => connectOutcome(server.port))).toBe("ECONNREFUSED")

    slow.finish()
    const outcome = yield* Effect.promise(() => slow.outcome)
    expect(outcome).toMatchObject({ status: 401, body: JSON.stringify({ errors: "Invalid email or password" }) })
    expect((outcome as { headers: http.IncomingHttpHeaders }).headers.connection).toBe("close")

    expect(yield* Effect.promise(() => server.exited)).toBe(0)
    const report = server.lines.filter((l) => l.message === "shutdown complete")
    expect(report).toHaveLength(1)
    expect(report[0]).toMatchObject({ "shutdown.requests_drained": 1, "shutdown.requests_cut": 0 })
    expect(report[0]!["shutdown.duration_ms"]).toEqual(expect.any(Number))
    // The drained request was answered and logged before the report, and the pool is closed.
    const order = server.lines.map((l) => l.message === "request" ? `request ${l["http.route"]}` : l.message)
    expect(order.indexOf("request /v1/users/sign_in")).toBeLessThan(order.indexOf("shutdown complete"))
    expect(yield* appConnections(database.url)).toBe(0)
  }).pipe(Effect.scoped), { timeout: 90_000 })

it.live("a request that outlives SHUTDOWN_GRACE_SECONDS is cut and the process still exits", () =>
  Effect.gen(function*() {
    const database = yield* freshDatabase()
    const server = yield* Effect.promise(() => startServer({ DATABASE_URL: database.url, SHUTDOWN_GRACE_SECONDS: "1" }))
    const slow = slowSignIn(server.port)
    yield* Effect.promise(() => slow.accepted)
    server.child.kill("SIGTERM")
    expect(yield* Effect.promise(() => server.exited)).toBe(0)
    expect(yield* Effect.promise(() => slow.outcome)).toHaveProperty("error")
    const report = server.lines.find((l) => l.message === "shutdown complete")
    expect(report).toMatchObject({ "shutdown.requests_drained": 0, "shutdown.requests_cut": 1 })
    expect(report!["shutdown.duration_ms"]).toBeGreaterThanOrEqual(1000)
  }).pipe(Effect.scoped), { timeout: 90_000 })

it.live("SIGTERM closes an idle keep-alive connection at once, long before its keep-alive timeout", () =>
  Effect.gen(function*() {
    const database = yield* freshDatabase()
    const server = yield* Effect.promise(() => startServer({ DATABASE_URL: database.url, HTTP_KEEP_ALIVE_TIMEOUT_MS: "120000" }))
    const connection = yield* Effect.promise(() => openConnection(server.port))
    yield* Effect.addFinalizer(() => Effect.sync(connection.destroy))
    const health = yield* Effect.promise(() => connection.get("/health"))
    expect(health.status).toBe(200)
    // The setting reaches the server: the connection may idle two minutes.
    expect(health.headers).toMatchObject({ connection: "keep-alive", "keep-alive": "timeout=120" })

    const signalled = performance.now()
    server.child.kill("SIGTERM")
    const closedAfter = (yield* Effect.promise(() => connection.closed)) - signalled
    expect(closedAfter).toBeLessThan(10_000)
    expect(yield* Effect.promise(() => server.exited)).toBe(0)
    expect(server.lines.find((l) => l.message === "shutdown complete"))
      .toMatchObject({ "shutdown.requests_drained": 0, "shutdown.requests_cut": 0 })
  }).pipe(Effect.scoped), { timeout: 90_000 })
