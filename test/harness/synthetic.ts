/**
 * A synthetic Api for the machinery's own tests: a small OpenAPI document with patient-scoped,
 * ECM, admin-only operations and a single-use one with bounded fields, and an in-memory server
 * for it that can be made to leak one family's patients to another (`leaky`) or any patient to
 * any provider (`staffLeaky`), to check then
 * write so that concurrent invites of one email all succeed (`racy`), to refuse an invite while
 * another is being written (`exclusive`), to skip its length checks, failing or stalling on
 * oversized values instead (`lax`), and to leave a security header off its responses (`bare`).
 */
import { Effect } from "effect"
import type { Wire } from "./cases.js"
import type { Received } from "./checks.js"
import type { Send } from "./client.js"
import type { Secrets } from "./secrets.js"
import type { CareTeamSeeder } from "./staff.js"
import type { Principal, Role, Seeder } from "./world.js"

const json = (schema: object) => ({ content: { "application/json": { schema } } })
const errorString = json({ type: "object", required: ["errors"], properties: { errors: { type: "string" } }, additionalProperties: false })
const errorList = json({ type: "object", required: ["errors"], properties: { errors: { type: "array", items: { type: "string" } } }, additionalProperties: false })
const fieldErrors = json({
  type: "object",
  required: ["errors"],
  properties: { errors: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } } },
  additionalProperties: false
})
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
    "/v1/invites": {
      post: {
        operationId: "invites.create",
        "x-single-use": "an email is invited once",
        security: secured,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["invite"],
                properties: {
                  invite: {
                    type: "object",
                    required: ["email"],
                    properties: {
                      email: { type: "string", maxLength: 64 },
                      note: { anyOf: [{ type: "string", maxLength: 10 }, { type: "null" }] },
                      comment: { type: "string" }
                    }
                  },
                  tags: { type: "array", maxItems: 2, items: { type: "string", maxLength: 5 } }
                }
              }
            }
          }
        },
        responses: {
          "201": json({ type: "object", required: ["id"], properties: { id: { type: "integer" } }, additionalProperties: false }),
          "401": errorString,
          "422": fieldErrors,
          "429": { ...errorString, headers: { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } }
        }
      }
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
  components: {
    securitySchemes: { userToken: { type: "apiKey", name: "X-User-Token", in: "header" } },
    headers: { RetryAfter: { required: true, schema: { type: "integer", minimum: 1 } } }
  }
}

interface Patient {
  readonly parentId: number
  /** The patient's provider: the one staff member with a care relationship. */
  readonly providerId: number
  readonly name: string
}

/** What the real app puts on every response (test/harness/checks.ts `securityHeaders`). */
export const securityHeaders = { "cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

const respondWith = (headers: Record<string, string>) => (status: number, body?: unknown): Received => ({
  status,
  headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
  text: body === undefined ? "" : JSON.stringify(body),
  json: body
})

export interface SyntheticOptions {
  /** Shows any patient to any signed-in parent. */
  readonly leaky: boolean
  /** Shows any patient to any provider, as if staff saw every patient. */
  readonly staffLeaky?: boolean
  /** Invites check for the email, yield, then record it: concurrent invites of one email all succeed. */
  readonly racy?: boolean
  /** One invite at a time: an invite while another is being written is refused (422), not queued. */
  readonly exclusive?: boolean
  /** No length checks: a long email is accepted, a long note stalls 5 s, 3 tags crash, a long tag is blamed on `base`. */
  readonly lax?: boolean
  /** Responses without `X-Content-Type-Options`. */
  readonly bare?: boolean
}

/** The server. */
const server = (options: SyntheticOptions) => {
  const callers = new Map<string, number>()
  /** Providers and front-office users by id (everyone else is a parent, or staff with no patients). */
  const staffKinds = new Map<number, "provider" | "front office">()
  const breakGlass = new Set<string>()
  const patientsById = new Map<number, Patient>()
  const invited = new Set<string>()
  let writing = 0
  let lastId = 0
  const { "x-content-type-options": _nosniff, ...bareHeaders } = securityHeaders
  const respond = respondWith(options.bare ? bareHeaders : securityHeaders)

  const newPrincipal = (role: Role) => Effect.sync((): Principal => {
    const id = ++lastId
    const token = `synthetic-session-token-${id}`
    callers.set(token, id)
    return { role, id, email: `${role}${id}@synthetic.test`, phone: `+1415555${String(id % 10_000).padStart(4, "0")}`, token }
  })
  const newParent = newPrincipal("parent")

  /** Signed-in users of each role, as the real seeder makes them (no states, no throttles). */
  const world: Seeder["world"] = (others) =>
    Effect.map(Effect.all([newPrincipal("parent"), newPrincipal("staff"), newPrincipal("admin")]), ([parent, staff, admin]) => ({
      principals: { parent, staff, admin },
      userIds: [parent, staff, admin, ...others].map((u) => u.id),
      emails: [parent, staff, admin, ...others].map((u) => u.email)
    }))
  const seeder: Seeder = {
    user: ({ role }) => newPrincipal(role),
    world,
    worlds: (count, others = []) => Effect.all(Array.from({ length: count }, () => world(others))),
    records: Effect.succeed([]),
    others: Effect.succeed([]),
    password: "pw-synthetic-0000",
    resetThrottles: Effect.void
  }

  const invite = (body: unknown): Effect.Effect<Received> =>
    Effect.gen(function*() {
      const { invite, tags } = (body ?? {}) as { invite?: { email?: unknown; note?: unknown }; tags?: unknown }
      const email = invite?.email
      if (typeof email !== "string" || email === "") return respond(422, { errors: { email: ["can't be blank"] } })
      const note = typeof invite?.note === "string" ? invite.note : ""
      const tagList = Array.isArray(tags) ? tags.map(String) : []
      // JSON Schema's maxLength counts code points.
      const length = (text: string) => [...text].length
      if (options.lax) {
        if (tagList.length > 2) return respond(500, { errors: ["Internal server error"] })
        if (tagList.some((t) => length(t) > 5)) return respond(422, { errors: { base: ["is invalid"] } })
        if (length(note) > 10) return { ...respond(422, { errors: { note: ["is too long"] } }), elapsedMs: 5000 }
      } else {
        const tooLong = { ...(length(email) > 64 ? { email: ["is too long"] } : {}), ...(length(note) > 10 ? { note: ["is too long"] } : {}),
          ...(tagList.length > 2 ? { tags: ["has too many items"] } : {}), ...(tagList.some((t) => length(t) > 5) ? { "tags[0]": ["is too long"] } : {}) }
        if (Object.keys(tooLong).length > 0) return respond(422, { errors: tooLong })
      }
      if (options.exclusive) {
        if (writing > 0) return respond(422, { errors: { base: ["another invite is being written"] } })
        writing++
        yield* Effect.yieldNow()
        writing--
      }
      const taken = invited.has(email)
      // Racy: another request runs between the check and the write.
      if (options.racy) yield* Effect.yieldNow()
      if (taken || (!options.racy && invited.has(email))) return respond(422, { errors: { email: ["has already been invited"] } })
      invited.add(email)
      return respond(201, { id: invited.size })
    })

  /** Each family gets one patient, id = parent id × 10, with a name the scans know, and a provider of its own. */
  const providers = new Map<number, Principal>()
  const familySeeder = (secrets: Secrets): CareTeamSeeder<never> => ({
    description: "synthetic: one patient per family, with a provider",
    patientsOf: (parent) =>
      Effect.gen(function*() {
        const id = parent.id * 10
        const provider = yield* newPrincipal("staff")
        staffKinds.set(provider.id, "provider")
        providers.set(id, provider)
        patientsById.set(id, { parentId: parent.id, providerId: provider.id, name: secrets.add("name", `Quorvandel${id}`) })
        return [id]
      }),
    snapshot: (id) => Effect.sync(() => patientsById.get(id) ?? null),
    providerOf: (id) => providers.get(id),
    breakGlassRecorded: (userId, patientId) => Effect.sync(() => breakGlass.has(`${userId}:${patientId}`))
  })

  /** A front desk or billing user: sees no clinical content (notes). */
  const frontOffice = () => Effect.tap(newPrincipal("staff"), (p) => Effect.sync(() => staffKinds.set(p.id, "front office")))

  /** Whether the caller sees the patient's notes: parents their own, providers their patients (or any with a reason, recorded). */
  const sees = (caller: number, patientId: number, patient: Patient, wire: Wire) => {
    if (options.leaky) return true
    if (patient.parentId === caller) return true
    if (staffKinds.get(caller) !== "provider") return false
    if (options.staffLeaky || patient.providerId === caller) return true
    if ((wire.headers["X-Access-Reason"] ?? "").trim() === "") return false
    breakGlass.add(`${caller}:${patientId}`)
    return true
  }

  const handle = (wire: Wire): Received | Effect.Effect<Received> => {
    if (wire.url === "/v1/openapi.json") return respond(200, document)
    const caller = callers.get(wire.headers["X-User-Token"] ?? "")
    if (caller === undefined) return respond(401, { errors: "You are not authorized to perform this action." })
    const [path] = wire.url.split("?")
    if (path === "/v1/invites" && wire.method === "POST") {
      try {
        return invite(wire.body === undefined ? undefined : JSON.parse(wire.body))
      } catch {
        return respond(422, { errors: { body: ["is not valid JSON"] } })
      }
    }
    const scoped = /^\/v1\/clinic\/(ecm\/)?patients\/([^/]+)\/(notes|activities)$/.exec(path!)
    if (scoped) {
      const ecm = scoped[1] !== undefined
      const id = Number(decodeURIComponent(scoped[2]!))
      if (!Number.isInteger(id) || id <= 0) return respond(422, ecm ? { errors: ["Patient is invalid"] } : { errors: "Patient is invalid" })
      const patient = patientsById.get(id)
      if (patient === undefined || !sees(caller, id, patient, wire)) {
        return respond(404, ecm ? { errors: ["Patient not found"] } : { errors: "Patient not found" })
      }
      return respond(200, ecm ? { activities: [patient.name] } : { notes: [patient.name] })
    }
    return respond(403, { errors: "Admin access required" })
  }

  const send: Send = (wire) => Effect.suspend(() => {
    const handled = handle(wire)
    return Effect.isEffect(handled) ? handled : Effect.succeed(handled)
  })
  return { send, newParent, familySeeder, frontOffice, seeder }
}

export const syntheticApi = { document, server }
