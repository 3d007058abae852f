/**
 * One request's spans through an in-memory exporter, and a scan of every span and log line for
 * the personal data and secrets that went through the request.
 */
import { expect, layer } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, HashMap, Layer, Logger, LogLevel } from "effect"
import { tracingWith } from "../../src/Layers/Tracing.js"
import { hashPassword } from "../../src/Services/Accounts/Passwords.js"
import { request, signIn, TestApp } from "../support/app.js"
import { insertUser } from "../support/fixtures.js"

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
      const userId = yield* insertUser({
        email: person.email,
        password_hash: yield* hashPassword(person.password),
        first_name: person.firstName,
        last_name: person.lastName,
        phone: person.phone,
        role: "admin"
      })
      exporter.reset()
      logLines.length = 0

      const token = yield* signIn(person.email, person.password)
      const userAgent = "care-frontend/2.3 (+https://app.example.org)"
      const shown = yield* request("GET", `/v1/admin/clinic/users/${userId}?search=${person.lastName}`, {
        token,
        headers: { "user-agent": userAgent, host: "api.example.org:8443", referer: `https://app.example.org/?q=${person.email}` }
      })
      expect(shown.status).toBe(200)
      expect(JSON.stringify(shown.body)).toContain(person.phone)
      yield* request("POST", "/v1/users/sign_in", { body: { user: { email: person.email, password: "wrong-password" } } })

      const spans = exporter.getFinishedSpans()
      // OpenTelemetry HTTP semantic conventions: `{method} {route}`, the route as a template.
      const server = spans.find((s) => s.name === "GET /v1/admin/clinic/users/{id}")
      expect(server, spans.map((s) => s.name).join(", ")).toBeDefined()
      expect(server!.kind).toBe(SpanKind.SERVER)
      expect(server!.attributes).toMatchObject({
        "http.request.method": "GET",
        "http.route": "/v1/admin/clinic/users/{id}",
        "http.response.status_code": 200,
        "url.scheme": "http",
        "server.address": "api.example.org",
        "server.port": 8443,
        "user_agent.original": userAgent
      })
      // No URL, query string or headers beyond the user agent.
      expect(Object.keys(server!.attributes).filter((k) => /^(?:url\.(?:full|query|path)|http\.request\.header)/.test(k))).toEqual([])
      const unmatched = yield* request("GET", "/v1/no/such/route")
      expect(unmatched.status).toBe(404)
      const unmatchedSpan = exporter.getFinishedSpans().find((s) => s.attributes["http.response.status_code"] === 404)
      expect(unmatchedSpan?.name).toBe("GET")
      const statements = spans.filter((s) => s.name === "sql.execute" && s.spanContext().traceId === server!.spanContext().traceId)
      expect(statements.length).toBeGreaterThanOrEqual(2)
      expect(statements.every((s) => typeof s.attributes["db.query.text"] === "string")).toBe(true)

      const signInSpans = spans.filter((s) => s.name === "POST /v1/users/sign_in")
      expect(signInSpans.map((s) => s.attributes["http.response.status_code"]).sort()).toEqual([200, 401])

      // The access-log line uses the span's attribute names.
      const accessLog = logLines.map((l) => JSON.parse(l) as { message: unknown; annotations: Array<[string, unknown]> })
        .filter((l) => JSON.stringify(l.message) === JSON.stringify(["request"]) || l.message === "request")
        .map((l) => Object.fromEntries(l.annotations))
        .find((a) => a["http.route"] === "/v1/admin/clinic/users/{id}")
      expect(accessLog).toMatchObject({
        "http.request.method": "GET",
        "http.response.status_code": 200,
        "url.scheme": "http",
        "server.address": "api.example.org",
        "user_agent.original": userAgent
      })

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

  it.effect("a body refused before routing (413, wrong media type) is spanned and logged with its endpoint's route", () =>
    Effect.gen(function*() {
      exporter.reset()
      logLines.length = 0
      const big = JSON.stringify({ user: { first_name: "x".repeat(20_000) } })
      expect((yield* request("PUT", "/v1/users/123", { body: big })).status).toBe(413)
      expect((yield* request("POST", "/v1/users/sign_in", { body: "<user/>", headers: { "content-type": "application/xml" } })).status)
        .toBe(422)
      // No endpoint at that path: the route stays unknown.
      expect((yield* request("POST", "/v1/no/such/route", { body: big })).status).toBe(413)

      const served = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)
        .map((s) => [s.name, s.attributes["http.route"], s.attributes["http.response.status_code"]])
      expect(served).toEqual([
        ["PUT /v1/users/{id}", "/v1/users/{id}", 413],
        ["POST /v1/users/sign_in", "/v1/users/sign_in", 422],
        ["POST", undefined, 413]
      ])
      const logged = logLines.map((l) => JSON.parse(l) as { message: unknown; annotations: Array<[string, unknown]> })
        .filter((l) => JSON.stringify(l.message) === JSON.stringify(["request"]) || l.message === "request")
        .map((l) => Object.fromEntries(l.annotations))
        .map((a) => [a["http.request.method"], a["http.route"], a["http.response.status_code"]])
      expect(logged).toEqual([
        ["PUT", "/v1/users/{id}", 413],
        ["POST", "/v1/users/sign_in", 422],
        ["POST", "unmatched", 413]
      ])
    }))

  it.effect("a caller's trace context is linked from the server span, never adopted as its parent", () =>
    Effect.gen(function*() {
      exporter.reset()
      const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
      const callerSpan = "00f067aa0ba902b7"
      const sent = [
        { traceparent: `00-${callerTrace}-${callerSpan}-01` },
        { b3: `${callerTrace}-${callerSpan}-1` },
        // Not W3C: a version we do not know, and a trace id of zeros' length gone wrong.
        { traceparent: `ff-${callerTrace}-${callerSpan}-01` },
        { traceparent: `00-${callerTrace.slice(1)}-${callerSpan}-01` },
        {}
      ]
      for (const headers of sent) expect((yield* request("GET", "/v1/no/such/route", { headers })).status).toBe(404)

      const served = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)
      expect(served).toHaveLength(sent.length)
      // Our trace ids are our own, whatever the caller sent; no span of ours lands in its trace.
      expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === callerTrace)).toEqual([])
      expect(served.every((s) => s.parentSpanContext === undefined)).toBe(true)
      expect(served.map((s) => s.links.map((l) => [l.context.traceId, l.context.spanId]))).toEqual([
        [[callerTrace, callerSpan]],
        [[callerTrace, callerSpan]],
        [],
        [],
        []
      ])
    }))
})
