/**
 * One server span and one access-log line per request. Replaces the platform's tracer, which
 * records the query string and every header: queries can carry search terms and emails, and
 * span attributes must hold ids only. The route pattern is set on the span by the router.
 */
import { HttpMiddleware, HttpServerError, HttpServerRequest, type HttpApp } from "@effect/platform"
import { Effect, Exit, FiberRef, type Layer, LogLevel } from "effect"

export const observeRequests = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.withFiberRuntime<any, E, R | HttpServerRequest.HttpServerRequest>((fiber) => {
    const request = fiber.currentContext.unsafeMap.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
    const started = performance.now()
    return Effect.useSpan(`http.server ${request.method}`, { kind: "server", captureStackTrace: false }, (span) => {
      span.attribute("http.request.method", request.method)
      return app.pipe(
        Effect.onExit((exit) => {
          const status = Exit.isSuccess(exit) ? exit.value.status : HttpServerError.exitResponse(exit).status
          span.attribute("http.response.status_code", status)
          // Building the access-log line costs more than the check: skip it when Info is off.
          if (LogLevel.lessThan(LogLevel.Info, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) return Effect.void
          return Effect.logInfo("request").pipe(
            Effect.annotateLogs({
              "http.method": request.method,
              "http.route": String(span.attributes.get("http.route") ?? "unmatched"),
              "http.status": status,
              duration_ms: Math.round((performance.now() - started) * 100) / 100
            })
          )
        }),
        Effect.withParentSpan(span)
      )
    })
  })

/** The platform tracer is replaced by `observeRequests`. */
export const withoutPlatformTracer = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  HttpMiddleware.withTracerDisabledWhen(layer, () => true)
