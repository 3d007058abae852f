/**
 * The real HttpApi served in-process on a random port (`NodeHttpServer.layerTest`), on a fresh
 * database of the test file's own, with in-memory telephony, storage and mail.
 */
import { HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, FiberRef, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Api } from "../../src/Api/Api.js"
import { AppConfig, type AppSettings } from "../../src/Services/AppConfig.js"
import { appConfig } from "../../src/Layers/Config.js"
import { backendLayer, httpLayer } from "../../src/Layers/Main.js"
import { MemoryMailer } from "../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../src/Layers/MemoryTelephony.js"
import { MemoryPush } from "../../src/Layers/MemoryPush.js"
import { freshDatabase } from "./database.js"
import { admin } from "./fixtures.js"

export { admin }

export const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "cc-api-data-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Settings of a test app: its own database and data directory, a known bootstrap admin. */
export const testConfig = (overrides: Partial<AppSettings> = {}) =>
  Layer.scoped(
    AppConfig,
    Effect.gen(function*() {
      const database = yield* freshDatabase()
      const dataDir = yield* tempDir
      const base = yield* Effect.orDie(appConfig)
      return {
        ...base,
        databaseUrl: Option.some(Redacted.make(database.url)),
        dataDir,
        dbPoolSize: 4,
        publicBaseUrl: "http://localhost",
        bootstrapAdminEmail: Option.some(admin.email),
        bootstrapAdminPassword: Option.some(Redacted.make(admin.password)),
        otelEndpoint: Option.none(),
        s3: Option.none(),
        smtpUrl: Option.none(),
        twilio: Option.none(),
        video: Option.none(),
        // No job worker unless a test asks for one: jobs stay in the queue for the test to inspect or run.
        jobs: { ...base.jobs, enabled: false },
        ...overrides
      } satisfies AppSettings
    })
  )

export const MemoryAdapters = Layer.mergeAll(MemoryTelephony.layer, MemoryObjectStore.layer, MemoryMailer.layer, MemoryPush.layer)

/**
 * The app on a test server over the given adapters (Telephony, ObjectStore, Mailer, Push); also
 * exposes the backend services for assertions. Logs below Error are dropped unless
 * `observability` (loggers, tracers) says otherwise.
 */
export const TestAppWith = <A>(
  adapters: Layer.Layer<A, never, AppConfig>,
  overrides: Partial<AppSettings> = {},
  observability: Layer.Layer<never> = Logger.minimumLogLevel(LogLevel.Error)
) =>
  httpLayer(NodeHttpServer.layerTest).pipe(
    // @effect/vitest shares one TestClock between the layer and its tests, and the server reads
    // time through it: start it at the real time so Clock-based and database timestamps agree.
    Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
    Layer.provideMerge(backendLayer),
    Layer.provideMerge(adapters),
    Layer.provideMerge(testConfig(overrides)),
    Layer.provide(observability)
  )

/** The app on a test server with the in-memory adapters. */
export const TestApp = (
  overrides: Partial<AppSettings> = {},
  observability: Layer.Layer<never> = Logger.minimumLogLevel(LogLevel.Error)
) => TestAppWith(MemoryAdapters, overrides, observability)

/** The session the typed client sends as `X-User-Token`, set per call by `clientAs`. */
const clientToken = FiberRef.unsafeMake<string | undefined>(undefined)

const makeTypedClient = HttpApiClient.make(Api, {
  transformClient: (http) =>
    http.pipe(
      HttpClient.mapRequestEffect((req) =>
        Effect.map(FiberRef.get(clientToken), (token) => token === undefined ? req : HttpClientRequest.setHeader(req, "x-user-token", token))
      ),
      // The test's own client spans record URLs and headers; only the server's spans are under test.
      HttpClient.withTracerDisabledWhen(() => true)
    )
})
type TypedClient = Effect.Effect.Success<typeof makeTypedClient>

// Deriving the client walks all 239 operations' schemas: once per test app (its HttpClient), not per call.
const typedClients = new WeakMap<HttpClient.HttpClient, TypedClient>()

/** The same client object with every method sending `token` (none: anonymous). */
const sendingToken = <C>(client: C, token: string | undefined): C => {
  const bound: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(client as Record<string, unknown>)) {
    bound[name] = typeof member === "function"
      ? (...args: Array<unknown>) => Effect.locally((member as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args), clientToken, token)
      : sendingToken(member, token)
  }
  return bound as C
}

/**
 * The typed client a frontend derives from the Api, sending `token` as the session (none:
 * anonymous). Happy paths go through it, so a renamed field, path or group fails `tsc`, and a
 * response outside the contract fails the test (it does not decode); an error the operation
 * declares fails the effect with its decoded value (`Effect.flip` to assert on it). Raw `request`
 * stays for pinning exact statuses and bodies and for hostile input.
 */
export const clientAs = (token?: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let client = typedClients.get(http)
    if (client === undefined) {
      client = yield* makeTypedClient
      typedClients.set(http, client)
    }
    return sendingToken(client, token)
  })

export interface RawResponse {
  readonly status: number
  readonly body: unknown
  readonly headers: HttpClientResponse.HttpClientResponse["headers"]
}

/** A raw request, to pin exact statuses and bodies. `body` is sent as JSON unless it is a string. */
export const request = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  url: string,
  options: { readonly body?: unknown; readonly token?: string; readonly headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(options.headers ?? {}))
    if (options.token !== undefined) req = HttpClientRequest.setHeader(req, "x-user-token", options.token)
    if (typeof options.body === "string") {
      req = HttpClientRequest.bodyText(req, options.body, "application/json")
    } else if (options.body !== undefined) {
      req = yield* HttpClientRequest.bodyJson(req, options.body)
    }
    const response = yield* http.execute(req)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      // Not JSON: keep the text so the assertion shows it.
    }
    return { status: response.status, body, headers: response.headers } satisfies RawResponse
  }).pipe(
    // The test's own client spans record URLs and headers; only the server's spans are under test.
    Effect.locally(HttpClient.currentTracerDisabledWhen, () => true),
    Effect.orDie
  )

export const signIn = (email: string = admin.email, password: string = admin.password) =>
  Effect.gen(function*() {
    const response = yield* request("POST", "/v1/users/sign_in", { body: { user: { email, password } } })
    if (response.status !== 200) return yield* Effect.dieMessage(`sign in failed: ${response.status}`)
    return (response.body as { token: string }).token
  })
