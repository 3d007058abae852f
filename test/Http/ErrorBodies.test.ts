/**
 * Every endpoint of the real Api, sent a broad sample of bad input built from its own schemas:
 * bodies with every field missing, null, of the wrong type, too long, a list or an object where
 * the other is expected, nested list items wrong; path ids that are not numbers or name no record;
 * query parameters that are not numbers or not in their list; bodies over the limit and malformed
 * JSON. The status and error body of each answer are pinned in a file, so a change to how errors
 * are made (src/Layers/Http/Errors.ts) that changes any body fails here.
 */
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, SchemaAST as AST } from "effect"
import { Api } from "../../src/Api/Api.js"
import { request, signIn, TestApp } from "../support/app.js"

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

interface Target {
  readonly method: Method
  readonly path: string
  readonly payload: Option.Option<AST.AST>
  readonly urlParams: Option.Option<AST.AST>
}

const targets: Array<Target> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
    targets.push({
      method: e.method as Method,
      path: e.path,
      payload: Option.map(e.payloadSchema, (s) => s.ast),
      urlParams: Option.map(e.urlParamsSchema, (s) => s.ast)
    })
  }
})

/** The object form a request decodes from: through classes, transformations and optional unions. */
const objectOf = (ast: AST.AST, depth = 0): AST.TypeLiteral | undefined => {
  if (depth > 8) return undefined
  const encoded = AST.encodedAST(ast)
  if (AST.isTypeLiteral(encoded)) return encoded
  if (AST.isUnion(encoded)) {
    for (const member of encoded.types) {
      const found = objectOf(member, depth + 1)
      if (found) return found
    }
  }
  if (AST.isSuspend(encoded)) return objectOf(encoded.f(), depth + 1)
  return undefined
}

const elementOf = (ast: AST.AST): AST.AST | undefined => {
  const encoded = AST.encodedAST(ast)
  if (AST.isTupleType(encoded)) return encoded.rest[0]?.type
  if (AST.isUnion(encoded)) return encoded.types.map(elementOf).find((e) => e !== undefined)
  return undefined
}

/** An object of the given shape with every leaf field set to `leaf`; lists of objects get one such item. */
const fill = (shape: AST.TypeLiteral, leaf: unknown, depth = 0): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const property of shape.propertySignatures) {
    const name = String(property.name)
    const nested = depth < 3 ? objectOf(property.type) : undefined
    const element = elementOf(property.type)
    const item = depth < 3 && element !== undefined ? objectOf(element) : undefined
    out[name] = nested !== undefined ? fill(nested, leaf, depth + 1) : item !== undefined ? [fill(item, leaf, depth + 1)] : leaf
  }
  return out
}

const leaves: ReadonlyArray<readonly [string, unknown]> = [
  ["null", null],
  ["number", 12345],
  ["negative", -1],
  ["string", "zz"],
  ["blank", ""],
  ["long", "x".repeat(600)],
  ["list", ["zz"]],
  ["object", {}],
  ["boolean", true]
]

const withParams = (path: string, value: string) => path.replace(/:[a-z_]+/g, value)

/** The requests of the sample, in a fixed order. */
const sample = (): Array<{ readonly label: string; readonly method: Method; readonly url: string; readonly body?: unknown }> => {
  const out: Array<{ label: string; method: Method; url: string; body?: unknown }> = []
  for (const target of targets) {
    const hasParams = target.path.includes(":")
    if (hasParams) {
      for (const id of ["abc", "0"]) out.push({ label: `id ${id}`, method: target.method, url: withParams(target.path, id), body: {} })
      if (target.method === "GET" || target.method === "DELETE") {
        out.push({ label: "unknown id", method: target.method, url: withParams(target.path, "999999") })
      }
    }
    if (Option.isSome(target.payload)) {
      const shape = objectOf(target.payload.value)
      const url = withParams(target.path, "1")
      out.push({ label: "empty body", method: target.method, url, body: {} })
      out.push({ label: "body not an object", method: target.method, url, body: "[1]" })
      if (shape !== undefined) {
        for (const [label, leaf] of leaves) out.push({ label: `fields ${label}`, method: target.method, url, body: fill(shape, leaf) })
      }
    }
    if (Option.isSome(target.urlParams)) {
      const shape = objectOf(target.urlParams.value)
      const url = withParams(target.path, "1")
      if (shape !== undefined) {
        for (const value of ["zz", "-1", "0", "2.5", "", "100000"]) {
          const query = shape.propertySignatures.map((p) => `${String(p.name)}=${encodeURIComponent(value)}`).join("&")
          out.push({ label: `query ${JSON.stringify(value)}`, method: target.method, url: `${url}?${query}` })
        }
      }
    }
    if (Option.isSome(target.payload) && !target.path.startsWith("/admin/clinic/ecm/mifs")) {
      out.push({ label: "too large", method: target.method, url: withParams(target.path, "1"), body: { big: "x".repeat(40_000) } })
      out.push({ label: "malformed JSON", method: target.method, url: withParams(target.path, "1"), body: "{\"a\":" })
    }
  }
  for (const url of ["/v1/nope", "/v1/clinic/ecm/nope", "/v1/clinic/ecmx", "/v1/admin/clinic/ecm/nope", "/v1/clinic/webhooks/nope"]) {
    out.push({ label: "unknown route", method: "GET", url })
  }
  return out
}

layer(TestApp(), { timeout: 300_000 })("error bodies of the whole Api", (it) => {
  it.effect("every bad input gets the status and body it got before", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const answers: Array<string> = []
      for (const { body, label, method, url } of sample()) {
        const response = yield* request(method, url, { token, ...(body === undefined ? {} : { body }) })
        // Successes carry ids and times: their status is pinned, not their body.
        const pinned = response.status >= 400 ? response.body : "(success)"
        answers.push(JSON.stringify([`${method} ${url.length > 120 ? url.slice(0, 120) + "…" : url}`, label, response.status, pinned]))
      }
      expect(answers.length).toBeGreaterThan(1000)
      yield* Effect.promise(() => expect(answers.join("\n") + "\n").toMatchFileSnapshot("./__snapshots__/ErrorBodies.txt"))
    }), 300_000)
})
