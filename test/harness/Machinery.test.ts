/**
 * The harness's own machinery on a synthetic document and a fake server: it must find what it
 * claims to find (a BOLA leak on a patient-scoped path, between families or between providers, a
 * planted value in telemetry, a body that drifts from the document, a stack trace), so a green
 * harness run means something.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkExchange, errorShapeProblem, leaks, type Received } from "./checks.js"
import { securityHeaders, syntheticApi } from "./synthetic.js"
import { type OpenApiDocument, operationsOf } from "./document.js"
import { patientParameter, patients, runBola, withoutPatients } from "./bola.js"
import { generateCase, planCase } from "./campaign.js"
import { makeContract } from "./contract.js"
import { makeHarness } from "./harness.js"
import { Secrets } from "./secrets.js"
import { describeHits, Telemetry } from "./telemetry.js"
import { emptyInbox } from "./inbox.js"
import { describeLocation, requestFields, runOversize } from "./oversize.js"
import { runRace } from "./race.js"
import { runStaffBola } from "./staff.js"

const received = (status: number, json: unknown, headers: Record<string, string> = securityHeaders): Received =>
  ({ status, headers: { ...headers, "content-type": "application/json" }, text: JSON.stringify(json), json })

describe("harness machinery", () => {
  it("reads operations, admin-only rules, areas and patient scoping from a document", () => {
    const operations = operationsOf(syntheticApi.document as OpenApiDocument)
    expect(operations.map((o) => [o.id, o.adminOnly, o.area, o.tokenHeader])).toEqual([
      ["notes.list", false, "general", "X-User-Token"],
      ["ecm.activities", false, "ecm", "X-User-Token"],
      ["admin.report", true, "general", "X-User-Token"],
      ["invites.create", false, "general", "X-User-Token"],
      ["users.delete", true, "general", "X-User-Token"]
    ])
    expect(operations.map((o) => patientParameter(o))).toEqual([
      { in: "path", name: "patient_id" }, { in: "path", name: "patient_id" }, undefined, undefined, undefined
    ])
    expect(operations.map((o) => o.singleUse)).toEqual([undefined, undefined, undefined, "an email is invited once", undefined])
  })

  it("finds patient scoping a level down in a body, and records of a patient named by their own id", () => {
    const document = {
      openapi: "3.1.0",
      paths: {},
      components: {
        schemas: {
          Create: { type: "object", properties: { help_request: { $ref: "#/components/schemas/Inner" } } },
          Inner: { type: "object", properties: { patient_id: { type: "integer" }, subject: { type: "string" } } }
        }
      }
    } as unknown as OpenApiDocument
    const operation = (path: string, body?: Record<string, unknown>) =>
      ({ id: path, method: "POST", path, parameters: [], body, bodyRequired: body !== undefined, responses: new Map(), responseHeaders: new Map(), tokenHeader: "X-User-Token", adminOnly: false, staffOnly: false, area: "general", singleUse: undefined, bodyEncoding: "json", signature: undefined }) as const
    expect(patientParameter(operation("/v1/clinic/patients/help_requests", { $ref: "#/components/schemas/Create" }), document))
      .toEqual({ in: "body", name: "patient_id", within: "help_request" })
    expect(patientParameter(operation("/v1/clinic/patients/treatment_plans/{id}"), document))
      .toEqual({ in: "path", name: "id", record: "treatment_plan" })
    expect(patientParameter(operation("/v1/clinic/patients/{patient_id}/spot/{id}"), document))
      .toEqual({ in: "path", name: "patient_id", companions: [{ name: "id", record: "spot" }] })
    expect(patientParameter(operation("/v1/clinic/patients/filter_patients", { $ref: "#/components/schemas/Inner" }), document))
      .toEqual({ in: "body", name: "patient_id" })
  })

  it("a public operation under /v1/admin (provider invite validate and accept) is not admin-only", () => {
    const [secured, open] = operationsOf({
      openapi: "3.1.0",
      components: { securitySchemes: { token: { type: "apiKey", in: "header", name: "X-User-Token" } } },
      paths: {
        "/v1/admin/clinic/providers/invites": { post: { operationId: "invites.create", security: [{ token: [] }], responses: {} } },
        "/v1/admin/clinic/providers/invites/accept": { post: { operationId: "invites.accept", responses: {} } }
      }
    })
    expect([secured?.adminOnly, secured?.tokenHeader]).toEqual([true, "X-User-Token"])
    expect([open?.adminOnly, open?.tokenHeader]).toEqual([false, undefined])
  })

  it.effect("generates a valid and a hostile case for every operation", () =>
    Effect.gen(function*() {
      const harness = yield* makeHarness(syntheticApi.server({ leaky: false }).send, new Telemetry())
      const principal = <R extends "parent" | "staff" | "admin">(role: R, id: number) => ({ role, id, email: `${role}@synthetic.test`, phone: "+14155550100", token: "t" })
      const world = { principals: { parent: principal("parent", 1), staff: principal("staff", 2), admin: principal("admin", 3) }, userIds: [1, 2, 3], emails: [] }
      const cases = Array.from({ length: 2 * harness.operations.length }, (_, i) => generateCase(harness, world, 42, i))
      expect(cases.map((c) => c.operation.id)).toEqual([...harness.operations, ...harness.operations].map((o) => o.id))
      expect(cases.map((c) => c.variant === "valid")).toEqual(cases.map((_, i) => planCase(harness, i).kind === "valid"))
      // The same seed and case number give the same request.
      expect(generateCase(harness, world, 42, 5)).toEqual(cases[5])
    }))

  it.effect("BOLA: flags a server that shows one family's patient to another, and passes one that does not", () =>
    Effect.gen(function*() {
      for (const leaky of [true, false]) {
        const server = syntheticApi.server({ leaky })
        const harness = yield* makeHarness(server.send, new Telemetry())
        const report = yield* runBola({
          harness,
          kinds: [patients(server.familySeeder(harness.secrets))],
          newParent: server.newParent,
          seed: 7
        })
        expect(report.scoped.get("patient")).toEqual(["notes.list", "ecm.activities"])
        const messages = report.failures.map((f) => `${f.operation}: ${f.message}`)
        if (leaky) {
          expect(messages).toContain("notes.list: family A's parent got 200 on family B's patient 20")
          expect(messages).toContain("notes.list: the response holds family B's data")
        } else {
          expect(messages).toEqual([])
        }
      }
    }))

  it.effect("staff BOLA: flags a server that shows one provider's patient to another, and passes one that does not, with break-glass on the record", () =>
    Effect.gen(function*() {
      for (const staffLeaky of [true, false]) {
        const server = syntheticApi.server({ leaky: false, staffLeaky })
        const harness = yield* makeHarness(server.send, new Telemetry())
        const report = yield* runStaffBola({
          harness,
          seeder: server.familySeeder(harness.secrets),
          newParent: server.newParent,
          frontOffice: server.frontOffice,
          seed: 7,
          clinical: (operation) => operation.id === "notes.list"
        })
        expect(report.matrix).toEqual(new Map([["outsider provider", ["notes.list"]], ["front desk", ["notes.list"]], ["billing", ["notes.list"]]]))
        expect(report.outOfScope).toEqual(new Map([["ECM area: every clinic staff member", ["ecm.activities"]]]))
        expect(report.controls).toBe(1)
        const messages = report.failures.map((f) => `${f.operation}: ${f.message}`)
        if (staffLeaky) {
          expect(messages).toContain("notes.list: outsider provider: the response holds the other provider's patient's data")
          expect(messages.filter((m) => m.startsWith("notes.list: outsider provider: 200 on another provider's patient"))).toHaveLength(2)
          // The front office still sees no notes; no operation passed, so nothing was sampled for break-glass.
          expect(messages.filter((m) => /front desk|billing/.test(m))).toEqual([])
          expect(report.breakGlass).toEqual(new Map([["patient id in the path, read", undefined]]))
        } else {
          expect(messages).toEqual([])
          expect(report.breakGlass).toEqual(new Map([["patient id in the path, read", "notes.list"]]))
        }
      }
    }))

  it.effect("BOLA over an API without patients: finds the operations, seeds no records, sends nothing for them", () =>
    Effect.gen(function*() {
      const server = syntheticApi.server({ leaky: true })
      const harness = yield* makeHarness(server.send, new Telemetry())
      const report = yield* runBola({ harness, kinds: [patients(withoutPatients)], newParent: server.newParent, seed: 7 })
      expect(report.scoped.get("patient")?.length).toBe(2)
      expect(report.requests).toBe(0)
    }))

  it.effect("the telemetry scan finds generated values in spans and log lines, case-insensitively", () =>
    Effect.gen(function*() {
      const telemetry = new Telemetry()
      const secrets = new Secrets()
      secrets.add("email", "zorvath.c0ffee@example.test")
      secrets.add("token", "tok_ABCDEFGHIJKLMNOP")
      // Scanned while the layer is up: shutting the SDK down empties the exporter.
      const scan = yield* Effect.logDebug("signed up").pipe(
        Effect.annotateLogs("who", "ZORVATH.c0ffee@example.test"),
        Effect.withSpan("Accounts.register", { attributes: { "enduser.token": "prefix-tok_ABCDEFGHIJKLMNOP" } }),
        Effect.andThen(Effect.sync(() => telemetry.scan(secrets))),
        Effect.provide(telemetry.layer)
      )
      // A log line inside a span is also a span event, annotations included.
      expect(describeHits(scan.hits).map((h) => h.split(":")[0])).toEqual([
        "token \"tok_abcdefghijklmnop\" in span Accounts.register",
        "email \"zorvath.c0ffee@example.test\" in span Accounts.register",
        "email \"zorvath.c0ffee@example.test\" in log DEBUG \"signed up\""
      ])
      expect([scan.spans, scan.logLines]).toEqual([1, 1])
    }))

  it("checks responses against the document and the spec's error shapes", () => {
    const document = syntheticApi.document as OpenApiDocument
    const contract = makeContract(document)
    const [notes] = operationsOf(document)
    const exchange = (r: Received) =>
      checkExchange({ operation: notes!, draft: { pathParams: {}, query: [], headers: {}, body: { kind: "none" } }, mustBeRefused: false, received: r }, contract, new Secrets())
        .map((v) => v.check)
    expect(exchange(received(200, { notes: ["a"] }))).toEqual([])
    expect(exchange(received(200, { notes: [1] }))).toEqual(["body does not match the document"])
    expect(exchange(received(200, { notes: [], extra: true }))).toEqual(["body does not match the document"])
    expect(exchange(received(409, { errors: "conflict" }))).toEqual(["undeclared status"])
    expect(exchange(received(503, { errors: ["down"] }))).toEqual(["5xx", "undeclared status"])
    expect(errorShapeProblem("general", 404, { errors: "Patient not found" })).toBeUndefined()
    expect(errorShapeProblem("general", 404, { errors: ["Patient not found"] })).toBeDefined()
    expect(errorShapeProblem("general", 422, { errors: { name: ["can't be blank"] } })).toBeUndefined()
    expect(errorShapeProblem("ecm", 422, { errors: ["Name can't be blank"] })).toBeUndefined()
    expect(errorShapeProblem("ecm", 404, { errors: "Patient not found" })).toBeDefined()
    expect(errorShapeProblem("ecm", 401, { errors: "You are not authorized to perform this action." })).toBeUndefined()
    const secrets = new Secrets()
    secrets.add("password", "pw-zorvathquil-123")
    const leaked = (status: number, text: string) => leaks({ status, headers: {}, text, json: undefined }, secrets).map((v) => v.check)
    expect(leaked(500, "Error: boom\n    at handler (/work/main/src/Services/Accounts.ts:12:7)")).toEqual(["leak: stack trace", "leak: file path"])
    expect(leaked(422, "{\"errors\":\"duplicate key value violates unique constraint \\\"users_email_key\\\"\"}")).toEqual(["leak: SQL"])
    expect(leaked(200, "{\"first_name\":\"'; DROP TABLE users; --\"}")).toEqual([])
    expect(leaked(200, "{\"password\":\"pw-zorvathquil-123\"}")).toEqual(["leak: secret"])
    expect(leaked(200, "{\"hash\":\"scrypt$16384$8$1$abc\"}")).toEqual(["leak: secret"])
  })

  it("checks the security headers of every response, and the headers the document declares for its status", () => {
    const document = syntheticApi.document as OpenApiDocument
    const contract = makeContract(document)
    const [notes, , , invites] = operationsOf(document)
    expect(invites!.responseHeaders.get(429)).toEqual([{ name: "retry-after", required: true, schema: { type: "integer", minimum: 1 } }])
    const checks = (operation: typeof notes, r: Received) =>
      checkExchange({ operation: operation!, draft: { pathParams: {}, query: [], headers: {}, body: { kind: "none" } }, mustBeRefused: false, received: r }, contract, new Secrets())
        .map((v) => `${v.check}: ${v.message}`)
    const { "x-content-type-options": _nosniff, ...withoutNosniff } = securityHeaders
    expect(checks(notes, received(200, { notes: [] }))).toEqual([])
    expect(checks(notes, received(404, { errors: "Patient not found" }, withoutNosniff)))
      .toEqual(["missing security header: no x-content-type-options (expected nosniff) on a 404"])
    expect(checks(notes, received(200, { notes: [] }, { ...securityHeaders, "cache-control": "public, max-age=600" })))
      .toEqual(["wrong security header: cache-control: public, max-age=600 on a 200 (expected no-store)"])
    expect(checks(notes, received(200, { notes: [] }, { ...securityHeaders, "referrer-policy": "unsafe-url" })))
      .toEqual(["wrong security header: referrer-policy: unsafe-url on a 200 (expected no-referrer)"])
    const throttled = { errors: "Too many requests; try again later" }
    expect(checks(invites, received(429, throttled, { ...securityHeaders, "retry-after": "30" }))).toEqual([])
    expect(checks(invites, received(429, throttled))).toEqual(["missing declared header: no retry-after on a 429; the document requires it"])
    expect(checks(invites, received(429, throttled, { ...securityHeaders, "retry-after": "0" })))
      .toEqual(["declared header invalid: retry-after: \"0\" is not an integer of at least 1"])
  })

  it.effect("a run against a server that leaves a security header off reports it on every response", () =>
    Effect.gen(function*() {
      for (const bare of [true, false]) {
        const server = syntheticApi.server({ leaky: false, bare })
        const harness = yield* makeHarness(server.send, new Telemetry())
        const report = yield* runRace({ harness, seeder: server.seeder, inbox: emptyInbox, seed: 7, operations: ["invites.create"], fixtures: {} })
        const checks = new Set(report.failures.map((f) => f.check))
        expect([...checks]).toEqual(bare ? ["missing security header"] : [])
      }
    }))

  it.effect("race mode: flags a single-use rule broken under concurrency (check, then write) and independent requests that block each other; passes an atomic server", () =>
    Effect.gen(function*() {
      for (const [racy, exclusive] of [[true, false], [false, true], [false, false]] as const) {
        const server = syntheticApi.server({ leaky: false, racy, exclusive })
        const harness = yield* makeHarness(server.send, new Telemetry())
        const report = yield* runRace({ harness, seeder: server.seeder, inbox: emptyInbox, seed: 7, operations: ["invites.create"], fixtures: {} })
        expect(report.singleUse).toEqual(new Map([["invites.create", "an email is invited once"]]))
        expect(report.requests).toBe(40)
        const failures = report.failures.map((f) => `${f.round}: ${f.check}: ${f.message}`)
        if (racy) {
          expect(failures).toEqual([
            "one caller: single use: an email is invited once: 20 of 20 identical requests at once succeeded, expected exactly 1 (201 ×20)"
          ])
        } else if (exclusive) {
          expect(failures).toEqual([
            "fresh callers: independent requests refused: 19 of 20 requests at once, each with records of its own, were refused (201 ×1, 422 ×19); only a rate limit (429) may refuse them"
          ])
        } else {
          expect(failures).toEqual([])
          expect(report.statuses.get("invites.create")).toEqual({ "one caller": "201 ×1, 422 ×19", "fresh callers": "201 ×20" })
        }
      }
    }))

  it("oversize mode: finds every string and array of a request, with its declared maximum", () => {
    const document = syntheticApi.document as OpenApiDocument
    const invites = operationsOf(document).find((o) => o.id === "invites.create")!
    expect(requestFields(document, invites, new Set(["x-user-token"])).map((l) => `${describeLocation(l)} ${l.kind} ≤ ${l.max}`)).toEqual([
      "body invite.email string ≤ 64",
      "body invite.note string ≤ 10",
      "body invite.comment string ≤ undefined",
      "body tags array ≤ 2",
      "body tags[] string ≤ 5"
    ])
  })

  it.effect("oversize mode: flags an oversized value accepted, a 5xx, a slow refusal and a 422 that names another field", () =>
    Effect.gen(function*() {
      for (const lax of [true, false]) {
        const server = syntheticApi.server({ leaky: false, lax })
        const harness = yield* makeHarness(server.send, new Telemetry())
        const report = yield* runOversize({ harness, seeder: server.seeder, seed: 7, operations: ["invites.create"] })
        expect([report.bounded, report.unbounded, report.requests]).toEqual([4, 1, 4])
        const failures = report.failures.map((f) => `${f.location}: ${f.check}`)
        expect(failures).toEqual(lax
          ? [
            "body invite.comment: no declared maximum",
            "body invite.email: invalid request accepted",
            "body invite.email: oversize not refused with 422",
            "body invite.note: slow",
            "body tags: 5xx",
            "body tags: undeclared status",
            "body tags: oversize not refused with 422",
            "body tags[]: 422 does not name the field"
          ]
          : ["body invite.comment: no declared maximum"])
      }
    }))
})
