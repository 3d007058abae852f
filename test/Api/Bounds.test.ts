/**
 * Every input the Api takes is bounded in the document itself: each string of a request body or
 * parameter has a `maxLength` (or is one of an `enum`), each list a `maxItems`. The harness's
 * oversize mode reads these bounds; a new endpoint with an unbounded field fails here.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Api } from "../../src/Api/Api.js"
import { maxLengths } from "../../src/Api/Schemas.js"

type Json = Record<string, any>

const document = OpenApi.fromApi(Api) as unknown as Json

const resolve = (schema: Json): Json => {
  let current = schema
  while (typeof current.$ref === "string") {
    const { $ref, ...siblings } = current
    current = { ...document.components.schemas[$ref.replace("#/components/schemas/", "")], ...siblings }
  }
  return current
}

/**
 * The platform's number-from-text (`page`, `page_size`): decoded to a number, never stored or
 * echoed as text, so its length does not matter.
 */
const isNumericText = (schema: Json) => schema.description === "a string to be decoded into a number"

/** Paths (`POST /v1/users body.user.email`) of unbounded strings and lists under `schema`. */
const unbounded = (schema: Json, at: string, seen = new Set<Json>()): Array<string> => {
  const node = resolve(schema)
  if (seen.has(node)) return []
  seen.add(node)
  const found: Array<string> = []
  const types: Array<string> = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]
  if (types.includes("string") && node.enum === undefined && node.const === undefined && typeof node.maxLength !== "number" && !isNumericText(node)) {
    found.push(`${at}: string without maxLength`)
  }
  if (types.includes("array") && typeof node.maxItems !== "number") found.push(`${at}: list without maxItems`)
  for (const [key, child] of Object.entries<Json>(node.properties ?? {})) found.push(...unbounded(child, `${at}.${key}`, seen))
  if (typeof node.items === "object") found.push(...unbounded(node.items, `${at}[]`, seen))
  if (typeof node.additionalProperties === "object") found.push(...unbounded(node.additionalProperties, `${at}{}`, seen))
  for (const key of ["anyOf", "oneOf", "allOf"]) for (const child of node[key] ?? []) found.push(...unbounded(child, at, seen))
  return found
}

const operations = Object.entries<Json>(document.paths).flatMap(([path, item]) =>
  Object.entries<Json>(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation }))
)

const find = (name: string) => operations.find((o) => o.name === name)!.operation
const bodyOf = (name: string) => resolve(find(name).requestBody.content["application/json"].schema)
const parameterOf = (name: string, parameter: string) =>
  resolve(find(name).parameters.find((p: Json) => p.name === parameter).schema)

describe("bounded inputs in the OpenAPI document", () => {
  it("every string and list of every request body and parameter has a maximum", () => {
    const problems = operations.flatMap(({ name, operation }) => [
      ...Object.values<Json>(operation.requestBody?.content ?? {}).flatMap((media) => unbounded(media.schema, `${name} body`)),
      ...(operation.parameters ?? []).flatMap((p: Json) => unbounded(p.schema, `${name} ${p.in} ${p.name}`))
    ])
    expect(operations.length).toBeGreaterThan(20)
    expect(problems).toEqual([])
  })

  it("the check itself finds unbounded strings and lists", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: "array", items: { anyOf: [{ type: "string" }, { type: "null" }] } },
        c: { type: "string", enum: ["x"] },
        d: { type: "string", maxLength: 3 }
      }
    }
    expect(unbounded(schema, "body")).toEqual(["body.a: string without maxLength", "body.b: list without maxItems", "body.b[]: string without maxLength"])
  })

  it("states the chosen limits (docs/spec-decisions.md)", () => {
    const register = resolve(bodyOf("POST /v1/users").properties.user)
    expect(register.properties.email.maxLength).toBe(maxLengths.email)
    expect(register.properties.password).toMatchObject({ minLength: 8, maxLength: maxLengths.password })
    expect(register.properties.first_name.maxLength).toBe(maxLengths.name)
    expect(maxLengths).toMatchObject({ email: 254, password: 128, name: 100, search: 200 })
    const filter = bodyOf("POST /v1/admin/clinic/users/filter_users")
    expect(filter.properties.search.anyOf[0].maxLength).toBe(maxLengths.search)
    expect(resolve(filter.properties.filters).properties.roles.maxItems).toBe(6)
    expect(parameterOf("GET /v1/admin/clinic/users", "search").maxLength).toBe(maxLengths.search)
  })

  it("path ids are declared as strict decimal text", () => {
    for (const name of ["GET /v1/admin/clinic/users/{id}", "PUT /v1/users/{id}", "DELETE /v1/users/{id}"]) {
      expect(parameterOf(name, "id")).toMatchObject({ type: "string", pattern: "^[1-9][0-9]{0,9}$", maxLength: 10 })
    }
  })
})
