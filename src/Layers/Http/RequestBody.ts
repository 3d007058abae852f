/**
 * What a request body must be before the Api decodes it. The platform decodes any media type it
 * recognises (XML or form data as raw bytes or string pairs), so a body that is not JSON could
 * decode as an empty payload where every field is optional; and JSON nested thousands deep
 * exhausts the stack while a decode error is formatted. Both are refused with a 422 in the
 * area's shape, naming `body`.
 */
import { HttpApi, HttpMethod, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../Api/Api.js"
import { validationFailure } from "../../Api/Errors.js"
import { areaOfPath, errorResponse } from "./Errors.js"

/** Media types some endpoint of the Api takes a body in (`application/json` today). */
export const declaredMediaTypes: ReadonlySet<string> = (() => {
  const types = new Set<string>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ payloads }) => payloads.forEach((_, mediaType) => types.add(mediaType.toLowerCase()))
  })
  return types
})()

/** Far deeper than any payload of the Api; far shallower than what exhausts the stack. */
export const maxJsonDepth = 64

/** Deepest nesting of arrays and objects in a JSON text, read without parsing it. */
export const jsonDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
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

const refuse = (request: HttpServerRequest.HttpServerRequest, message: string) =>
  errorResponse(validationFailure(areaOfPath(request.url), { body: [message] }))

/**
 * Runs `app` when the body is acceptable. Reads a JSON body (the platform caches it for the
 * Api), so call it where the body size limit applies.
 */
export const checkRequestBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  if (!hasBody(request)) return app
  // Without a Content-Type the platform reads JSON.
  const mediaType = (request.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase()
  if (!declaredMediaTypes.has(mediaType)) return refuse(request, `must be sent as ${[...declaredMediaTypes].join(" or ")}`)
  if (mediaType !== "application/json") return app
  return Effect.flatMap(Effect.either(request.text), (text) =>
    text._tag === "Right" && jsonDepth(text.right) > maxJsonDepth
      ? refuse(request, `is nested too deeply (more than ${maxJsonDepth} levels)`)
      : app)
}
