/** Routes outside the Api's groups: the health check, the docs page, the OpenAPI document; and the request body limit (./RequestBody.ts). */
import { HttpApi, HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Option } from "effect"
import { unavailableRetryAfterSeconds } from "../../Api/Errors.js"
import { docsPath } from "./ResponseHeaders.js"

/**
 * `effect`'s value, or None when it has not finished within `millis` (it is then interrupted).
 * `Effect.timeout` races two forked fibers and joins them back: on `GET /health` that cost more
 * CPU than the rest of the request together. Here one fiber runs `effect` and a timer answers
 * for it; nothing is joined back, so the fiber-local state it leaves is dropped.
 */
export const withinMillis = <A, E, R>(effect: Effect.Effect<A, E, R>, millis: number): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.flatMap(Effect.fork(effect), (fiber) =>
    Effect.async<Option.Option<A>, E>((resume) => {
      let answered = false
      const answer = (result: Effect.Effect<Option.Option<A>, E>) => {
        if (answered) return
        answered = true
        clearTimeout(timer)
        resume(result)
      }
      const timer = setTimeout(() => {
        answer(Effect.succeedNone)
        fiber.unsafeInterruptAsFork(fiber.id())
      }, millis)
      fiber.addObserver((exit) => answer(Exit.isSuccess(exit) ? Effect.succeedSome(exit.value) : Exit.failCause(exit.cause)))
      return Effect.sync(() => {
        answered = true
        clearTimeout(timer)
        fiber.unsafeInterruptAsFork(fiber.id())
      })
    }))

/** How long `GET /health` waits for the database before answering 503. */
const healthDeadlineMillis = 2_000

/** `GET /health`: 200 when the database answers within two seconds, 503 otherwise. */
export const HealthLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const probe = sql`SELECT 1`
    const healthy = HttpServerResponse.unsafeJson({ status: "ok", database: "ok" })
    const unavailable = HttpServerResponse.unsafeJson(
      { status: "unavailable", database: "unreachable" },
      { status: 503, headers: { "retry-after": String(unavailableRetryAfterSeconds) } }
    )
    yield* router.get(
      "/health",
      withinMillis(probe, healthDeadlineMillis).pipe(
        Effect.map(Option.match({ onNone: () => unavailable, onSome: () => healthy })),
        Effect.orElseSucceed(() => unavailable)
      )
    )
  }))

/** `GET /docs`: Scalar's API reference, loaded and built on the first request (./DocsPage.ts). */
export const DocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const page = yield* Effect.cached(Effect.promise(() => import("./DocsPage.js").then(({ docsPageHtml }) => docsPageHtml())))
    yield* router.get(docsPath, Effect.map(page, (html) => HttpServerResponse.text(html, { contentType: "text/html" })))
  }))

/**
 * `GET /v1/openapi.json`: the Api's OpenAPI document (as `HttpApiBuilder.middlewareOpenApi` serves
 * it), built on the first request: built at start-up, it kept ~6 MB more resident in every
 * instance (bench:startup) for a document few instances are ever asked for.
 */
export const openApiPath = "/v1/openapi.json"

export const OpenApiLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    const document = yield* Effect.cached(Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api))).pipe(Effect.orDie))
    yield* router.get(openApiPath, document)
  }))

/** The request body limits and checks: see ./RequestBody.ts. */
export { BodyLimitLive } from "./RequestBody.js"
