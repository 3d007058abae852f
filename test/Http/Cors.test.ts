/**
 * CORS: browsers on the origins in CORS_ORIGINS may call the API with X-User-Token;
 * any other origin, or any origin when CORS_ORIGINS is unset, gets no Access-Control-Allow-Origin.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { parseCorsOrigins } from "../../src/Layers/Config.js"
import { signIn, TestApp } from "../support/app.js"

const app = "https://app.example.org"
const devApp = "http://localhost:5173"

const send = (method: string, url: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.make(method as "GET")(url).pipe(HttpClientRequest.setHeaders(headers)))
    return { status: response.status, headers: response.headers }
  }).pipe(Effect.locally(HttpClient.currentTracerDisabledWhen, () => true), Effect.orDie)

const preflight = (origin: string, method = "PUT", url = "/v1/users/1") =>
  send("OPTIONS", url, {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "content-type,x-user-token"
  })

layer(TestApp({ corsOrigins: [app, devApp] }))("CORS with CORS_ORIGINS set", (it) => {
  it.effect("a preflight from an allowed origin is answered with the methods, headers and max-age", () =>
    Effect.gen(function*() {
      for (const origin of [app, devApp]) {
        const response = yield* preflight(origin)
        expect(response.status).toBe(204)
        expect(response.headers["access-control-allow-origin"]).toBe(origin)
        expect(response.headers["access-control-allow-methods"]!.split(/,\s*/)).toEqual(
          expect.arrayContaining(["GET", "POST", "PUT", "PATCH", "DELETE"])
        )
        const allowedHeaders = response.headers["access-control-allow-headers"]!.toLowerCase().split(/,\s*/)
        expect(allowedHeaders).toEqual(expect.arrayContaining(["content-type", "x-user-token"]))
        expect(response.headers["access-control-max-age"]).toBe("600")
        // The token travels in a header, not a cookie: no credentialed CORS.
        expect(response.headers["access-control-allow-credentials"]).toBeUndefined()
      }
    }))

  it.effect("a preflight allows the trace-context headers a client sends (W3C and B3)", () =>
    Effect.gen(function*() {
      const response = yield* send("OPTIONS", "/v1/users/sign_in", {
        origin: app,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,traceparent,tracestate,b3"
      })
      expect(response.status).toBe(204)
      expect(response.headers["access-control-allow-origin"]).toBe(app)
      const allowedHeaders = response.headers["access-control-allow-headers"]!.toLowerCase().split(/,\s*/)
      expect(allowedHeaders).toEqual(expect.arrayContaining(["content-type", "traceparent", "tracestate", "b3"]))
    }))

  it.effect("a preflight from any other origin gets no Access-Control-Allow-Origin", () =>
    Effect.gen(function*() {
      for (const origin of ["https://evil.example.com", "https://app.example.org.evil.com", "http://app.example.org", "null"]) {
        const response = yield* preflight(origin)
        expect(response.headers["access-control-allow-origin"], origin).toBeUndefined()
      }
    }))

  it.effect("actual requests from an allowed origin carry the CORS headers, errors included", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const ok = yield* send("GET", "/v1/users", { origin: app, "x-user-token": token })
      expect(ok.status).toBe(200)
      expect(ok.headers["access-control-allow-origin"]).toBe(app)
      expect(ok.headers["vary"]).toMatch(/origin/i)
      expect(ok.headers["access-control-expose-headers"]).toMatch(/retry-after/i)

      // A frontend must be able to read a 401 to send the user to the sign-in page.
      const refused = yield* send("GET", "/v1/users", { origin: app, "x-user-token": "not-a-token" })
      expect(refused.status).toBe(401)
      expect(refused.headers["access-control-allow-origin"]).toBe(app)

      const other = yield* send("GET", "/v1/users", { origin: "https://evil.example.com", "x-user-token": token })
      expect(other.headers["access-control-allow-origin"]).toBeUndefined()
    }))
})

layer(TestApp())("CORS without CORS_ORIGINS", (it) => {
  it.effect("no origin is allowed", () =>
    Effect.gen(function*() {
      const response = yield* preflight(app)
      expect(response.headers["access-control-allow-origin"]).toBeUndefined()
      const token = yield* signIn()
      const actual = yield* send("GET", "/v1/users", { origin: app, "x-user-token": token })
      expect(actual.status).toBe(200)
      expect(actual.headers["access-control-allow-origin"]).toBeUndefined()
    }))
})

describe("CORS_ORIGINS", () => {
  it("takes exact origins and refuses a wildcard or anything with a path", () => {
    expect(parseCorsOrigins(" https://app.example.org, http://localhost:5173/ ")).toEqual(
      Either.right(["https://app.example.org", "http://localhost:5173"])
    )
    expect(parseCorsOrigins("")).toEqual(Either.right([]))
    for (const bad of ["*", "https://app.example.org,*", "app.example.org", "https://app.example.org/path", "ftp://x.example.org", "https://user@app.example.org"]) {
      expect(Either.isLeft(parseCorsOrigins(bad)), bad).toBe(true)
    }
  })
})
