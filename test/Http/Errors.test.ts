/**
 * Error bodies exactly as the spec shows them, for both areas, including request decoding
 * failures (422, never the platform's 400), malformed JSON, unknown routes, oversized bodies and
 * unexpected failures (500 without a trace of the cause).
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import * as Errors from "../../src/Api/Errors.js"
import { PageSizeQuery } from "../../src/Api/Pagination.js"
import { withRequestMessages } from "../../src/Api/RequestMessages.js"
import { BoundedArray, BoundedString } from "../../src/Api/Schemas.js"
import { Api } from "../../src/Api/Api.js"
import { apiRoutes } from "../../src/Layers/Http/ApiRoutes.js"
import { errorHandlingFor, fieldMessages } from "../../src/Layers/Http/Errors.js"
import { bodyChecksFor } from "../../src/Layers/Http/RequestBody.js"
import { admin, request, signIn, TestApp, testConfig } from "../support/app.js"

const Thing = Schema.Struct({
  thing: Schema.Struct({
    title: Schema.String,
    kind: Schema.Literal("a", "b"),
    count: Schema.Int,
    tags: Schema.Array(Schema.String),
    note: Schema.optional(BoundedString(10)),
    items: Schema.optional(BoundedArray(Schema.String, 2))
  })
}).annotations(Errors.reportAllErrors)

/**
 * A small Api with one group per area (an ECM group declares the ECM area's 422) and an endpoint
 * that fails unexpectedly.
 */
class ProbeApi extends withRequestMessages(HttpApi.make("probe")
  .add(
    HttpApiGroup.make("ecmProbe")
      .add(
        HttpApiEndpoint.post("ecm", "/clinic/ecm/patients/:patient_id/things")
          .setPath(Schema.Struct({ patient_id: Schema.NumberFromString }))
          .setPayload(Thing)
          .addSuccess(Schema.Struct({ ok: Schema.Boolean }))
          .addError(Errors.EcmNotFound.schema)
      )
      .add(HttpApiEndpoint.get("missing", "/clinic/ecm/patients/:id").addSuccess(Schema.Struct({ ok: Schema.Boolean }))
        .addError(Errors.EcmNotFound.schema))
      .addError(Errors.EcmValidationFailed.schema)
  )
  .add(
    HttpApiGroup.make("probe")
      .add(
        HttpApiEndpoint.post("general", "/things")
          .setUrlParams(Schema.Struct(PageSizeQuery).annotations(Errors.reportAllErrors))
          .setPayload(Thing)
          .addSuccess(Schema.Struct({ ok: Schema.Boolean }))
      )
      .add(HttpApiEndpoint.get("boom", "/boom").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
      .addError(Errors.ValidationFailed.schema)
  )
  .prefix("/v1"))
{}

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, message }) => logged.push(JSON.stringify({ message, annotations: [...annotations] })))
)

const ProbeLive = HttpApiBuilder.serve().pipe(
  Layer.provide(errorHandlingFor(ProbeApi)),
  Layer.provide(bodyChecksFor(ProbeApi)),
  Layer.provide(HttpApiBuilder.api(ProbeApi).pipe(
    Layer.provide(HttpApiBuilder.group(ProbeApi, "ecmProbe", (h) =>
      h.handle("ecm", () => Effect.succeed({ ok: true }))
        .handle("missing", () => Effect.fail(Errors.ecmNotFound("Patient"))))),
    Layer.provide(HttpApiBuilder.group(ProbeApi, "probe", (h) =>
      h.handle("general", () => Effect.succeed({ ok: true }))
        .handle("boom", () =>
          Effect.die(new Error(`duplicate key: SELECT * FROM users WHERE password_hash = 'scrypt$secret' (jane@example.test)`)))))
  )),
  HttpServer.withLogAddress,
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(testConfig({ maxBodyBytes: 10_000 })),
  Layer.provide(captureLogs)
)

const validThing = { thing: { title: "T", kind: "a", count: 1, tags: [] } }

layer(ProbeLive)("decode failures and unexpected errors", (it) => {
  it.effect("general area: 422 with field -> messages, never 400", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", "/v1/things", { body: { thing: { kind: "c", count: "x", tags: "no" } } })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({
        errors: {
          title: ["can't be blank"],
          kind: ["is not included in the list"],
          count: ["is not a number"],
          tags: ["must be a list"]
        }
      })
    }))

  it.effect("general area: bad query parameters name the parameter", () =>
    Effect.gen(function*() {
      for (const [query, field, message] of [
        ["page=abc", "page", "is not a number"],
        ["page=0", "page", "must be greater than 0"],
        ["page_size=-5", "page_size", "must be greater than 0"],
        ["page_size=2.5", "page_size", "must be an integer"]
      ] as const) {
        const response = yield* request("POST", `/v1/things?${query}`, { body: validThing })
        expect(response.status, query).toBe(422)
        expect(response.body).toEqual({ errors: { [field]: [message] } })
      }
    }))

  it.effect("ECM area: 422 is a list of sentences naming the field", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", "/v1/clinic/ecm/patients/12/things", { body: { thing: { kind: "a", count: 1, tags: [] } } })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({ errors: ["Title can't be blank"] })
      const badPath = yield* request("POST", "/v1/clinic/ecm/patients/abc/things", { body: validThing })
      expect(badPath.status).toBe(422)
      expect(badPath.body).toEqual({ errors: ["Patient is not a number"] })
    }))

  it.effect("too long text and lists: a human message in each area's shape", () =>
    Effect.gen(function*() {
      const thing = { ...validThing.thing, note: "n".repeat(11), items: ["a", "b", "c"] }
      const general = yield* request("POST", "/v1/things", { body: { thing } })
      expect(general.status).toBe(422)
      expect(general.body).toEqual({
        errors: { note: ["is too long (maximum is 10 characters)"], items: ["is too long (maximum is 2 items)"] }
      })
      const ecm = yield* request("POST", "/v1/clinic/ecm/patients/12/things", { body: { thing } })
      expect(ecm.status).toBe(422)
      expect(ecm.body).toEqual({ errors: ["Note is too long (maximum is 10 characters)", "Items is too long (maximum is 2 items)"] })
    }))

  it.effect("a missing body wrapper is blank, not a crash", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", "/v1/things", { body: {} })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({ errors: { thing: ["can't be blank"] } })
    }))

  it.effect("malformed JSON gets a JSON 422 in both areas", () =>
    Effect.gen(function*() {
      const general = yield* request("POST", "/v1/things", { body: "{\"thing\":" })
      expect(general.status).toBe(422)
      expect(general.body).toEqual({ errors: { body: ["is not valid JSON"] } })
      const ecm = yield* request("POST", "/v1/clinic/ecm/patients/1/things", { body: "[1," })
      expect(ecm.status).toBe(422)
      expect(ecm.body).toEqual({ errors: ["Body is not valid JSON"] })
    }))

  it.effect("a body over MAX_BODY_BYTES gets 413 with a JSON body", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", "/v1/things", { body: { thing: { ...validThing.thing, title: "x".repeat(20_000) } } })
      expect(response.status).toBe(413)
      expect(response.body).toEqual({ errors: "Request body is too large" })
    }))

  it.effect("an ECM not-found error keeps the list shape", () =>
    Effect.gen(function*() {
      const response = yield* request("GET", "/v1/clinic/ecm/patients/5")
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ errors: ["Patient not found"] })
    }))

  it.effect("unknown routes answer JSON 404 in the area's shape", () =>
    Effect.gen(function*() {
      expect(yield* request("GET", "/v1/nope")).toMatchObject({ status: 404, body: { errors: "Route not found" } })
      expect(yield* request("GET", "/v1/clinic/ecm/nope")).toMatchObject({ status: 404, body: { errors: ["Route not found"] } })
    }))

  it.effect("an unexpected failure is a bare 500; the log has the trace id but no message text", () =>
    Effect.gen(function*() {
      logged.length = 0
      const response = yield* request("GET", "/v1/boom")
      expect(response.status).toBe(500)
      expect(response.body).toEqual({ errors: ["Internal server error"] })
      const line = logged.find((l) => l.includes("unhandled failure"))
      expect(line).toBeDefined()
      expect(line).toMatch(/"trace_id","[0-9a-f]{32}"/)
      expect(line).not.toMatch(/jane@example|password_hash|SELECT/)
    }))
})

layer(TestApp())("the real Api's error bodies", (it) => {
  it.effect("401, 403, 404 and 422 bodies of the general area", () =>
    Effect.gen(function*() {
      const adminToken = yield* signIn()
      const sql = yield* Effect.flatMap(Effect.succeed(null), () => Effect.succeed(null))
      expect(sql).toBeNull()
      expect(yield* request("GET", "/v1/admin/clinic/users/1")).toMatchObject({
        status: 401, body: { errors: "You are not authorized to perform this action." }
      })
      expect(yield* request("GET", "/v1/admin/clinic/users/999", { token: adminToken })).toMatchObject({
        status: 404, body: { errors: "User not found" }
      })
      expect(yield* request("GET", "/v1/admin/clinic/users/0", { token: adminToken })).toMatchObject({
        status: 422, body: { errors: { id: ["is invalid"] } }
      })
      expect(yield* request("POST", "/v1/users/sign_in", { body: { user: { email: admin.email } } })).toMatchObject({
        status: 422, body: { errors: { password: ["can't be blank"] } }
      })
    }))
})

describe("error helpers", () => {
  it("the area of a request is its group's; an unknown path takes the area of its nearest endpoints", () => {
    const { areaOf } = apiRoutes(Api)
    expect(areaOf("GET", "/v1/clinic/ecm/patients/1/activities")).toBe("ecm")
    expect(areaOf("GET", "/v1/admin/clinic/ecm/mifs?page=2")).toBe("ecm")
    expect(areaOf("POST", "/v1/clinic/patients/ecm/form_c_submissions")).toBe("ecm")
    expect(areaOf("POST", "/v1/clinic/webhooks/telephony/sms")).toBe("ecm")
    expect(areaOf("GET", "/v1/clinic/patients")).toBe("general")
    expect(areaOf("GET", "/v1/admin/clinic/users")).toBe("general")
    expect(areaOf("GET", "/v1/clinic/ecm/nope")).toBe("ecm")
    expect(areaOf("GET", "/v1/clinic/ecmx")).toBe("general")
    expect(areaOf("GET", "/v1/nope")).toBe("general")
  })

  it("field names drop the body wrapper and keep list positions", () => {
    expect(fieldMessages([
      { _tag: "Missing", path: ["user", "email"], message: "is missing" },
      { _tag: "Type", path: ["slots", 0, "start_time"], message: "is invalid" },
      { _tag: "Transformation", path: ["page"], message: "is not a number" }
    ])).toEqual({ email: ["can't be blank"], "slots[0].start_time": ["is invalid"], page: ["is not a number"] })
  })

  it("ECM sentences label fields the Rails way", () => {
    expect(Errors.toSentences({ assigned_to_id: ["can't be blank"], form_data: ["can't be blank"] }))
      .toEqual(["Assigned to can't be blank", "Form data can't be blank"])
  })
})
