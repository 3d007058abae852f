/** Routes outside the `/v1` Api: the health check and the request body limit. */
import { HttpApiBuilder, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { payloadTooLarge } from "../../Api/Errors.js"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { AppConfig } from "../../Services/AppConfig.js"
import { errorResponse, retryAfterSeconds } from "./Errors.js"
import { checkRequestBody, hasBody } from "./RequestBody.js"

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
            { status: 503, headers: { "retry-after": String(retryAfterSeconds) } }
          ))
      )
    )
  }))

/**
 * MAX_BODY_BYTES applies to every request body (default fits a 50 MB file sent as base64 JSON).
 * A declared Content-Length over the limit is refused before reading; a chunked body is cut off
 * by the platform's reader. Within the limit, the body must be in a media type the Api takes
 * and not nested absurdly deep (./RequestBody.ts).
 */
export const BodyLimitLive = HttpApiBuilder.middleware(
  Effect.map(AppConfig, (config) => (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // Most requests carry no body: leave them untouched (this runs on every request).
      if (!hasBody(request)) return app
      return Number(request.headers["content-length"] ?? 0) > config.maxBodyBytes
        ? errorResponse(payloadTooLarge())
        : HttpIncomingMessage.withMaxBodySize(checkRequestBody(request, app), Option.some(config.maxBodyBytes))
    }))
)
