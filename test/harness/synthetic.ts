/**
 * A synthetic Api for the machinery's own tests: a small OpenAPI document with patient-scoped,
 * ECM, admin-only operations, and an in-memory server for it that can be made to leak one
 * family's patients to another.
 */
import { Effect } from "effect"
import type { Wire } from "./cases.js"
import type { Received } from "./checks.js"
import type { Send } from "./client.js"
import type { FamilySeeder } from "./bola.js"
import type { Secrets } from "./secrets.js"
import type { Principal } from "./world.js"

const json = (schema: object) => ({ content: { "application/json": { schema } } })
const errorString = json({ type: "object", required: ["errors"], properties: { errors: { type: "string" } }, additionalProperties: false })
const errorList = json({ type: "object", required: ["errors"], properties: { errors: { type: "array", items: { type: "string" } } }, additionalProperties: false })
const idParameter = (name: string) => ({ name, in: "path", required: true, schema: { type: "string", description: "a string to be decoded into a number" } })
const secured = [{ userToken: [] }]

const document = {
  openapi: "3.1.0",
  info: { title: "synthetic", version: "1" },
  paths: {
    "/v1/clinic/patients/{patient_id}/notes": {
      get: {
        operationId: "notes.list",
        parameters: [idParameter("patient_id")],
        security: secured,
        responses: {
          "200": json({ type: "object", required: ["notes"], properties: { notes: { type: "array", items: { type: "string" } } }, additionalProperties: false }),
          "401": errorString,
          "404": errorString,
          "422": errorString
        }
      }
    },
    "/v1/clinic/ecm/patients/{patient_id}/activities": {
      get: {
        operationId: "ecm.activities",
        parameters: [idParameter("patient_id")],
        security: secured,
        responses: {
          "200": json({ type: "object", required: ["activities"], properties: { activities: { type: "array", items: { type: "string" } } } }),
          "401": errorString,
          "404": errorList,
          "422": errorList
        }
      }
    },
    "/v1/admin/reports": {
      get: { operationId: "admin.report", security: secured, responses: { "200": json({ type: "object" }), "401": errorString, "403": errorString } }
    },
    "/v1/users/{id}": {
      delete: {
        operationId: "users.delete",
        parameters: [idParameter("id")],
        security: secured,
        responses: { "204": { description: "Success" }, "401": errorString, "403": errorString, "404": errorString, "422": errorString }
      }
    }
  },
  components: { securitySchemes: { userToken: { type: "apiKey", name: "X-User-Token", in: "header" } } }
}

interface Patient {
  readonly parentId: number
  readonly name: string
}

const respond = (status: number, body?: unknown): Received => ({
  status,
  headers: body === undefined ? {} : { "content-type": "application/json" },
  text: body === undefined ? "" : JSON.stringify(body),
  json: body
})

/** The server: `leaky` shows any patient to any signed-in parent. */
const server = (options: { readonly leaky: boolean }) => {
  const parents = new Map<string, number>()
  const patientsById = new Map<number, Patient>()
  let lastId = 0

  const newParent = Effect.sync((): Principal => {
    const id = ++lastId
    const token = `synthetic-session-token-${id}`
    parents.set(token, id)
    return { role: "parent", id, email: `parent${id}@synthetic.test`, token }
  })

  /** Each family gets one patient, id = parent id × 10, with a name the scans know. */
  const familySeeder = (secrets: Secrets): FamilySeeder<never> => ({
    description: "synthetic: one patient per family",
    patientsOf: (parent) =>
      Effect.sync(() => {
        const id = parent.id * 10
        patientsById.set(id, { parentId: parent.id, name: secrets.add("name", `Quorvandel${id}`) })
        return [id]
      }),
    snapshot: (id) => Effect.sync(() => patientsById.get(id) ?? null)
  })

  const handle = (wire: Wire): Received => {
    if (wire.url === "/v1/openapi.json") return respond(200, document)
    const caller = parents.get(wire.headers["X-User-Token"] ?? "")
    if (caller === undefined) return respond(401, { errors: "You are not authorized to perform this action." })
    const [path] = wire.url.split("?")
    const scoped = /^\/v1\/clinic\/(ecm\/)?patients\/([^/]+)\/(notes|activities)$/.exec(path!)
    if (scoped) {
      const ecm = scoped[1] !== undefined
      const id = Number(decodeURIComponent(scoped[2]!))
      if (!Number.isInteger(id) || id <= 0) return respond(422, ecm ? { errors: ["Patient is invalid"] } : { errors: "Patient is invalid" })
      const patient = patientsById.get(id)
      if (patient === undefined || (!options.leaky && patient.parentId !== caller)) {
        return respond(404, ecm ? { errors: ["Patient not found"] } : { errors: "Patient not found" })
      }
      return respond(200, ecm ? { activities: [patient.name] } : { notes: [patient.name] })
    }
    return respond(403, { errors: "Admin access required" })
  }

  const send: Send = (wire) => Effect.sync(() => handle(wire))
  return { send, newParent, familySeeder }
}

export const syntheticApi = { document, server }
