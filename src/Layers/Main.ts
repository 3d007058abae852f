/**
 * How the parts fit: config → logging/tracing → database (migrated) → adapters and services →
 * HTTP. The HTTP server layer is built last, so it listens only once migrations are done and the
 * app is attached: no request can arrive at a half-built service. Each area brings its handlers,
 * services, job tasks and schedules (`Http/<Area>/index.ts`); this file lists the areas and the
 * platform layers.
 */
import { Headers, HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Api } from "../Api/Api.js"
import { Access } from "../Services/Access/Access.js"
import { AppConfig } from "../Services/AppConfig.js"
import { AuditLog } from "../Services/AuditLog.js"
import { Auth } from "../Services/Auth.js"
import { AdaptersLive, ObjectDownloadLive } from "./Adapters.js"
import { combineAreas } from "./Area.js"
import { AppConfigLive } from "./Config.js"
import { DatabaseLive } from "./Database.js"
import { AccessArea } from "./Http/Access/index.js"
import { AccountsArea } from "./Http/Accounts/index.js"
import { BillingArea } from "./Http/Billing/index.js"
import { CollaboratorsArea } from "./Http/Collaborators/index.js"
import { ContentArea } from "./Http/Content/index.js"
import { EcmArea } from "./Http/Ecm/index.js"
import { EcmExchangeArea } from "./Http/EcmExchange/index.js"
import { ErrorHandlingLive } from "./Http/Errors.js"
import { withoutPlatformTracer } from "./Http/Observability.js"
import { PatientsArea } from "./Http/Patients/index.js"
import { PrescriptionsArea } from "./Http/Prescriptions/index.js"
import { ProvidersArea } from "./Http/Providers/index.js"
import { QuestionnairesArea } from "./Http/Questionnaires/index.js"
import { ReportsArea } from "./Http/Reports/index.js"
import { docsPath } from "./Http/ResponseHeaders.js"
import { BodyLimitLive, DocsLive, HealthLive, OpenApiLive, openApiPath } from "./Http/Routes.js"
import { SchedulingArea } from "./Http/Scheduling/index.js"
import { SecurityLive } from "./Http/Security.js"
import { serveLive } from "./Http/Serve.js"
import { SessionNotesArea } from "./Http/SessionNotes/index.js"
import { GracefulDrainLive, nodeServer, ShutdownReportLive } from "./Http/Shutdown.js"
import { VideosArea } from "./Http/Videos/index.js"
import { InstanceLive } from "./Instance.js"
import { JobWorkerLive, PgJobsLive } from "./Jobs.js"
import { LoggingLive } from "./Logging.js"
import { TracingLive } from "./Tracing.js"

const areas = combineAreas([
  AccountsArea, ProvidersArea, EcmArea, EcmExchangeArea, PatientsArea, SchedulingArea, SessionNotesArea, BillingArea,
  PrescriptionsArea, QuestionnairesArea, CollaboratorsArea, ContentArea, VideosArea, ReportsArea, AccessArea
])

/** Services every area uses: the audit log, record access and token authentication. */
const SharedServicesLive = Layer.mergeAll(AuditLog.Default, Access.Default, Auth.Default)

export const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(areas.handlers), Layer.provide(SecurityLive))

/** The HTTP app on the given server layer (the real one, or `NodeHttpServer.layerTest`). */
export const httpLayer = <ROut, E, RIn>(server: Layer.Layer<ROut, E, RIn>) =>
  serveLive.pipe(
    Layer.provide(DocsLive),
    Layer.provide(OpenApiLive),
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

/** Every task the job worker runs (the recurring ones each at their own minute: see each area). */
export const jobTasks = areas.tasks

/**
 * Everything but config, adapters and the HTTP server: what the app needs to serve requests, and
 * this instance's job worker (off with `JOBS_ENABLED=false`). `Jobs` adds jobs through the app's
 * own database connection.
 */
export const backendLayer = Layer.mergeAll(
  areas.services,
  JobWorkerLive(areas.tasks, areas.schedules).pipe(Layer.provide(areas.services))
).pipe(
  Layer.provideMerge(SharedServicesLive),
  Layer.provideMerge(Layer.provideMerge(Layer.merge(PgJobsLive, InstanceLive), DatabaseLive))
)

const announceDocs = Layer.effectDiscard(Effect.flatMap(AppConfig, (config) =>
  Effect.logInfo(`API docs at ${config.publicBaseUrl}${docsPath} (OpenAPI: ${config.publicBaseUrl}${openApiPath})`)))

/**
 * Shutdown runs this in reverse: drain the requests in flight (GracefulDrainLive), close the
 * server, the database pool and the embedded PostgreSQL, then log the report (ShutdownReportLive).
 */
export const MainLive = GracefulDrainLive.pipe(
  Layer.provideMerge(httpLayer(nodeServer)),
  HttpServer.withLogAddress,
  Layer.provide(announceDocs),
  Layer.provide(backendLayer),
  Layer.provide(AdaptersLive),
  Layer.provide(ShutdownReportLive),
  Layer.provide(TracingLive),
  Layer.provide(LoggingLive),
  Layer.provide(AppConfigLive)
)
