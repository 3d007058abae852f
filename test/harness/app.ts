/**
 * The app under the harness: the same layers as `TestApp` (real HttpApi on an in-process server,
 * in-memory telephony, mail and object store) on a database the caller provides, so the bounded
 * run inside vitest and the long campaign outside it serve the same app.
 *
 * The server is the app's own (`nodeServer`, with its keep-alive timeout) on a free port, not one
 * with Node's defaults. With Node's 5 s, fetch (in this same process) reused a connection idle up to
 * 3 s, and the server closed it after 6 s: an event-loop stall of 3 s on a loaded machine, between
 * the request's write and the server's read, let the server's idle timer fire first and reset the
 * connection (ECONNRESET, no response). With the app's 65 s a connection would first idle a minute.
 */
import { Effect, Layer, Option, Redacted, type Scope, TestClock } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { AppConfig, type AppSettings } from "../../src/Services/AppConfig.js"
import { appConfig } from "../../src/Layers/Config.js"
import { nodeServer } from "../../src/Layers/Http/Shutdown.js"
import { backendLayer, httpLayer } from "../../src/Layers/Main.js"
import { MemoryMailer } from "../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../src/Layers/MemoryTelephony.js"
import { MemoryPush } from "../../src/Layers/MemoryPush.js"
import { harnessPublicBaseUrl, harnessTwilioAuthToken } from "./signature.js"

const dataDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "cc-harness-data-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/**
 * The app's largest request body here (MAX_BODY_BYTES): small, so oversize mode proves a file
 * field's refusal (413) with a few MB rather than uploading the hundreds of MB its maxLength allows.
 */
export const harnessMaxBodyBytes = 4 * 1024 * 1024

/** Settings of the app under test: its database, a temporary data directory, no external services. */
const harnessConfig = (databaseUrl: Effect.Effect<string, never, Scope.Scope>) =>
  Layer.scoped(AppConfig, Effect.gen(function*() {
    const url = yield* databaseUrl
    const dataDir = yield* dataDirectory
    const base = yield* Effect.orDie(appConfig)
    return {
      ...base,
      port: 0,
      host: "127.0.0.1",
      databaseUrl: Option.some(Redacted.make(url)),
      dataDir,
      dbPoolSize: 8,
      publicBaseUrl: harnessPublicBaseUrl,
      maxBodyBytes: harnessMaxBodyBytes,
      bootstrapAdminEmail: Option.none(),
      bootstrapAdminPassword: Option.none(),
      otelEndpoint: Option.none(),
      s3: Option.none(),
      smtpUrl: Option.none(),
      // Webhooks are signed with this token (signature.ts); telephony itself is the in-memory layer.
      twilio: Option.some({
        accountSid: "AC00000000000000000000000000000000",
        authToken: Redacted.make(harnessTwilioAuthToken),
        fromNumber: "+15550001111",
        apiBaseUrl: Option.none(),
        messagingServiceSid: Option.none(),
        smsAutoReply: Option.none()
      })
    } satisfies AppSettings
  }))

export interface HarnessAppOptions {
  /** A migrated (or empty: the app migrates at start) database of the run's own; released after. */
  readonly databaseUrl: Effect.Effect<string, never, Scope.Scope>
  /** Tracing and logging of the app (the harness's telemetry capture). */
  readonly observability: Layer.Layer<never>
  /**
   * Under @effect/vitest the layer shares the tests' TestClock, which the server reads: start it
   * at the real time. Outside vitest the real clock is used.
   */
  readonly underTestClock: boolean
}

export const HarnessApp = (options: HarnessAppOptions) => {
  const app = httpLayer(nodeServer)
  const clocked = options.underTestClock ? app.pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now())))) : app
  return clocked.pipe(
    Layer.provideMerge(backendLayer),
    Layer.provideMerge(Layer.mergeAll(MemoryTelephony.layer, MemoryObjectStore.layer, MemoryMailer.layer, MemoryPush.layer)),
    Layer.provideMerge(harnessConfig(options.databaseUrl)),
    Layer.provide(options.observability)
  )
}
