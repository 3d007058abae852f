/**
 * The endpoints of an Api as the server's middleware needs them before (or after) the router: the
 * endpoint a request goes to, its body limit and media types, and the area whose error shapes it
 * answers in.
 *
 * The area is the group's: every group declares its 422, `ValidationFailed` (general area) or
 * `EcmValidationFailed` (ECM area, src/Api/Errors.ts), and the OpenAPI document shows it; so the
 * shape a group documents is the shape it sends, for decoding failures, refused bodies and
 * unavailability alike. A request no endpoint matches answers in the area of the endpoints that
 * share the longest literal path prefix with it (`/v1/clinic/ecm/nope` is ECM), general on a tie.
 */
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import { Context, Option, SchemaAST as AST } from "effect"
import { BodyLimit, type BodyLimitValue, DataUriField } from "../../Api/BodyLimit.js"
import type { Area } from "../../Api/Errors.js"

export interface ApiRoute {
  readonly method: string
  /** The router's form, `/v1/users/:id`: what it puts in the span's `http.route`. */
  readonly path: string
  readonly area: Area
  /** The body limit the endpoint or its group declares. */
  readonly limit: Option.Option<BodyLimitValue>
  /** Media types the endpoint takes a body in (none: it takes no body). */
  readonly mediaTypes: ReadonlySet<string>
  readonly dataUriField: Option.Option<DataUriFieldRoute>
}

/** A JSON field that carries a file as a data URI (`DataUriField`), and the most characters its schema takes. */
export interface DataUriFieldRoute {
  readonly path: ReadonlyArray<string>
  readonly maxCharacters: number
}

interface Compiled extends ApiRoute {
  readonly pattern: RegExp
  /** Path segments, `:name` for a parameter. */
  readonly segments: ReadonlyArray<string>
  /** Literal segments: the router prefers `/users/passwords` to `/users/:id`, and so do we. */
  readonly literalSegments: number
}

const ecmValidationIdentifier = "EcmValidationFailed"

const membersOf = (ast: AST.AST): ReadonlyArray<AST.AST> => (AST.isUnion(ast) ? ast.types.flatMap(membersOf) : [ast])

/** The area a group's declared 422 names. */
export const areaOfGroup = (group: HttpApiGroup.HttpApiGroup.AnyWithProps): Area =>
  membersOf(group.errorSchema.ast).some((member) =>
      Option.contains(AST.getIdentifierAnnotation(member), ecmValidationIdentifier)
    )
    ? "ecm"
    : "general"

const maxLengthOf = (ast: AST.AST): number => {
  const json: { readonly maxLength?: unknown } = Option.getOrElse(AST.getJSONSchemaAnnotation(ast), () => ({}))
  return typeof json.maxLength === "number" ? json.maxLength : Infinity
}

/**
 * The most characters the payload schema takes in the string at `path` (object keys), as the JSON
 * text is decoded (through class transformations, optional unions and the string's refinements):
 * Infinity when unbounded, -Infinity when no string is there.
 */
export const maxLengthAt = (ast: AST.AST, path: ReadonlyArray<string>): number => {
  const [key, ...rest] = path
  switch (ast._tag) {
    case "Transformation":
      return maxLengthAt(ast.from, path)
    case "Suspend":
      return maxLengthAt(ast.f(), path)
    case "Union":
      return Math.max(...ast.types.map((member) => maxLengthAt(member, path)))
    case "Refinement":
      return Math.min(key === undefined ? maxLengthOf(ast) : Infinity, maxLengthAt(ast.from, path))
    case "TypeLiteral": {
      const property = ast.propertySignatures.find((signature) => signature.name === key)
      return property === undefined ? -Infinity : maxLengthAt(property.type, rest)
    }
    case "StringKeyword":
      return key === undefined ? Infinity : -Infinity
    default:
      return -Infinity
  }
}

/** The data URI field an endpoint declares; a path that names no string of its payload is a mistake in the Api. */
const dataUriFieldOf = (
  endpoint: { readonly path: string; readonly annotations: Context.Context<never> },
  payloads: ReadonlyMap<string, { readonly ast: AST.AST }>
): Option.Option<DataUriFieldRoute> =>
  Option.map(Context.getOption(endpoint.annotations, DataUriField), (path) => {
    const maxCharacters = Math.min(...[...payloads.values()].map(({ ast }) => maxLengthAt(ast, path)))
    if (!(maxCharacters > 0)) throw new Error(`DataUriField ${path.join(".")} of ${endpoint.path} is not a string of its payload`)
    return { path, maxCharacters }
  })

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const compile = (route: ApiRoute): Compiled => {
  const segments = route.path.split("/").filter((s) => s !== "")
  const pattern = segments.map((s) => (s.startsWith(":") ? "[^/]+" : escapeRegExp(s))).join("/")
  return {
    ...route,
    pattern: new RegExp(`^/${pattern}/?$`),
    segments,
    literalSegments: segments.filter((s) => !s.startsWith(":")).length
  }
}

const pathOf = (url: string) => url.split("?")[0] ?? url

/** How many leading segments of a path a route spells out literally. */
const sharedLiterals = (route: Compiled, segments: ReadonlyArray<string>) => {
  let shared = 0
  while (shared < route.segments.length && shared < segments.length && route.segments[shared] === segments[shared]) shared++
  return shared
}

export interface ApiRoutes {
  readonly routes: ReadonlyArray<ApiRoute>
  /** The endpoint `method url` goes to, as the router picks it. */
  readonly find: (method: string, url: string) => ApiRoute | undefined
  /** The area whose error shapes the answer to `method url` takes. */
  readonly areaOf: (method: string, url: string) => Area
}

export const apiRoutes = (api: HttpApi.HttpApi.Any): ApiRoutes => {
  const routes: Array<Compiled> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, payloads }) => {
      routes.push(compile({
        method: endpoint.method,
        path: endpoint.path,
        area: areaOfGroup(group),
        limit: Context.getOption(mergedAnnotations, BodyLimit),
        mediaTypes: new Set([...payloads.keys()].map((type) => type.toLowerCase())),
        dataUriField: dataUriFieldOf(endpoint, payloads)
      }))
    }
  })
  const find = (method: string, url: string): ApiRoute | undefined => {
    const path = pathOf(url)
    let best: Compiled | undefined
    for (const route of routes) {
      if (route.method !== method || !route.pattern.test(path)) continue
      if (best === undefined || route.literalSegments > best.literalSegments) best = route
    }
    // The router answers HEAD with the GET route.
    return best === undefined && method === "HEAD" ? find("GET", url) : best
  }
  const areaOf = (method: string, url: string): Area => {
    const found = find(method, url)
    if (found !== undefined) return found.area
    const segments = pathOf(url).split("/").filter((s) => s !== "")
    let longest = 0
    let area: Area = "general"
    for (const route of routes) {
      const shared = sharedLiterals(route, segments)
      if (shared > longest || (shared === longest && route.area === "general")) area = route.area
      longest = Math.max(longest, shared)
    }
    return area
  }
  return { routes, find, areaOf }
}
