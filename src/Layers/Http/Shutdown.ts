/**
 * Graceful shutdown. On SIGTERM the runtime closes the layers in reverse order of building, so
 * the HTTP side goes first: stop accepting connections, let the requests in flight finish (at
 * most SHUTDOWN_GRACE_SECONDS, then cut them), and only then close the pool and the embedded
 * PostgreSQL. One log line at the end says how long it took and how many requests it drained.
 */
import { Clock, Context, Deferred, Duration, Effect, FiberId, Layer, Option } from "effect"
import { NodeHttpServer } from "@effect/platform-node"
import { createServer } from "node:http"
import type * as Http from "node:http"
import { AppConfig } from "../../Services/AppConfig.js"

export interface DrainReport {
  /** Requests in flight when the drain began, or started on open connections during it, that finished. */
  readonly drained: number
  /** Requests still running at the end of the grace period: their connections were closed. */
  readonly cut: number
}

/** Counts requests in flight; `drain` waits until none are left. */
export class RequestTracker {
  private active = 0
  private finishedWhileDraining = 0
  private idle: Deferred.Deferred<void> | undefined
  shutdownStartedAt: number | undefined
  report: DrainReport | undefined

  get draining(): boolean {
    return this.idle !== undefined
  }

  get inFlight(): number {
    return this.active
  }

  enter(): void {
    this.active++
  }

  leave(): void {
    this.active--
    if (this.idle === undefined) return
    this.finishedWhileDraining++
    if (this.active === 0) Deferred.unsafeDone(this.idle, Effect.void)
  }

  /** Waits for every request in flight to finish, at most `grace`. */
  drain(grace: Duration.DurationInput): Effect.Effect<DrainReport> {
    return Effect.suspend(() => {
      const idle = Deferred.unsafeMake<void>(FiberId.none)
      this.idle = idle
      if (this.active === 0) Deferred.unsafeDone(idle, Effect.void)
      return Deferred.await(idle).pipe(
        // Finalizers run uninterruptibly: the timeout must be able to interrupt the wait.
        Effect.interruptible,
        Effect.timeoutOption(grace),
        Effect.map(() => {
          const report = { drained: this.finishedWhileDraining, cut: this.active }
          this.report = report
          return report
        })
      )
    })
  }
}

export class InFlightRequests extends Context.Tag("app/InFlightRequests")<InFlightRequests, RequestTracker>() {}

/** The Node server to stop accepting on; `nodeServer` in Main provides it. */
export class NodeServer extends Context.Tag("app/NodeServer")<NodeServer, Http.Server>() {}

/**
 * Node's server timeouts from HTTP_KEEP_ALIVE_TIMEOUT_MS. The wait for a request's headers stays
 * a second above the keep-alive timeout, as load balancer guides advise (Node 10.15 counted it
 * across a kept-alive connection's idle time and cut requests sent late on it). Node refuses a
 * header wait longer than the whole request's, so that one is its default 300 s or the header wait.
 */
export const serverTimeouts = (keepAliveTimeoutMs: number) => {
  const headersTimeout = keepAliveTimeoutMs + 1_000
  return { keepAliveTimeout: keepAliveTimeoutMs, headersTimeout, requestTimeout: Math.max(300_000, headersTimeout) }
}

/** The Node server, also as `NodeServer` so shutdown can stop it accepting connections. */
export const nodeServer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const server = createServer(serverTimeouts(config.keepAliveTimeoutMs))
  return Layer.merge(
    NodeHttpServer.layer(() => server, { port: config.port, host: config.host }),
    Layer.succeed(NodeServer, server)
  )
}))

/**
 * Built first among the parts of the shutdown: its finalizer runs last, after the database
 * closed, and logs the one line. Provides the tracker the HTTP side counts requests with.
 */
export const ShutdownReportLive = Layer.scoped(
  InFlightRequests,
  Effect.gen(function*() {
    const tracker = new RequestTracker()
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        if (tracker.shutdownStartedAt === undefined) return
        const now = yield* Clock.currentTimeMillis
        yield* Effect.logInfo("shutdown complete").pipe(Effect.annotateLogs({
          "shutdown.duration_ms": now - tracker.shutdownStartedAt,
          "shutdown.requests_drained": tracker.report?.drained ?? 0,
          "shutdown.requests_cut": tracker.report?.cut ?? 0
        }))
      })
    )
    return tracker
  })
)

/**
 * Built after the HTTP server: its finalizer runs first on shutdown. Closing the listener stops
 * new connections (and closes idle keep-alive ones); requests already in flight, and any sent on
 * their connections meanwhile (answered with `Connection: close`), run to completion.
 */
export const GracefulDrainLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const tracker = yield* InFlightRequests
    const server = yield* NodeServer
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        tracker.shutdownStartedAt = yield* Clock.currentTimeMillis
        // The callback fires once every connection is gone; the platform's own finalizer waits for it.
        server.close()
        server.closeIdleConnections()
        yield* Effect.logInfo("shutting down: no new connections, draining requests in flight").pipe(
          Effect.annotateLogs({ "http.server.active_requests": tracker.inFlight })
        )
        const report = yield* tracker.drain(Duration.seconds(config.shutdownGraceSeconds))
        if (report.cut > 0) server.closeAllConnections()
        else server.closeIdleConnections()
      })
    )
  })
)

/** The tracker the HTTP layer counts with: the shared one when provided, else its own. */
export const currentTracker = Effect.map(Effect.serviceOption(InFlightRequests), Option.getOrElse(() => new RequestTracker()))
