/**
 * One server span and one access-log line per request, named and attributed by the OpenTelemetry
 * HTTP semantic conventions: span `{method} {route}` (`GET /v1/users/{id}`; just `{method}` when
 * no route matched), attributes `http.request.method`, `http.route`, `http.response.status_code`,
 * `url.scheme`, `server.address`, `server.port`, `user_agent.original`. The access-log line
 * carries the same names. Replaces the platform's tracer, which records the query string and
 * every header: queries can carry search terms and emails, and span attributes hold ids only.
 * The route is known once the router matched (it sets `http.route` on the span), or once the
 * body checks refused a body for a known endpoint (./RequestBody.ts sets it the same way), so the
 * span is renamed when the request ends.
 *
 * A caller's trace context (W3C `traceparent`, or `b3`, as Effect's HttpClient sends it) becomes a
 * link of the server span, not its parent: anyone may send the header, and the trace id is ours to
 * give (logs and audit entries carry it), so a client can follow its request into our trace but
 * cannot place our spans and audit rows in a trace it chose.
 */
import { HttpMiddleware, HttpServerError, HttpServerRequest, HttpTraceContext, type HttpApp } from "@effect/platform"
import { Effect, Exit, FiberRef, type Layer, LogLevel, Option, type Tracer } from "effect"
import type { TrustedProxies } from "../../Services/AppConfig.js"
import { requestOrigin } from "./Forwarded.js"
import type { RequestTracker } from "./Shutdown.js"

/** The router's `/v1/users/:id` as the OpenAPI document writes it: `/v1/users/{id}`. */
export const routeTemplate = (route: string): string => route.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

/** User agents are free text: bounded, so a client cannot fill the telemetry backend. */
const maxUserAgent = 256

/** How @effect/opentelemetry marks its spans (`span.span` is the OpenTelemetry span). */
const otelSpanTypeId = Symbol.for("@effect/opentelemetry/Tracer/OtelSpan")

/**
 * Renames an exported span; Effect's own spans (nothing exported) keep their name, which nobody
 * reads, at no cost per request.
 */
const renameSpan = (span: Tracer.Span, name: string) => {
  if (otelSpanTypeId in span) (span as unknown as { readonly span: { updateName(name: string): void } }).span.updateName(name)
}

export interface ObserveOptions {
  readonly trustedProxies: TrustedProxies
  readonly tracker: RequestTracker
}

export const observeRequests = (options: ObserveOptions) => <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.withFiberRuntime<any, E, R | HttpServerRequest.HttpServerRequest>((fiber) => {
    const request = fiber.currentContext.unsafeMap.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const origin = requestOrigin(request, options.trustedProxies)
    const [address, port] = splitHost(origin.host)
    const userAgent = request.headers["user-agent"]?.slice(0, maxUserAgent)
    const caller = HttpTraceContext.fromHeaders(request.headers)
    const links: ReadonlyArray<Tracer.SpanLink> = Option.isSome(caller)
      ? [{ _tag: "SpanLink", span: caller.value, attributes: {} }]
      : []
    return Effect.useSpan(request.method, { kind: "server", captureStackTrace: false, links }, (span) => {
      const common: Record<string, string | number> = {
        "http.request.method": request.method,
        "url.scheme": origin.scheme
      }
      if (address !== undefined) common["server.address"] = address
      if (port !== undefined) common["server.port"] = port
      if (userAgent !== undefined) common["user_agent.original"] = userAgent
      for (const [key, value] of Object.entries(common)) span.attribute(key, value)
      options.tracker.enter()
      return app.pipe(
        Effect.onExit((exit) => {
          options.tracker.leave()
          const status = Exit.isSuccess(exit) ? exit.value.status : HttpServerError.exitResponse(exit).status
          span.attribute("http.response.status_code", status)
          const matched = span.attributes.get("http.route")
          const route = typeof matched === "string" ? routeTemplate(matched) : undefined
          if (route !== undefined) span.attribute("http.route", route)
          if (route !== undefined) renameSpan(span, `${request.method} ${route}`)
          // Building the access-log line costs more than the check: skip it when Info is off.
          if (LogLevel.lessThan(LogLevel.Info, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) return Effect.void
          return Effect.logInfo("request").pipe(
            Effect.annotateLogs({
              ...common,
              "http.route": route ?? "unmatched",
              "http.response.status_code": status,
              duration_ms: Math.round((performance.now() - started) * 100) / 100
            })
          )
        }),
        Effect.withParentSpan(span)
      )
    })
  })

/** `api.example.org:8443` → address and port; a bracketed IPv6 host loses its brackets. */
const splitHost = (host: string | undefined): [string | undefined, number | undefined] => {
  if (host === undefined) return [undefined, undefined]
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host)
  if (match === null) return [undefined, undefined]
  return [match[1]!.replace(/^\[|\]$/g, ""), match[2] === undefined ? undefined : Number(match[2])]
}

/** The platform tracer is replaced by `observeRequests`. */
export const withoutPlatformTracer = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  HttpMiddleware.withTracerDisabledWhen(layer, () => true)
