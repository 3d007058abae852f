import SwaggerParser from "@apidevtools/swagger-parser"
import { HttpApiClient, HttpClient, HttpClientRequest, OpenApi } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../../src/Api/Api.js"
import { admin, request, signIn, TestApp } from "../support/app.js"

describe("OpenAPI document", () => {
  it.effect("passes a third-party OpenAPI validator", () =>
    Effect.promise(async () => {
      const spec = OpenApi.fromApi(Api)
      const validated = await SwaggerParser.validate(structuredClone(spec) as never)
      expect((validated as { openapi?: string }).openapi).toBe("3.1.0")
    }))

  it("declares 422 in the area's shape instead of the platform's 400", () => {
    const spec = OpenApi.fromApi(Api) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.responses["400"], `${method} ${path}`).toBeUndefined()
        expect(operation.responses["422"], `${method} ${path}`).toBeDefined()
        expect(operation.responses["500"], `${method} ${path}`).toBeDefined()
      }
    }
  })
})

layer(TestApp())("served documents", (it) => {
  it.effect("GET /v1/openapi.json serves the document derived from the Api, byte for byte, on every request", () =>
    Effect.gen(function*() {
      const http = yield* HttpClient.HttpClient
      const expected = JSON.stringify(OpenApi.fromApi(Api))
      for (let i = 0; i < 2; i++) {
        const response = yield* http.get("/v1/openapi.json")
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toBe("application/json")
        expect(yield* response.text).toBe(expected)
      }
    }).pipe(Effect.orDie))

  it.effect("GET /docs serves the interactive page without a CDN", () =>
    Effect.gen(function*() {
      const response = yield* request("GET", "/docs")
      expect(response.status).toBe(200)
      expect(String(response.headers["content-type"])).toContain("text/html")
      const html = String(response.body)
      expect(html.includes("api-reference")).toBe(true)
      // The page's script is inlined: a laptop with no internet still gets working docs.
      expect(/<script[^>]*\ssrc=/.test(html)).toBe(false)
    }))

  it.effect("GET /health checks the database", () =>
    Effect.gen(function*() {
      expect(yield* request("GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", database: "ok" } })
    }))

  it.effect("the client derived from the Api works against the real server", () =>
    Effect.gen(function*() {
      const api = yield* HttpApiClient.make(Api)
      const signedIn = yield* api.users.signIn({ payload: { user: { email: admin.email, password: admin.password } } })
      expect(signedIn.user.email).toBe(admin.email)
      expect(signedIn.user.created_at).toBeInstanceOf(Date)

      const authed = yield* HttpApiClient.make(Api, {
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-user-token", signedIn.token))
      })
      const shown = yield* authed.adminUsers.show({ path: { id: signedIn.user.id } })
      expect(shown.user.id).toBe(signedIn.user.id)
      expect(shown.user.last_login).toBeInstanceOf(Date)

      const missing = yield* Effect.flip(authed.adminUsers.show({ path: { id: 4242 as typeof signedIn.user.id } }))
      expect(missing).toMatchObject({ _tag: "NotFound", errors: "User not found" })

      const refused = yield* Effect.flip(api.users.signIn({ payload: { user: { email: admin.email, password: "wrong-password" } } }))
      expect(refused).toMatchObject({ _tag: "Unauthorized", errors: "Invalid email or password" })

      yield* authed.users.signOut({ urlParams: {} })
      const afterSignOut = yield* Effect.flip(authed.adminUsers.show({ path: { id: signedIn.user.id } }))
      expect(afterSignOut).toMatchObject({ _tag: "Unauthorized" })
      expect(yield* signIn()).toBeTypeOf("string")
    }))
})
