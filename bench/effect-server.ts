/**
 * The framework floor of `npm run bench`: a minimal Effect HttpApi app answering the benched
 * operations — one group, the same `X-User-Token` security middleware (an `HttpApiMiddleware.Tag`
 * providing the caller), the app's `Schema.Class` request and response schemas, and the SQL of
 * ./floor-statements.ts through `PgClient.layer` — so the app's cost above it is what the service
 * itself adds. Nothing else: no CORS, extra headers, body checks, error mapping or access log; the
 * platform's own request span stays (HttpApiBuilder.serve's default).
 *
 * Env: DATABASE_URL (required), PORT (default 3002), HOST (default 127.0.0.1), DB_POOL_SIZE
 * (default 10). Backends are named `care-bench-effect` (application_name).
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Logger, LogLevel, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { NotFound, Unauthorized } from "../src/Api/Errors.js"
import { CreatePatientRequest, PatientResponse } from "../src/Api/Patients/Patients.js"
import { ClinicPatient, PatientProvider } from "../src/Domain/Patients/Patient.js"
import { auditInsert, isStaffRole, patientInsert, patientLoad, type PatientRow, sessionTimes, tokenLookup } from "./floor-statements.js"

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error("DATABASE_URL is required")
  process.exit(2)
}

interface Caller {
  readonly id: number
  readonly role: string
}
class CurrentUser extends Context.Tag("bench/CurrentUser")<CurrentUser, Caller>() {}

class Authentication extends HttpApiMiddleware.Tag<Authentication>()("bench/Authentication", {
  failure: Unauthorized.schema,
  provides: CurrentUser,
  security: { userToken: HttpApiSecurity.apiKey({ key: "X-User-Token", in: "header" }) }
}) {}

class Health extends Schema.Class<Health>("Health")({ status: Schema.String, database: Schema.String }) {}

class FloorGroup extends HttpApiGroup.make("floor")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Health))
  .add(
    HttpApiEndpoint.get("show", "/v1/clinic/patients/:id")
      .setPath(Schema.Struct({ id: Schema.NumberFromString.pipe(Schema.int()) }))
      .addSuccess(PatientResponse)
      .addError(NotFound.schema)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/clinic/patients")
      .setPayload(CreatePatientRequest)
      .addSuccess(PatientResponse, { status: 201 })
      .middleware(Authentication)
  ) {}

class FloorApi extends HttpApi.make("floor").add(FloorGroup) {}

const toPatient = (row: PatientRow): ClinicPatient =>
  ClinicPatient.make({
    ...row,
    provider: row.provider_id === null || row.provider_first_name === null
      ? null
      : PatientProvider.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name ?? "" })
  })

const AuthenticationLive = Layer.effect(Authentication, Effect.map(SqlClient.SqlClient, (sql) => ({
  userToken: (token: Redacted.Redacted<string>) => {
    const raw = Redacted.value(token)
    const unauthorized = new Unauthorized({ errors: "You are not authorized to perform this action." })
    if (raw.length === 0 || raw.length > 256) return Effect.fail(unauthorized)
    const hash = createHash("sha256").update(raw, "utf8").digest()
    return sql.unsafe<Caller>(tokenLookup, [hash, ...sessionTimes()]).pipe(
      Effect.orDie,
      Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(unauthorized) : Effect.succeed(rows[0]))
    )
  }
})))

const load = (sql: SqlClient.SqlClient, id: number) =>
  Effect.map(sql.unsafe<PatientRow>(patientLoad, [id]), (rows) => rows[0])

const FloorLive = HttpApiBuilder.group(FloorApi, "floor", (handlers) =>
  Effect.map(SqlClient.SqlClient, (sql) =>
    handlers
      .handle("health", () => Effect.as(sql.unsafe("SELECT 1").pipe(Effect.orDie), new Health({ status: "ok", database: "ok" })))
      .handle("show", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentUser
          const notFound = new NotFound({ errors: "Patient not found" })
          if (!isStaffRole(caller.role)) return yield* Effect.fail(notFound)
          const row = yield* Effect.orDie(load(sql, path.id))
          if (row === undefined) return yield* Effect.fail(notFound)
          return new PatientResponse({ patient: toPatient(row) })
        }))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentUser
          const input = payload.patient
          const [inserted] = yield* sql.unsafe<{ id: number }>(patientInsert, [input.first_name.trim(), input.last_name.trim(), input.date_of_birth])
          yield* sql.unsafe(auditInsert, [caller.id, "patient.create", "patient", inserted!.id, null, new Date()])
          const row = yield* load(sql, inserted!.id)
          return new PatientResponse({ patient: toPatient(row!) })
        }).pipe(Effect.orDie))))

const PgLive = PgClient.layer({
  url: Redacted.make(databaseUrl),
  maxConnections: Number(process.env.DB_POOL_SIZE ?? 10),
  applicationName: "care-bench-effect",
  transformJson: false
})

const server = createServer()
const MainLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(FloorLive), Layer.provide(AuthenticationLive))),
  Layer.provide(PgLive),
  Layer.provide(NodeHttpServer.layer(() => server, { port: Number(process.env.PORT ?? 3002), host: process.env.HOST ?? "127.0.0.1" })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

server.once("listening", () => console.log(`listening on ${(server.address() as { port: number }).port}`))
Layer.launch(MainLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
