/**
 * Push layers: the outbox appends JSON lines; the FCM layer sends through the official
 * `firebase-admin` SDK to a local stand-in for fcm.googleapis.com (its HTTPS requests are routed to
 * a local HTTP server by the app's `httpAgent` option), which sees the real requests.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as net from "node:net"
import { makeFcmPush } from "../../src/Layers/FcmPush.js"
import { OutboxPushLive, pushOutboxFile } from "../../src/Layers/OutboxPush.js"
import { Push, PushError } from "../../src/Services/Push.js"
import { tempDir, testConfig } from "./fixtures.js"

interface Captured {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly body: { message: { token: string; notification: { title: string; body: string }; data?: Record<string, string> } }
}

/** A local FCM v1 `messages:send`: accepts any token but `dead-*` (UNREGISTERED, as FCM answers). */
const fcmStandIn = Effect.acquireRelease(
  Effect.async<{ port: number; server: http.Server; captured: Array<Captured> }>((resume) => {
    const captured: Array<Captured> = []
    const server = http.createServer((req, res) => {
      let text = ""
      req.on("data", (chunk) => (text += chunk))
      req.on("end", () => {
        const body = JSON.parse(text) as Captured["body"]
        captured.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body })
        res.setHeader("content-type", "application/json")
        if (body.message.token.startsWith("dead-")) {
          res.statusCode = 404
          res.end(JSON.stringify({
            error: {
              code: 404, message: "Requested entity was not found.", status: "NOT_FOUND",
              details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "UNREGISTERED" }]
            }
          }))
          return
        }
        res.end(JSON.stringify({ name: `projects/demo-project/messages/${captured.length}` }))
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ port: (server.address() as net.AddressInfo).port, server, captured })))
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** Routes the SDK's HTTPS connections to the stand-in (plain HTTP on a local port). */
const agentTo = (port: number) => {
  const agent = new http.Agent({ keepAlive: false })
  Object.assign(agent, { protocol: "https:" })
  agent.createConnection = () => net.connect(port, "127.0.0.1")
  return agent
}

const fixedCredential = { getAccessToken: async () => ({ access_token: "stand-in-access-token", expires_in: 3600 }) }

describe("Push layers", () => {
  it.scoped("the outbox appends one JSON line per notification, the token shortened", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* TestClock.setTime(Date.parse("2026-01-31T09:30:00.000Z"))
      const receipt = yield* Effect.flatMap(Push, (push) =>
        push.send({ token: "registration-token-ABCDEFGH", title: "Appointment reminder", body: "Tomorrow at 10:00", data: { appointment_id: "7" } })
      ).pipe(Effect.provide(OutboxPushLive), Effect.provide(testConfig({ dataDir })))
      const lines = (yield* Effect.promise(() => fs.readFile(pushOutboxFile(dataDir), "utf8"))).split("\n")
      expect(lines.at(-1)).toBe("")
      expect(JSON.parse(lines[0]!)).toEqual({
        token: "ABCDEFGH", title: "Appointment reminder", body: "Tomorrow at 10:00", data: { appointment_id: "7" },
        message_id: receipt.messageId, created_at: "2026-01-31T09:30:00.000Z"
      })
    }))

  it.scoped("FCM: the SDK's real request reaches the stand-in; UNREGISTERED is a dead token", () =>
    Effect.gen(function*() {
      const standIn = yield* fcmStandIn
      const push = yield* makeFcmPush({ credential: fixedCredential, projectId: "demo-project", httpAgent: agentTo(standIn.port) })
      const receipt = yield* push.send({ token: "live-token-1", title: "Recordatorio de cita", body: "martes a las 10:00", data: { appointment_id: "12" } })
      expect(receipt.messageId).toBe("projects/demo-project/messages/1")
      expect(standIn.captured[0]).toEqual({
        method: "POST",
        url: "/v1/projects/demo-project/messages:send",
        authorization: "Bearer stand-in-access-token",
        body: { message: { token: "live-token-1", notification: { title: "Recordatorio de cita", body: "martes a las 10:00" }, data: { appointment_id: "12" } } }
      })
      const refused = yield* Effect.flip(push.send({ token: "dead-token", title: "t", body: "b" }))
      expect(refused).toBeInstanceOf(PushError)
      expect(refused.unregistered).toBe(true)
      expect(refused.reason).toMatch(/^messaging\/registration-token-not-registered: /)
    }))
})
