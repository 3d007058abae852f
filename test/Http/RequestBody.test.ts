/**
 * Request body limits: a few KB for every endpoint unless it declares more (`BodyLimit`,
 * `carriesFiles`); over the limit, 413 with a JSON body, whether the size was declared up front
 * or the body arrives chunked — the client gets the answer, not a reset connection.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { Api } from "../../src/Api/Api.js"
import { generateEdiBodyBytes } from "../../src/Api/Billing/Claims.js"
import { BodyLimit, carriesFiles, smallBodyBytes } from "../../src/Api/BodyLimit.js"
import { bulkBodyBytes } from "../../src/Api/Ecm/LeadCareManagers.js"
import { BoundedString } from "../../src/Api/Schemas.js"
import { formCBodyBytes } from "../../src/Domain/Ecm/FormC.js"
import { ErrorHandlingLive } from "../../src/Layers/Http/Errors.js"
import { bodyChecksFor, bodyRoutesOf, jsonDepth } from "../../src/Layers/Http/RequestBody.js"
import { request, TestApp, testConfig } from "../support/app.js"
import { webhookBodyBytes } from "../../src/Api/Ecm/Communications.js"
import { noteBodyBytes, signatureBodyBytes } from "../../src/Api/SessionNotes/SessionNotes.js"

/** Just the body limit of a request to `api` (`bodyRoutesOf` also names the endpoint). */
const limitsOf = (api: Parameters<typeof bodyRoutesOf>[0]) => {
  const routeOf = bodyRoutesOf(api)
  return (method: string, url: string, maxBodyBytes: number) => routeOf(method, url, maxBodyBytes).limit
}

const Text = Schema.Struct({ text: BoundedString(10_000_000) })
const Ok = Schema.Struct({ length: Schema.Int })

class ProbeApi extends HttpApi.make("probe")
  .add(
    HttpApiGroup.make("probe")
      .add(HttpApiEndpoint.post("small", "/things").setPayload(Text).addSuccess(Ok))
      .add(HttpApiEndpoint.post("byId", "/things/:id").setPayload(Text).addSuccess(Ok))
      .add(HttpApiEndpoint.post("files", "/things/import").setPayload(Text).addSuccess(Ok).annotateContext(carriesFiles))
      .add(HttpApiEndpoint.post("notes", "/notes").setPayload(Text).addSuccess(Ok).annotate(BodyLimit, 32 * 1024))
  )
  .prefix("/v1")
{}

const maxBodyBytes = 200_000

const ProbeLive = HttpApiBuilder.serve().pipe(
  Layer.provide(ErrorHandlingLive),
  Layer.provide(bodyChecksFor(ProbeApi)),
  Layer.provide(HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(HttpApiBuilder.group(ProbeApi, "probe", (h) => {
    const echo = ({ payload }: { readonly payload: { readonly text: string } }) => Effect.succeed({ length: payload.text.length })
    return h.handle("small", echo).handle("byId", echo).handle("files", echo).handle("notes", echo)
  })))),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(testConfig({ maxBodyBytes }))
)

/** `{"text":"xxx…"}` of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => JSON.stringify({ text: "x".repeat(bytes - 11) })

interface Answer {
  readonly status?: number
  readonly body?: unknown
  readonly error?: string
}

/**
 * Sends `bytes` of JSON chunked (no Content-Length), 16 KiB at a time, and stops sending as soon
 * as the server answers, as an HTTP client does.
 */
const sendChunked = (port: number, path: string, bytes: number) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve) => {
      let answered = false
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/json" } })
      req.on("response", (res) => {
        answered = true
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode!, body: text === "" ? undefined : JSON.parse(text) }))
        res.on("error", (e) => resolve({ error: String(e) }))
      })
      req.on("error", (e: NodeJS.ErrnoException) => {
        if (!answered) resolve({ error: e.code ?? e.message })
      })
      const body = Buffer.from(jsonOfSize(bytes))
      let offset = 0
      const writeMore = () => {
        while (!answered && offset < body.length) {
          const chunk = body.subarray(offset, offset + 16 * 1024)
          offset += chunk.length
          if (!req.write(chunk)) return void req.once("drain", writeMore)
        }
        req.end()
      }
      writeMore()
    })
  )

/**
 * Sends `bytes` of JSON with a Content-Length, the whole body before reading (as fetch does); the
 * answer's status and `Connection` header, or the transport error.
 */
const sendDeclared = (port: number, path: string, bytes: number) =>
  Effect.promise(() =>
    new Promise<{ readonly status?: number; readonly connection?: string | undefined; readonly error?: string }>((resolve) => {
      const body = Buffer.from(jsonOfSize(bytes))
      const req = http.request({
        host: "127.0.0.1", port, path, method: "POST",
        headers: { "content-type": "application/json", "content-length": body.length, connection: "keep-alive" }
      })
      req.on("response", (res) => {
        res.resume()
        res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers["connection"] }))
      })
      req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
      req.end(body)
    })
  )

const serverPort = Effect.map(HttpServer.HttpServer, (server) => {
  if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP server")
  return server.address.port
})

/** The general area's 413 (the ECM area's is a list: `ecmTooLarge`). */
const tooLarge = { status: 413, body: { errors: "Request body is too large" } }
const ecmTooLarge = { status: 413, body: { errors: ["Request body is too large"] } }

/** POSTs these exact bytes as JSON (with a Content-Length); the status and parsed body. */
const sendBytes = (port: number, path: string, body: Buffer) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve) => {
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/json" } })
      req.on("response", (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode!, body: text === "" ? undefined : JSON.parse(text) }))
      })
      req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
      req.end(body)
    })
  )

layer(ProbeLive)("body limits per endpoint", (it) => {
  it.effect("a small endpoint takes a few KB; a declared Content-Length over that is 413", () =>
    Effect.gen(function*() {
      expect(yield* request("POST", "/v1/things", { body: jsonOfSize(smallBodyBytes) })).toMatchObject({ status: 200 })
      expect(yield* request("POST", "/v1/things", { body: jsonOfSize(smallBodyBytes + 1) })).toMatchObject(tooLarge)
      expect(yield* request("POST", "/v1/things/7", { body: jsonOfSize(smallBodyBytes + 1) })).toMatchObject(tooLarge)
    }))

  it.effect("a chunked body over the limit gets 413 with its JSON body, and the server keeps serving", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      expect(yield* sendChunked(port, "/v1/things", 2_000_000)).toEqual(tooLarge)
      expect(yield* sendChunked(port, "/v1/things", 1_000)).toEqual({ status: 200, body: { length: 989 } })
      expect(yield* sendChunked(port, "/v1/things/import", 5_000_000)).toEqual(tooLarge)
    }))

  it.effect("a body up to about twice its limit is read to its end before the 413: the connection stays open; a larger one closes it", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      // Read to the end: the client, still writing when the limit passed, gets the answer.
      expect(yield* sendDeclared(port, "/v1/things/import", maxBodyBytes + 150_000)).toEqual({ status: 413, connection: "keep-alive" })
      expect(yield* sendDeclared(port, "/v1/things", smallBodyBytes * 2)).toEqual({ status: 413, connection: "keep-alive" })
      expect(yield* sendChunked(port, "/v1/things/import", maxBodyBytes + 150_000)).toEqual(tooLarge)
      // Declared far over: answered at once, and the connection closed after the answer.
      expect(yield* request("POST", "/v1/things", { body: jsonOfSize(smallBodyBytes * 2 + 1) })).toMatchObject(tooLarge)
      const far = yield* sendDeclared(port, "/v1/things", smallBodyBytes * 3)
      if (far.error === undefined) expect(far).toEqual({ status: 413, connection: "close" })
      else expect(far.error).toBe("ECONNRESET")
      // And the server keeps serving.
      expect(yield* request("POST", "/v1/things", { body: jsonOfSize(100) })).toMatchObject({ status: 200 })
    }))

  it.effect("an endpoint that carries files takes bodies up to MAX_BODY_BYTES", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      expect(yield* request("POST", "/v1/things/import", { body: jsonOfSize(maxBodyBytes) })).toMatchObject({ status: 200 })
      expect(yield* sendChunked(port, "/v1/things/import", maxBodyBytes)).toEqual({ status: 200, body: { length: maxBodyBytes - 11 } })
      expect(yield* request("POST", "/v1/things/import", { body: jsonOfSize(maxBodyBytes + 1) })).toMatchObject(tooLarge)
    }))

  it.effect("an endpoint may name its own limit", () =>
    Effect.gen(function*() {
      expect(yield* request("POST", "/v1/notes", { body: jsonOfSize(32 * 1024) })).toMatchObject({ status: 200 })
      expect(yield* request("POST", "/v1/notes", { body: jsonOfSize(32 * 1024 + 1) })).toMatchObject(tooLarge)
    }))
})

describe("body limit lookup", () => {
  it("a literal route wins over a parameter, as in the router; methods and query strings are respected", () => {
    const limitOf = limitsOf(ProbeApi)
    expect(limitOf("POST", "/v1/things/import?x=1", maxBodyBytes)).toBe(maxBodyBytes)
    expect(limitOf("POST", "/v1/things/import/", maxBodyBytes)).toBe(maxBodyBytes)
    expect(limitOf("POST", "/v1/things/8", maxBodyBytes)).toBe(smallBodyBytes)
    expect(limitOf("PUT", "/v1/things/import", maxBodyBytes)).toBe(smallBodyBytes)
    expect(limitOf("POST", "/v1/unknown", maxBodyBytes)).toBe(smallBodyBytes)
    expect(limitOf("POST", "/v1/things", 1_000)).toBe(1_000)
  })

  it("only endpoints that carry files (the MIF import) take large bodies; every other body is small", () => {
    const limitOf = limitsOf(Api)
    const operations: Array<[string, string]> = []
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => void operations.push([endpoint.method, endpoint.path.replace(/:\w+/g, "1")])
    })
    expect(operations.length).toBeGreaterThan(20)
    const carryFiles = new Set([
      "POST /v1/admin/clinic/ecm/mifs",
      // Clinic patients: document uploads.
      "POST /v1/clinic/patients/1/documents",
      // Claims: claim document uploads and replacements.
      "POST /v1/admin/clinic/claims/1/documents",
      "PUT /v1/admin/clinic/claims/1/documents/1",
      // Content: the library bundle and content files (50 MB).
      "POST /v1/admin/content/import",
      "POST /v1/admin/content/files"
    ])
    // Endpoints with a limit of their own: a Form C document, 1,000 bulk assignments …
    const ownLimits = new Map<string, number>([
      ["POST /v1/clinic/patients/ecm/form_c_submissions", formCBodyBytes],
      ["POST /v1/admin/clinic/ecm/lead_care_managers/bulk_assign", bulkBodyBytes],
      // The telephony webhooks (a 1,600-character SMS percent-encoded).
      ...["sms", "voice", "sms_status", "voice_status", "outbound_call", "recording"].map((hook): [string, number] =>
        [`POST /v1/clinic/webhooks/telephony/${hook}`, webhookBodyBytes]),
      // A help request's 5000-character message; a treatment plan's goals and interventions.
      ["POST /v1/clinic/patients/help_requests", 64 * 1024],
      ["POST /v1/clinic/patients/treatment_plans", 256 * 1024],
      ["PUT /v1/clinic/patients/treatment_plans/1", 256 * 1024],
      // Up to 2,000 claim ids in one 837P batch.
      ["POST /v1/admin/clinic/claims/generate_edi", generateEdiBodyBytes],
      // A session note's five sections; signature images (PNG data URIs) of addenda and sign-offs.
      ["POST /v1/clinic/patients/session_notes", noteBodyBytes],
      ["PUT /v1/clinic/patients/session_notes/1", noteBodyBytes],
      ["POST /v1/admin/clinic/session_notes/addendums", signatureBodyBytes],
      ["PUT /v1/admin/clinic/session_notes/addendums/1", signatureBodyBytes],
      ["POST /v1/admin/clinic/session_notes/sign_offs", signatureBodyBytes],
      // Questionnaire answers.
      ...["POST /v1/questionnaire_responses", "PUT /v1/questionnaire_responses/1", "POST /v1/questionnaire_invites/respond",
        "POST /v1/marketing_questionnaires"].map((name): [string, number] => [name, 512 * 1024])
    ])
    for (const [method, path] of operations) {
      const name = `${method} ${path}`
      expect(limitOf(method, path, 80 * 1024 * 1024), name).toBe(carryFiles.has(name) ? 80 * 1024 * 1024 : ownLimits.get(name) ?? smallBodyBytes)
    }
  })
})

layer(TestApp({ maxBodyBytes: 80 * 1024 * 1024 }))("the real Api's bodies", (it) => {
  it.effect("a huge password is refused with 413 before anything reads it; no account is created", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      const user = { email: "huge@example.test", first_name: "Huge", last_name: "Password", password: "p".repeat(5_000_000) }
      expect(yield* request("POST", "/v1/users", { body: { user } })).toMatchObject(tooLarge)
      expect(yield* sendChunked(port, "/v1/users/sign_in", 5_000_000)).toEqual(tooLarge)
      const check = yield* request("POST", "/v1/users/email_has_account", { body: { email: user.email } })
      expect(check).toMatchObject({ status: 200, body: { has_account: false } })
    }))

  it.effect("413 comes in each area's shape", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      expect(yield* sendChunked(port, "/v1/admin/clinic/providers/invites", 100_000)).toEqual(tooLarge)
      expect(yield* sendChunked(port, "/v1/clinic/ecm/patients/1/activities", 100_000)).toEqual(ecmTooLarge)
    }))

  it.effect("invalid UTF-8 in a JSON body is refused with 422, in each area's shape; nothing is stored", () =>
    Effect.gen(function*() {
      const port = yield* serverPort
      // "Ren\xE9": Latin-1, not UTF-8 (decoding would store U+FFFD in its place).
      const latin1 = (json: string) => Buffer.concat([Buffer.from(json.slice(0, json.indexOf("@NAME@"))), Buffer.from([0x52, 0x65, 0x6e, 0xe9]),
        Buffer.from(json.slice(json.indexOf("@NAME@") + 6))])
      const user = JSON.stringify({ user: { email: "latin1@example.test", first_name: "@NAME@", last_name: "Doe", password: "latin-1-password" } })
      expect(yield* sendBytes(port, "/v1/users", latin1(user))).toEqual({ status: 422, body: { errors: { body: ["is not valid UTF-8"] } } })
      const check = yield* request("POST", "/v1/users/email_has_account", { body: { email: "latin1@example.test" } })
      expect(check).toMatchObject({ status: 200, body: { has_account: false } })
      expect(yield* sendBytes(port, "/v1/clinic/ecm/patients/1/activities", latin1(JSON.stringify({ activity: { title: "@NAME@" } }))))
        .toEqual({ status: 422, body: { errors: ["Body is not valid UTF-8"] } })
    }))
})

describe("JSON depth", () => {
  /** Character by character: what jsonDepth must agree with. */
  const depthByCharacter = (text: string): number => {
    let depth = 0
    let deepest = 0
    let inString = false
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (inString) {
        if (c === "\\") i++
        else if (c === "\"") inString = false
      } else if (c === "\"") inString = true
      else if (c === "[" || c === "{") deepest = Math.max(deepest, ++depth)
      else if (c === "]" || c === "}") depth--
    }
    return deepest
  }

  it("counts nesting outside strings only, escaped quotes and backslash runs included", () => {
    expect(jsonDepth(`{"a":[{"b":"[[[{{{"}]}`)).toBe(3)
    expect(jsonDepth(`{"a\\"[[":"\\\\","b":[[1]]}`)).toBe(3)
    expect(jsonDepth(`["\\\\\\"[" , [[ ]]]`)).toBe(3)
    expect(jsonDepth(`{"unterminated [[[`)).toBe(1)
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string({ unit: fc.constantFrom("[", "]", "{", "}", "\"", "\\", "a", ",") })), (text) => {
        expect(jsonDepth(text)).toBe(depthByCharacter(text))
      }),
      { numRuns: 2000 }
    )
  })
})
