/**
 * `HttpApiBuilder.serve`, re-created so that request fibers start from `requestContext`, with the
 * app's middleware around every request (outermost first): span, access log and in-flight count;
 * CORS (whose preflight answers before any route). The headers every response carries are added
 * as it is sent.
 */
import { Etag, FileSystem, HttpApiBuilder, HttpPlatform, type HttpRouter, HttpServer, Path } from "@effect/platform"
import { Context, Effect, Function, Layer, Scope } from "effect"
import { AppConfig } from "../../Services/AppConfig.js"
import { observeRequests } from "./Observability.js"
import { corsFor, withResponseHeaders } from "./ResponseHeaders.js"
import { currentTracker } from "./Shutdown.js"

/**
 * What a request fiber starts with: the services the server's layer needs and the ones the
 * platform may use while answering (`HttpRouter.DefaultServices`). Handlers bring the services
 * they were built with (the builder merges them in), and routes and middleware take theirs when
 * they are built, so nothing else is read from a request's context. Every `provideService`,
 * scope and span on the way copies that context: with all of the app's services in it, that
 * was most of a bodiless request's cost.
 */
const requestContext = (context: Context.Context<HttpServer.HttpServer | Scope.Scope | HttpRouter.HttpRouter.DefaultServices>) =>
  Context.pick(HttpServer.HttpServer, Scope.Scope, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)(context)

export const serveLive = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  const tracker = yield* currentTracker
  const https = config.publicBaseUrl.startsWith("https:")
  const middleware = Function.flow(
    corsFor(config),
    observeRequests({ trustedProxies: config.trustedProxies, tracker })
  )
  return Layer.scopedDiscard(Effect.gen(function*() {
    const app = yield* HttpApiBuilder.httpApp
    const server = yield* HttpServer.HttpServer
    yield* Effect.mapInputContext(server.serve(app, middleware), requestContext)
  })).pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]),
    withResponseHeaders({ https, draining: () => tracker.draining })
  )
}))
