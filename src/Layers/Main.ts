/**
 * How the parts fit: config → logging/tracing → database (migrated) → adapters and services →
 * HTTP. The HTTP server layer is built last, so it listens only once migrations are done and the
 * app is attached: no request can arrive at a half-built service.
 */
import { Headers, HttpApiBuilder, HttpApiScalar, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { Api } from "../Api/Api.js"
import { Accounts } from "../Services/Accounts/Accounts.js"
import { AdminUsers } from "../Services/Accounts/AdminUsers.js"
import { AuditLog } from "../Services/AuditLog.js"
import { Auth } from "../Services/Auth.js"
import { UserLifecycle } from "../Services/Accounts/UserLifecycle.js"
import { ensureBootstrapAdmin } from "../Services/Accounts/Bootstrap.js"
import { UsersRepo } from "../Services/Accounts/UsersRepo.js"
import { AdaptersLive, ObjectDownloadLive } from "./Adapters.js"
import { AppConfig } from "../Services/AppConfig.js"
import { AppConfigLive } from "./Config.js"
import { DatabaseLive } from "./Database.js"
import { HttpAdminUsersLive } from "./Http/Accounts/AdminUsers.js"
import { HttpEcmMifsLive } from "./Http/Ecm/Mifs.js"
import { HttpEcmPatientsLive } from "./Http/Ecm/Patients.js"
import { EcmPatients } from "../Services/Ecm/EcmPatients.js"
import { MifFiles } from "../Services/Ecm/MifFiles.js"
import { MifImport } from "../Services/Ecm/MifImport.js"
import { ErrorHandlingLive } from "./Http/Errors.js"
import { observeRequests, withoutPlatformTracer } from "./Http/Observability.js"
import { BodyLimitLive, HealthLive } from "./Http/Routes.js"
import { SecurityLive } from "./Http/Security.js"
import { HttpUsersLive } from "./Http/Accounts/Users.js"
import { LoggingLive } from "./Logging.js"
import { TracingLive } from "./Tracing.js"

export const ServicesLive = Layer.mergeAll(Auth.Default, UsersRepo.Default, Accounts.Default, AuditLog.Default, UserLifecycle.Default, AdminUsers.Default)

/** ECM: patients and member information file imports. */
const EcmServicesLive = Layer.mergeAll(MifImport.Default, MifFiles.Default, EcmPatients.Default).pipe(
  Layer.provide(AuditLog.Default)
)

const BootstrapLive = Layer.effectDiscard(
  Effect.flatMap(AppConfig, (config) => ensureBootstrapAdmin(config.bootstrapAdminEmail, config.bootstrapAdminPassword))
).pipe(Layer.provide(UsersRepo.Default))

export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([HttpUsersLive, HttpAdminUsersLive, HttpEcmMifsLive, HttpEcmPatientsLive]),
  Layer.provide(SecurityLive)
)

/** The HTTP app on the given server layer (the real one, or `NodeHttpServer.layerTest`). */
export const httpLayer = <ROut, E, RIn>(server: Layer.Layer<ROut, E, RIn>) =>
  HttpApiBuilder.serve(observeRequests).pipe(
    Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
    Layer.provide(HealthLive),
    Layer.provide(ObjectDownloadLive),
    Layer.provide(ErrorHandlingLive),
    Layer.provide(BodyLimitLive),
    Layer.provide(ApiLive),
    withoutPlatformTracer,
    // Should any platform tracer or logger print headers, the token is redacted like Authorization.
    (layer) => Layer.locallyWith(layer, Headers.currentRedactedNames, (names) => [...names, "x-user-token"]),
    Layer.provideMerge(server)
  )

/** Everything but config, adapters and the HTTP server: what the app needs to serve requests. */
export const backendLayer = Layer.mergeAll(ServicesLive, EcmServicesLive, BootstrapLive).pipe(
  Layer.provideMerge(DatabaseLive)
)

export const nodeServer = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  NodeHttpServer.layer(createServer, { port: config.port, host: config.host })))

const announceDocs = Layer.effectDiscard(Effect.flatMap(AppConfig, (config) =>
  Effect.logInfo(`API docs at ${config.publicBaseUrl}/docs (OpenAPI: ${config.publicBaseUrl}/v1/openapi.json)`)))

export const MainLive = httpLayer(nodeServer).pipe(
  HttpServer.withLogAddress,
  Layer.provide(announceDocs),
  Layer.provide(backendLayer),
  Layer.provide(AdaptersLive),
  Layer.provide(TracingLive),
  Layer.provide(LoggingLive),
  Layer.provide(AppConfigLive)
)
