/**
 * API-level error handling: request decoding failures become 422 in the area's shape with
 * messages naming the field; malformed JSON gets a JSON body too; anything unexpected becomes a
 * bare 500 whose trace id is logged. Responses never carry a stack, SQL or a secret.
 *
 * Where errors are made:
 * - Services and repositories fail with tagged errors (`Data.TaggedError`, or `Schema.TaggedError`
 *   when the error crosses a boundary as data). A failure the client caused and the spec names
 *   (not found, conflict, invalid field) is one of the API errors of src/Api/Errors.ts, built with
 *   its helpers (`notFound`, `ecmInvalid` …); an internal failure is a service's own tagged error,
 *   caught by tag (`Effect.catchTag`) where it becomes an API error, or a defect.
 * - A group declares the API errors it sends, its 422 naming its area (./ApiRoutes.ts); handlers
 *   fail with them and the builder encodes them. Nothing matches a URL or an error's text to pick
 *   a shape or a status.
 * - This module turns what the platform fails with (decoding failures, unreadable JSON, unknown
 *   routes) into the area's shape, sends the errors that carry a wait with `Retry-After`, and
 *   turns every defect into a 500 (or a 503 when a dependency is down).
 * - A decoding failure's messages come from the request schemas and the issues' tags only: every
 *   node of an endpoint's path, query, headers and body carries a `message` annotation (its own,
 *   or the default of its kind that src/Api/RequestMessages.ts adds to the whole Api), a missing
 *   field is "can't be blank" and an unexpected one "is not allowed". Nothing reads Effect's text.
 * - Bodies refused before decoding (too large, wrong media type, not UTF-8, nested too deeply) are
 *   answered by the body checks (./RequestBody.ts), through `errorResponse` here.
 */
import { type HttpApi, HttpApiBuilder, HttpApiError, HttpApiSchema, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import {
  type ApiError,
  type Area,
  ecmNotFound,
  type FieldMessages,
  internalServerError,
  isApiError,
  messages,
  notFound,
  retryAfterOf,
  serviceUnavailable,
  validationFailure
} from "../../Api/Errors.js"
import { Api } from "../../Api/Api.js"
import { requestMessages } from "../../Api/RequestMessages.js"
import { ObjectStoreUnavailable } from "../../Services/ObjectStore.js"
import { isDatabaseUnavailable } from "../Database.js"
import { apiRoutes } from "./ApiRoutes.js"
import { currentTraceId } from "../../Services/Spans.js"

type ArrayIssue = HttpApiError.HttpApiDecodeError["issues"][number]

/**
 * The message of one decoding issue: a missing or unexpected field by its tag, anything else by the
 * message annotation the request schema carries (src/Api/RequestMessages.ts).
 */
export const humanMessage = (issue: Pick<ArrayIssue, "_tag" | "message">): string => {
  switch (issue._tag) {
    case "Missing":
      return requestMessages.blank
    case "Unexpected":
      return requestMessages.notAllowed
    // Only an effectful schema run synchronously fails so; none of the Api's does.
    case "Forbidden":
      return requestMessages.invalid
    default:
      return issue.message
  }
}

/** `["user","email"]` -> "email"; `["slots",0,"start_time"]` -> "slots[0].start_time". */
export const fieldName = (path: ReadonlyArray<PropertyKey>): string => {
  const segments = path.length > 1 && typeof path[1] === "string" ? path.slice(1) : path
  if (segments.length === 0) return "base"
  return segments.reduce<string>((name, segment) =>
    typeof segment === "number" ? `${name}[${segment}]` : name === "" ? String(segment) : `${name}.${String(segment)}`, "")
}

/**
 * One message per field: a value that fails to decode fails every inner check after it too.
 * An issue on a parent path only echoes its children's (an optional wrapper reports "is invalid"
 * for `filters` when `filters.roles[0]` is wrong), so it is dropped when a deeper one exists.
 */
export const fieldMessages = (issues: ReadonlyArray<Pick<ArrayIssue, "_tag" | "message" | "path">>): FieldMessages => {
  const isPrefix = (parent: ReadonlyArray<PropertyKey>, child: ReadonlyArray<PropertyKey>) =>
    parent.length < child.length && parent.every((segment, i) => segment === child[i])
  const fields: Record<string, Array<string>> = {}
  for (const issue of issues) {
    if (issues.some((other) => isPrefix(issue.path, other.path))) continue
    fields[fieldName(issue.path)] ??= [humanMessage(issue)]
  }
  return fields
}

/**
 * The one place an error value becomes a response outside the builder's encoding. An error that
 * carries a wait (429 from any throttle, 503) gets it as `Retry-After`: the builder encodes only
 * bodies, so `ErrorHandlingLive` sends those errors through here.
 */
export const errorResponse = (error: ApiError) => {
  const schema = (error.constructor as unknown as { readonly schema: Schema.Schema<ApiError, unknown> }).schema
  const retryAfter = retryAfterOf(error)
  return HttpServerResponse.json(Schema.encodeSync(schema)(error), {
    status: HttpApiSchema.getStatusErrorAST(schema.ast),
    ...(retryAfter === undefined ? {} : { headers: { "retry-after": String(retryAfter) } })
  }).pipe(Effect.orDie)
}

export const unavailableResponse = (area: Area) => errorResponse(serviceUnavailable(area))


/**
 * What an SRE needs to find a defect, without its message: driver errors put row values (names,
 * emails) in their messages and details, and logs must not hold personal data.
 */
export const describeDefect = (defect: unknown): Record<string, string> => {
  if (!(defect instanceof Error)) return { error: typeof defect }
  const code = (defect as { code?: unknown }).code
  const frames = (defect.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at ")).slice(0, 8)
  return {
    error: defect.name,
    ...(typeof code === "string" ? { code } : {}),
    ...((defect as { _tag?: unknown })._tag ? { tag: String((defect as { _tag?: unknown })._tag) } : {}),
    stack: frames.map((f) => f.trim()).join(" | ")
  }
}

/** The error handling of a server of `api`: each answer in the area of the group it goes to. */
export const errorHandlingFor = (api: HttpApi.HttpApi.Any) => {
  const routes = apiRoutes(api)
  return HttpApiBuilder.middleware((app) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const area = routes.areaOf(request.method, request.url)
        const failure = Cause.failureOption(cause as Cause.Cause<unknown>)
        if (Option.isSome(failure) && failure.value instanceof HttpApiError.HttpApiDecodeError) {
          return yield* errorResponse(validationFailure(area, fieldMessages(failure.value.issues)))
        }
        if (Option.isSome(failure) && isApiError(failure.value)) {
          // A wait to announce (429, 503): the builder would send the body without the header.
          if (retryAfterOf(failure.value) !== undefined) return yield* errorResponse(failure.value)
          // Any other declared error of the Api: the builder encodes it with its status.
          return yield* Effect.failCause(cause)
        }
        const squashed = Cause.squash(cause)
        // The body checks read every body within its limit before the platform parses it, so the
        // platform's request errors are bodies it could not parse.
        if (squashed instanceof HttpServerError.RequestError) {
          return yield* errorResponse(validationFailure(area, { body: ["is not valid JSON"] }))
        }
        if (squashed instanceof HttpServerError.RouteNotFound) {
          return yield* errorResponse(area === "ecm" ? ecmNotFound("Route") : notFound("Route"))
        }
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const traceId = (yield* currentTraceId) ?? "none"
        if (isDatabaseUnavailable(squashed)) {
          yield* Effect.logWarning("database unavailable").pipe(
            Effect.annotateLogs({ "http.request.method": request.method, trace_id: traceId, ...describeDefect(squashed) })
          )
          return yield* unavailableResponse(area)
        }
        if (squashed instanceof ObjectStoreUnavailable) {
          yield* Effect.logWarning("file store unavailable").pipe(
            Effect.annotateLogs({ "http.request.method": request.method, trace_id: traceId, reason: squashed.reason })
          )
          return yield* errorResponse(serviceUnavailable(area, messages.fileStoreUnavailable))
        }
        yield* Effect.logError("unhandled failure").pipe(
          Effect.annotateLogs({
            "http.request.method": request.method,
            trace_id: traceId,
            ...describeDefect(squashed)
          })
        )
        return yield* errorResponse(internalServerError())
      })
    ))
}

export const ErrorHandlingLive = errorHandlingFor(Api)
