/**
 * Headers every response carries, and the browser's cross-origin rules:
 * - `Cache-Control: no-store`: responses hold personal health data, which must not sit in shared
 *   or browser caches; `X-Content-Type-Options: nosniff`; `Referrer-Policy: no-referrer`;
 * - `Content-Security-Policy`: JSON needs no capabilities (`default-src 'none'`); the docs page
 *   gets exactly what the Scalar page needs: its own inline scripts by hash, WebAssembly (its
 *   bundled xxhash; JavaScript eval stays off), inline styles, same-origin requests ("try it"),
 *   data: images;
 * - `Strict-Transport-Security` when PUBLIC_BASE_URL is https;
 * - `Connection: close` while the server drains for shutdown, so keep-alive clients reconnect
 *   to another instance instead of sending more requests here.
 * A header a route already set (the signed-download route's sandbox CSP) is kept.
 *
 * CORS is the platform's middleware (`HttpMiddleware.cors`), configured from CORS_ORIGINS.
 */
import { HttpApp, HttpMiddleware, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import type { AppSettings } from "../../Services/AppConfig.js"

export const docsPath = "/docs"

const apiCsp = "default-src 'none'; frame-ancestors 'none'"

/** One year; no `includeSubDomains`: other hosts of the clinic's domain are not ours to pin. */
const hsts = "max-age=31536000"

/** Inline scripts the browser runs (not `src=` ones, not JSON data blocks), as CSP hash sources. */
export const inlineScriptHashes = (html: string): Array<string> =>
  [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter(([, attributes]) => !/\bsrc\s*=/i.test(attributes!) && !/\btype\s*=\s*["']?application\/json/i.test(attributes!))
    .map(([, , body]) => `'sha256-${createHash("sha256").update(body!, "utf8").digest("base64")}'`)

export const docsCspFor = (html: string) =>
  [
    "default-src 'none'",
    // Scalar hashes the document with xxhash-wasm: without 'wasm-unsafe-eval' the page never
    // renders past its loading skeleton (checked in headless Chromium). It allows compiling
    // WebAssembly only, not eval() or new Function().
    `script-src ${inlineScriptHashes(html).join(" ")} 'wasm-unsafe-eval'`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

/** The docs page is built once, so its policy is computed once per body. */
const docsCspCache = new WeakMap<object, string>()
const docsCsp = (response: HttpServerResponse.HttpServerResponse): string => {
  const body = response.body
  if (body._tag !== "Uint8Array") return apiCsp
  let csp = docsCspCache.get(body.body)
  if (csp === undefined) {
    csp = docsCspFor(new TextDecoder().decode(body.body))
    docsCspCache.set(body.body, csp)
  }
  return csp
}

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

export interface ResponseHeaderOptions {
  readonly https: boolean
  /** True once shutdown has begun. */
  readonly draining: () => boolean
}

export const addResponseHeaders = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  options: ResponseHeaderOptions
): HttpServerResponse.HttpServerResponse => {
  // One copy of the response per request: collect what is missing, then set it all at once.
  const present = response.headers
  const added: Record<string, string> = {}
  if (!("cache-control" in present)) added["cache-control"] = "no-store"
  if (!("x-content-type-options" in present)) added["x-content-type-options"] = "nosniff"
  if (!("referrer-policy" in present)) added["referrer-policy"] = "no-referrer"
  if (!("content-security-policy" in present)) {
    added["content-security-policy"] = pathOf(request.url) === docsPath ? docsCsp(response) : apiCsp
  }
  if (options.https && !("strict-transport-security" in present)) added["strict-transport-security"] = hsts
  if (options.draining()) added["connection"] = "close"
  return HttpServerResponse.setHeaders(response, added)
}

/**
 * Every response the server of `layer` sends gets the headers above: a pre-response handler set
 * once for the server's runtime, which every request fiber inherits, rather than one appended to
 * each request's fiber-local state. Error responses the server makes itself get them too.
 */
export const withResponseHeaders = (options: ResponseHeaderOptions) =>
<A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => {
  const handler: HttpApp.PreResponseHandler = (request, response) => Effect.succeed(addResponseHeaders(request, response, options))
  return Layer.locallyWith(layer, HttpApp.currentPreResponseHandlers, (current) =>
    Option.some(Option.isNone(current)
      ? handler
      : (request, response) => Effect.flatMap(current.value(request, response), (changed) => handler(request, changed))))
}

/** Methods the Api uses; browsers send OPTIONS preflights before the non-simple ones. */
const corsMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"]

/**
 * CORS for the origins in CORS_ORIGINS; none configured: no middleware, so browsers on other
 * origins are refused (a preflight finds no route). Origins are matched exactly and echoed,
 * never `*`. Tokens travel in `X-User-Token`, not cookies, so credentials stay off.
 */
export const corsFor = (settings: Pick<AppSettings, "corsOrigins">) => {
  if (settings.corsOrigins.length === 0) return <E, R>(app: HttpApp.Default<E, R>) => app
  const allowed = new Set(settings.corsOrigins)
  return HttpMiddleware.cors({
    // A predicate, so a refused origin gets no Access-Control-Allow-Origin at all.
    allowedOrigins: (origin) => allowed.has(origin),
    allowedMethods: corsMethods,
    // Trace context as Effect's HttpClient sends it by default (W3C `traceparent`/`tracestate`,
    // and `b3`): the server span links to a frontend's span (./Observability.ts), and its preflights pass.
    allowedHeaders: ["Content-Type", "X-User-Token", "traceparent", "tracestate", "b3"],
    // Readable by the frontend beyond the safelisted ones: when to retry after 429/503; the ETag of
    // a video part PUT to the disk store's signed route (docs/videos.md).
    exposedHeaders: ["Retry-After", "ETag"],
    // Browsers cap it (Chrome at 2 hours); a preflight per endpoint per 10 minutes is cheap.
    maxAge: 600,
    credentials: false
  })
}
