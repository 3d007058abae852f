/**
 * What a request body must be before the Api decodes it:
 * - no larger than its endpoint's limit (src/Api/BodyLimit.ts: a few KB unless the endpoint
 *   carries files), else 413: after reading the body to its end (nothing kept) when it is at most
 *   about twice the limit, so the client is done sending; at once for a larger declared
 *   Content-Length or as soon as a chunked body passes that, closing the connection after the
 *   answer;
 * - in a media type some endpoint takes: the platform decodes any media type it recognises (XML
 *   or form data as raw bytes or string pairs), so a body that is not JSON could decode as an
 *   empty payload where every field is optional;
 * - valid UTF-8 (a JSON body);
 * - JSON nested at most `maxJsonDepth` deep: deeper JSON exhausts the stack while a decode error
 *   is formatted.
 * These are refused with a 422 in the area's shape, naming `body`.
 *
 * A JSON field an endpoint declares as carrying a file (`DataUriField`: the MIF import's
 * `mif.file`, the patient, claim and content document uploads' `file`) is taken out of the body and decoded as the body arrives (./StreamedJson.ts): the
 * rest of the body is checked and handed on as any other, the field's file through
 * `ReceivedDataUris`.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpMethod,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, Stream } from "effect"
import { isUtf8 } from "node:buffer"
import type { IncomingMessage } from "node:http"
import { Api } from "../../Api/Api.js"
import { type BodyLimitValue, smallBodyBytes } from "../../Api/BodyLimit.js"
import { type Area, payloadTooLarge, validationFailure } from "../../Api/Errors.js"
import { AppConfig } from "../../Services/AppConfig.js"
import { ReceivedDataUris } from "../../Services/DataUri.js"
import { apiRoutes, type DataUriFieldRoute } from "./ApiRoutes.js"
import { errorResponse } from "./Errors.js"
import { jsonBodyScanner } from "./StreamedJson.js"

/** Media types some endpoint of an Api takes a body in (`application/json` today). */
export const mediaTypesOf = (api: HttpApi.HttpApi.Any): ReadonlySet<string> => {
  const types = new Set<string>()
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ payloads }) => payloads.forEach((_, mediaType) => types.add(mediaType.toLowerCase()))
  })
  return types
}

export const declaredMediaTypes: ReadonlySet<string> = mediaTypesOf(Api)

/** The endpoint a request goes to, as far as the body checks need it. */
export interface BodyRoute {
  /** Bytes the body may have. */
  readonly limit: number
  /** The endpoint's path as the router writes it (`/v1/users/:id`); undefined when none matches. */
  readonly route: string | undefined
  /** The area whose error shapes a refusal takes (./ApiRoutes.ts). */
  readonly area: Area
  /**
   * Media types the endpoint takes, when it declares a body: a JSON endpoint refuses a form body
   * (which would decode as string pairs) and the form-encoded webhooks refuse JSON.
   */
  readonly mediaTypes?: ReadonlySet<string> | undefined
  /** The JSON field that carries a file as a data URI, decoded as the body arrives (`DataUriField`). */
  readonly dataUriField?: DataUriFieldRoute | undefined
}

/**
 * The endpoint of a request to an Api and its body limit in bytes: the limit the endpoint
 * declares (`BodyLimit` on the endpoint or its group), else `smallBodyBytes`; never above
 * MAX_BODY_BYTES.
 */
export const bodyRoutesOf = (api: HttpApi.HttpApi.Any) => {
  const routes = apiRoutes(api)
  return (method: string, url: string, maxBodyBytes: number): BodyRoute => {
    const best = routes.find(method, url)
    const declared = Option.getOrElse(best?.limit ?? Option.none(), (): BodyLimitValue => smallBodyBytes)
    return {
      limit: declared === "files" ? maxBodyBytes : Math.min(declared, maxBodyBytes),
      route: best?.path,
      area: best?.area ?? routes.areaOf(method, url),
      mediaTypes: best === undefined || best.mediaTypes.size === 0 ? undefined : best.mediaTypes,
      dataUriField: Option.getOrUndefined(best?.dataUriField ?? Option.none())
    }
  }
}

/**
 * A refusal answered here, before the router: the request span gets the endpoint's route as the
 * router would have set it, so the span name and access log say which endpoint was refused
 * (src/Layers/Http/Observability.ts reads it), not "unmatched".
 */
const withRoute = (route: string | undefined) => <E, R>(answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  route === undefined
    ? answer
    : Effect.zipLeft(answer, Effect.ignore(Effect.map(Effect.currentSpan, (span) => span.attribute("http.route", route))))

/** Far deeper than any payload of the Api; far shallower than what exhausts the stack. */
export const maxJsonDepth = 64

/**
 * Deepest nesting of arrays and objects in a JSON text, read without parsing it. Strings are
 * skipped with `indexOf` (a 70 MB base64 file in a MIF import took 160 ms character by character,
 * all of it holding the event loop; ~10 ms so).
 */
export const jsonDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      let quote = text.indexOf("\"", i + 1)
      while (quote !== -1) {
        let backslashes = 0
        while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
        if (backslashes % 2 === 0) break
        quote = text.indexOf("\"", quote + 1)
      }
      if (quote === -1) break
      i = quote
    } else if (c === 0x5b || c === 0x7b) {
      deepest = Math.max(deepest, ++depth)
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return deepest
}

export const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  HttpMethod.hasBody(request.method) &&
  (Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined)

const refuse = (area: Area, message: string) => errorResponse(validationFailure(area, { body: [message] }))

/**
 * How far past its limit a body is still read (and dropped) before the 413 is sent: the whole body
 * then arrived, the connection stays open, and a client that writes its body before it reads gets
 * the answer. Past this (a body twice its limit, or 16 MiB over it), the answer goes at once.
 */
const drainLimit = (limit: number) => limit + Math.min(limit, 16 * 1024 * 1024)

/** 413 once the whole body was read: the connection stays usable. */
const tooLargeRead = (area: Area) => errorResponse(payloadTooLarge(area))

/**
 * 413 before the body ends, and the connection closes once it is sent: the client may still be
 * sending a body we will not read. Node discards what arrives until then, but once the socket is
 * closed more data gets a reset, which a client still writing may see instead of the answer
 * (hence `drainLimit` for bodies only somewhat too large).
 */
const tooLarge = (area: Area) => Effect.map(tooLargeRead(area), HttpServerResponse.setHeader("connection", "close"))

type ReadOutcome<A> = { readonly _tag: "Read"; readonly body: A } | { readonly _tag: "TooLarge"; readonly whole: boolean }

/** Where the chunks of a body go as they arrive (within its limit), and what it was at its end. */
interface BodySink<A> {
  readonly push: (chunk: Buffer) => void
  readonly finish: () => A
}

/** The body's bytes, whole. */
const bytesSink = (): BodySink<Buffer> => {
  const chunks: Array<Buffer> = []
  let size = 0
  return {
    push: (chunk) => {
      chunks.push(chunk)
      size += chunk.length
    },
    finish: () => Buffer.concat(chunks, size)
  }
}

/** The 413 for a body found too large: the connection kept only when the whole body was read. */
const tooLargeAnswer = (area: Area, whole: boolean) => (whole ? tooLargeRead(area) : tooLarge(area))

/**
 * Reads a Node request body up to `limit` bytes into `sink` (chunk by chunk, as they arrive).
 * Past the limit it keeps reading without keeping anything, to the body's end (TooLarge, whole)
 * unless `drainLimit` is passed first (TooLarge, not whole): then, unlike the platform's reader,
 * which destroys the request (and with it the socket), it lets the rest flow away unread, so a 413
 * can still be delivered.
 */
const readBody = <A>(
  request: HttpServerRequest.HttpServerRequest,
  incoming: IncomingMessage,
  limit: number,
  sink: BodySink<A>
) =>
  Effect.async<ReadOutcome<A>, HttpServerError.RequestError>((resume) => {
    const drainTo = drainLimit(limit)
    let size = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
      incoming.off("aborted", onAborted)
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size <= limit) return sink.push(chunk)
      if (size <= drainTo) return
      stop()
      // Flowing with no listener: what still arrives is dropped until the connection closes.
      incoming.resume()
      resume(Effect.succeed({ _tag: "TooLarge", whole: false }))
    }
    function onEnd() {
      stop()
      if (size > limit) return resume(Effect.succeed({ _tag: "TooLarge", whole: true }))
      try {
        resume(Effect.succeed({ _tag: "Read", body: sink.finish() }))
      } catch (cause) {
        resume(Effect.die(cause))
      }
    }
    function onError(cause: unknown) {
      stop()
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Transport", cause })))
    }
    function onAborted() {
      onError(new Error("request aborted"))
    }
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    incoming.once("aborted", onAborted)
    return Effect.sync(stop)
  })

/**
 * The request with its JSON body already read: the Api's decoders (`text`, `json`,
 * `urlParamsBody`) see this text. Everything else (headers, address, `modify`) is the original
 * request's. Only the text is kept (the bytes are its UTF-8 again, made if ever asked for): the
 * request lives as long as its handler, and a MIF import's 23 MB body was held twice.
 */
const withReadBody = (request: HttpServerRequest.HttpServerRequest, text: string): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    text: { value: Effect.succeed(text) },
    arrayBuffer: {
      value: Effect.sync(() => {
        const bytes = Buffer.from(text, "utf8")
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
      })
    },
    stream: { value: Stream.suspend(() => Stream.succeed(new Uint8Array(Buffer.from(text, "utf8")))) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) => withReadBody(request.modify(options), text)
    }
  }) as HttpServerRequest.HttpServerRequest

/**
 * Runs `app` when the body of `request` is acceptable (see the module comment); the body (JSON, or
 * the webhooks' form bodies) is read here, within `limit`, and handed to the app already read: a
 * body over its limit is refused here, so the platform's reader never meets one.
 */
export const checkRequestBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  { area, dataUriField, limit, mediaTypes: routeMediaTypes, route }: BodyRoute,
  apiMediaTypes: ReadonlySet<string>,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  if (!hasBody(request)) return app
  const answer = withRoute(route)
  const declared = Number(request.headers["content-length"] ?? 0)
  if (declared > drainLimit(limit)) return answer(tooLarge(area))
  if (declared > limit) {
    // Read to its end and dropped, so the client is done sending when the 413 comes.
    const drained = readBody(request, NodeHttpServerRequest.toIncomingMessage(request), limit, bytesSink())
    return answer(Effect.flatMap(Effect.either(drained), (outcome) =>
      tooLargeAnswer(area, outcome._tag === "Right" && outcome.right._tag === "TooLarge" && outcome.right.whole)))
  }
  // Without a Content-Type the platform reads JSON.
  const mediaType = (request.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase()
  const mediaTypes = routeMediaTypes ?? apiMediaTypes
  if (!mediaTypes.has(mediaType)) return answer(refuse(area, `must be sent as ${[...mediaTypes].join(" or ")}`))
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  // The client went away mid-body: nobody will read the answer.
  const unreadable = Effect.catchAll(() => Effect.succeed({ _tag: "Unreadable" } as const))
  /** The app with the body text it decodes. */
  const withBody = (text: string, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, withReadBody(request, text)),
      HttpIncomingMessage.withMaxBodySize(Option.some(limit))
    )
  /** The app with the JSON text it decodes, once that is known not to be nested too deeply. */
  const withText = (text: string, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    jsonDepth(text) > maxJsonDepth
      ? answer(refuse(area, `is nested too deeply (more than ${maxJsonDepth} levels)`))
      : withBody(text, app)
  if (dataUriField !== undefined) {
    // The field's file is decoded as it arrives; the rest of the body is read as any other.
    const scanned = readBody(request, incoming, limit, jsonBodyScanner(dataUriField.path, declared, dataUriField.maxCharacters)).pipe(unreadable)
    return Effect.flatMap(scanned, (outcome) => {
      if (outcome._tag === "Unreadable") return answer(refuse(area, "could not be read"))
      if (outcome._tag === "TooLarge") return answer(tooLargeAnswer(area, outcome.whole))
      if (!outcome.body.utf8) return answer(refuse(area, "is not valid UTF-8"))
      return withText(outcome.body.rest.toString("utf8"), Effect.provideService(app, ReceivedDataUris, outcome.body.dataUris))
    })
  }
  const read = readBody(request, incoming, limit, bytesSink()).pipe(unreadable)
  return Effect.flatMap(read, (outcome) => {
    if (outcome._tag === "Unreadable") return answer(refuse(area, "could not be read"))
    if (outcome._tag === "TooLarge") return answer(tooLargeAnswer(area, outcome.whole))
    // A form body (the telephony webhooks) is percent-encoded: the platform parses it as ever.
    if (mediaType !== "application/json") return withBody(outcome.body.toString("utf8"), app)
    // Decoding would turn each invalid sequence into U+FFFD and store it as if sent.
    if (!isUtf8(outcome.body)) return answer(refuse(area, "is not valid UTF-8"))
    return withText(outcome.body.toString("utf8"), app)
  })
}

/**
 * The request body checks as a middleware of `api`'s server: every body within its endpoint's
 * limit (MAX_BODY_BYTES at most), in a media type the Api takes, not nested absurdly deep.
 */
export const bodyChecksFor = (api: HttpApi.HttpApi.Any) => {
  const routeOf = bodyRoutesOf(api)
  const mediaTypes = mediaTypesOf(api)
  return HttpApiBuilder.middleware(
    Effect.map(AppConfig, (config) => (app) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        // Most requests carry no body: leave them untouched (this runs on every request). Parts of
        // disk multipart uploads stream to disk under their signed link's own limit.
        hasBody(request) && !request.url.startsWith("/objects/uploads/")
          ? checkRequestBody(request, routeOf(request.method, request.url, config.maxBodyBytes), mediaTypes, app)
          : app))
  )
}

/** The body checks of the Api this service serves. */
export const BodyLimitLive = bodyChecksFor(Api)
