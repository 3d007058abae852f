/**
 * Reading the OpenAPI document: the list of operations the harness must cover, with what each
 * one declares (parameters, body, statuses, security) and what the spec's rules make of it
 * (admin-only, area). Everything here comes from the document and the two spec texts, never
 * from the server's own code, so drift between the code and the document shows.
 */

/** A JSON Schema as the document holds it (2020-12 dialect, `$ref`s into `#/components`). */
export type JsonSchema = { readonly [keyword: string]: unknown }

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required: boolean
  readonly schema: JsonSchema
  readonly description?: string
}

export interface OpenApiDocument {
  readonly openapi: string
  readonly paths: Record<string, Record<string, RawOperation>>
  readonly components?: { readonly schemas?: Record<string, JsonSchema>; readonly securitySchemes?: Record<string, JsonSchema> }
}

interface RawOperation {
  readonly operationId?: string
  readonly "x-single-use"?: unknown
  readonly "x-access"?: unknown
  readonly "x-webhook-signature"?: unknown
  readonly parameters?: ReadonlyArray<Parameter>
  readonly security?: ReadonlyArray<Record<string, ReadonlyArray<string>>>
  readonly requestBody?: { readonly required?: boolean; readonly content?: Record<string, { readonly schema?: JsonSchema }> }
  readonly responses?: Record<string, {
    readonly content?: Record<string, { readonly schema?: JsonSchema }>
    readonly headers?: Record<string, JsonSchema>
  }>
}

/** A header a response declares (`responses.429.headers.Retry-After`), `$ref` resolved. */
export interface ResponseHeader {
  /** Lower-cased, as received headers are keyed. */
  readonly name: string
  readonly required: boolean
  readonly schema: JsonSchema
}

/** Which spec document governs an endpoint, and so which error body shapes it uses. */
export type Area = "general" | "ecm"

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface Operation {
  /** `operationId`, or `METHOD /path` when the document has none. */
  readonly id: string
  readonly method: HttpMethod
  /** Path template as the document writes it: `/v1/users/{id}`. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  /** Request body schema, when the operation takes one (JSON, or a form: `bodyEncoding`). */
  readonly body: JsonSchema | undefined
  /**
   * How the body is sent: JSON, or form-encoded string pairs (the telephony webhooks, whose
   * `body` schema is that of the `application/x-www-form-urlencoded` content).
   */
  readonly bodyEncoding: "json" | "form"
  /**
   * Who signs the request (`x-webhook-signature`, e.g. `twilio`): the harness signs valid requests
   * as that provider does, and a request without a valid signature must be refused with 403.
   */
  readonly signature: string | undefined
  readonly bodyRequired: boolean
  /** Declared response statuses and the JSON schema of each (undefined: no content). */
  readonly responses: ReadonlyMap<number, JsonSchema | undefined>
  /** Headers declared per response status (`Retry-After` on 429 and 503). */
  readonly responseHeaders: ReadonlyMap<number, ReadonlyArray<ResponseHeader>>
  /** The header carrying the user token, when the operation requires one. */
  readonly tokenHeader: string | undefined
  /**
   * Admin role required: spec rules "Endpoints under /v1/admin require the admin role" and "DELETE
   * /v1/users/{id} needs admin", for operations that require a token (the public invite steps under
   * /v1/admin/clinic/providers/invites require none).
   */
  readonly adminOnly: boolean
  /**
   * Clinic staff only (`x-access: staff`, which `operationDocs` writes for `Access.staff`): a
   * parent is refused with 403 whatever record they name.
   */
  readonly staffOnly: boolean
  readonly area: Area
  /**
   * The operation's single-use or uniqueness rule, from its `x-single-use` extension (an endpoint
   * declares it with `.annotate(OpenApi.Override, { "x-single-use": "…" })`): the same request
   * sent at once many times succeeds exactly once.
   */
  readonly singleUse: string | undefined
}

const methods: ReadonlyArray<HttpMethod> = ["GET", "POST", "PUT", "PATCH", "DELETE"]

/**
 * The ECM document's endpoints (ECM §4): `/v1/clinic/ecm/…`, `/v1/admin/clinic/ecm/…`,
 * `/v1/clinic/patients/ecm/…` and the telephony webhooks. Every other path is the general area.
 */
export const areaOf = (path: string): Area =>
  /^\/v1\/(?:admin\/)?clinic\/(?:ecm|patients\/ecm|webhooks)(?:\/|$)/.test(path) ? "ecm" : "general"

/** General §5.3: admin endpoints, and DELETE /v1/users/{id}. */
export const isAdminOnly = (method: HttpMethod, path: string): boolean =>
  path.startsWith("/v1/admin/") || (method === "DELETE" && /^\/v1\/users\/\{[^}]+\}$/.test(path))

const jsonSchemaOf = (content: Record<string, { readonly schema?: JsonSchema }> | undefined): JsonSchema | undefined =>
  content?.["application/json"]?.schema

const bodySchemaOf = (document: OpenApiDocument, content: Record<string, { readonly schema?: JsonSchema }> | undefined) => {
  const schema = jsonSchemaOf(content) ?? content?.[formMediaType]?.schema
  return schema === undefined ? undefined : resolve(document, schema)
}

export const formMediaType = "application/x-www-form-urlencoded"

/**
 * The header name of the first apiKey scheme an operation requires. A security list with an empty
 * requirement (`[{userToken: []}, {}]`: the session is optional: the collaborator assessment submit takes a
 * link token in the body instead) requires none: the operation is public to the access matrix,
 * and signed-in callers still send their token.
 */
const tokenHeaderOf = (document: OpenApiDocument, operation: RawOperation): string | undefined => {
  const security = operation.security ?? []
  if (security.some((requirement) => Object.keys(requirement).length === 0)) return undefined
  for (const requirement of security) {
    for (const scheme of Object.keys(requirement)) {
      const declared = document.components?.securitySchemes?.[scheme]
      if (declared?.type === "apiKey" && declared.in === "header" && typeof declared.name === "string") return declared.name
    }
  }
  return undefined
}

/** Every operation of the document, in document order. */
export const operationsOf = (document: OpenApiDocument): ReadonlyArray<Operation> =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    methods.flatMap((method): Array<Operation> => {
      const raw = item[method.toLowerCase()]
      if (raw === undefined) return []
      const responses = new Map<number, JsonSchema | undefined>()
      const responseHeaders = new Map<number, ReadonlyArray<ResponseHeader>>()
      for (const [status, response] of Object.entries(raw.responses ?? {})) {
        responses.set(Number(status), jsonSchemaOf(response.content))
        const headers = Object.entries(response.headers ?? {}).map(([name, declared]): ResponseHeader => {
          const header = resolve(document, declared)
          return { name: name.toLowerCase(), required: header.required === true, schema: (header.schema ?? {}) as JsonSchema }
        })
        if (headers.length > 0) responseHeaders.set(Number(status), headers)
      }
      return [{
        id: raw.operationId ?? `${method} ${path}`,
        method,
        path,
        parameters: raw.parameters ?? [],
        // Resolved at the top, so the body's fields are in sight (bola.ts finds a `patient_id` field).
        body: bodySchemaOf(document, raw.requestBody?.content),
        bodyEncoding: jsonSchemaOf(raw.requestBody?.content) === undefined && raw.requestBody?.content?.[formMediaType] !== undefined
          ? "form"
          : "json",
        signature: typeof raw["x-webhook-signature"] === "string" ? raw["x-webhook-signature"] : undefined,
        bodyRequired: raw.requestBody?.required ?? false,
        responses,
        responseHeaders,
        tokenHeader: tokenHeaderOf(document, raw),
        // A public operation under /v1/admin (provider invite validate and accept) admits anyone, and
        // a staff one there (the ECM engagement status: "admin or staff") admits staff.
        adminOnly: tokenHeaderOf(document, raw) !== undefined && isAdminOnly(method, path) && raw["x-access"] !== "staff",
        staffOnly: tokenHeaderOf(document, raw) !== undefined && raw["x-access"] === "staff",
        area: areaOf(path),
        singleUse: typeof raw["x-single-use"] === "string" ? raw["x-single-use"] : raw["x-single-use"] === true ? "single use" : undefined
      }]
    })
  )

/** Follows `$ref`s (`#/components/...`) until a schema without one. */
export const resolve = (document: OpenApiDocument, schema: JsonSchema): JsonSchema => {
  let current = schema
  for (let hops = 0; typeof current.$ref === "string"; hops++) {
    if (hops > 32) throw new Error(`$ref cycle at ${current.$ref}`)
    const target = (current.$ref as string).replace(/^#\//, "").split("/").reduce<unknown>(
      (node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
      document
    ) as JsonSchema | undefined
    if (target === undefined) throw new Error(`unresolved $ref ${current.$ref}`)
    // Keywords beside a $ref (2020-12) narrow the target: keep them.
    const { $ref: _ref, ...siblings } = current
    current = { ...target, ...siblings }
  }
  return current
}

/** The path parameters of a template, in order: `/a/{x}/b/{y}` -> `["x", "y"]`. */
export const pathParameterNames = (template: string): ReadonlyArray<string> =>
  [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)

/** The header of the document's apiKey scheme (`X-User-Token`). */
export const tokenHeaderName = (document: OpenApiDocument): string => {
  const scheme = Object.values(document.components?.securitySchemes ?? {}).find((s) => s.type === "apiKey" && s.in === "header")
  if (scheme === undefined || typeof scheme.name !== "string") throw new Error("the document declares no apiKey header scheme")
  return scheme.name
}
