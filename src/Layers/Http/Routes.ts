/** Routes outside the `/v1` Api: the health check, the docs page; and the request body limit (./RequestBody.ts). */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { unavailableRetryAfterSeconds } from "../../Api/Errors.js"
import { docsPath } from "./ResponseHeaders.js"

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

/** `GET /docs`: Scalar's API reference, loaded and built on the first request (./DocsPage.ts). */
export const DocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const page = yield* Effect.cached(Effect.promise(() => import("./DocsPage.js").then(({ docsPageHtml }) => docsPageHtml())))
    yield* router.get(docsPath, Effect.map(page, (html) => HttpServerResponse.text(html, { contentType: "text/html" })))
  }))

/** The request body limits and checks: see ./RequestBody.ts. */
export { BodyLimitLive } from "./RequestBody.js"
