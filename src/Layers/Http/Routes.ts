/** Routes outside the `/v1` Api: the health check; and the request body limit (./RequestBody.ts). */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { unavailableRetryAfterSeconds } from "../../Api/Errors.js"

/** `GET /health`: 200 when the database answers, 503 otherwise. */
export const HealthLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* router.get(
      "/health",
      sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(HttpServerResponse.unsafeJson({ status: "ok", database: "ok" })),
        Effect.orElse(() =>
          HttpServerResponse.json(
            { status: "unavailable", database: "unreachable" },
            { status: 503, headers: { "retry-after": String(unavailableRetryAfterSeconds) } }
          ))
      )
    )
  }))

/** The request body limits and checks: see ./RequestBody.ts. */
export { BodyLimitLive } from "./RequestBody.js"
