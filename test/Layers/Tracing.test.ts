/**
 * One request's spans through an in-memory exporter, and a scan of every span and log line for
 * the personal data and secrets that went through the request.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, HashMap, Layer, Logger, LogLevel } from "effect"
import { tracingWith } from "../../src/Layers/Tracing.js"
import { hashPassword } from "../../src/Services/Accounts/Passwords.js"
import { request, signIn, TestApp } from "../support/app.js"

const exporter = new InMemorySpanExporter()
const logLines: Array<string> = []
const captureLogs = Logger.make(({ annotations, cause, message }) => {
  logLines.push(JSON.stringify({ message, annotations: HashMap.toEntries(annotations), cause: String(cause) }))
})

const Observability = Layer.mergeAll(
  tracingWith("test", new SimpleSpanProcessor(exporter)),
  Logger.replace(Logger.defaultLogger, captureLogs),
  Logger.minimumLogLevel(LogLevel.All)
)

const person = {
  email: "zephyrine.quillfeather@example.test",
  password: "correct-horse-battery",
  firstName: "Zephyrine",
  lastName: "Quillfeather",
  phone: "+14155550123"
}

layer(TestApp({}, Observability))("tracing", (it) => {
  it.effect("spans a request with its route and status, and its SQL statements, with no personal data", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const hash = yield* hashPassword(person.password)
      const [row] = yield* sql<{ id: number }>`INSERT INTO users (email, password_hash, first_name, last_name, phone, role, confirmed)
        VALUES (${person.email}, ${hash}, ${person.firstName}, ${person.lastName}, ${person.phone}, 'admin', true) RETURNING id`
      exporter.reset()
      logLines.length = 0

      const token = yield* signIn(person.email, person.password)
      const shown = yield* request("GET", `/v1/admin/clinic/users/${row!.id}?search=${person.lastName}`, {
        token,
        headers: { "user-agent": person.email }
      })
      expect(shown.status).toBe(200)
      expect(JSON.stringify(shown.body)).toContain(person.phone)
      yield* request("POST", "/v1/users/sign_in", { body: { user: { email: person.email, password: "wrong-password" } } })

      const spans = exporter.getFinishedSpans()
      const server = spans.find((s) => s.name === "http.server GET" && s.attributes["http.route"] === "/v1/admin/clinic/users/:id")
      expect(server).toBeDefined()
      expect(server!.attributes["http.response.status_code"]).toBe(200)
      expect(server!.attributes["http.request.method"]).toBe("GET")
      const statements = spans.filter((s) => s.name === "sql.execute" && s.spanContext().traceId === server!.spanContext().traceId)
      expect(statements.length).toBeGreaterThanOrEqual(2)
      expect(statements.every((s) => typeof s.attributes["db.query.text"] === "string")).toBe(true)

      const signInSpans = spans.filter((s) => s.attributes["http.route"] === "/v1/users/sign_in")
      expect(signInSpans.map((s) => s.attributes["http.response.status_code"]).sort()).toEqual([200, 401])

      const secrets = [person.email, person.firstName, person.lastName, person.phone, person.password, token, "zephyrine"]
      const telemetry = [
        ...spans.map((s) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events })),
        ...logLines
      ]
      expect(logLines.some((l) => l.includes("\"request\""))).toBe(true)
      for (const secret of secrets) {
        const hits = telemetry.filter((t) => t.toLowerCase().includes(secret.toLowerCase()))
        expect(hits.map((h) => h.slice(0, 600)), `telemetry holds ${secret}`).toEqual([])
      }
    }))
})
