// TEMPORARY scratch (deleted after use): the app with one thing changed, selected by VARIANT.
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ObjectDownloadLive, AdaptersLive } from "../src/Layers/Adapters.js"
import { AppConfig } from "../src/Layers/Config.js"
import { ErrorHandlingLive } from "../src/Layers/Http/Errors.js"
import { withoutPlatformTracer } from "../src/Layers/Http/Observability.js"
import { BodyLimitLive, HealthLive } from "../src/Layers/Http/Routes.js"
import { ApiLive, backendLayer, MainLive, nodeServer } from "../src/Layers/Main.js"
import { LoggingLive } from "../src/Layers/Logging.js"
import { TracingLive } from "../src/Layers/Tracing.js"

const variant = process.env.VARIANT ?? "baseline"
const noObserve = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
  Layer.provide(HealthLive), Layer.provide(ObjectDownloadLive),
  Layer.provide(variant === "bare-ish" ? Layer.empty : ErrorHandlingLive),
  Layer.provide(variant === "bare-ish" ? Layer.empty : BodyLimitLive),
  Layer.provide(ApiLive), withoutPlatformTracer, Layer.provideMerge(nodeServer)
).pipe(Layer.provide(backendLayer), Layer.provide(AdaptersLive), Layer.provide(TracingLive), Layer.provide(LoggingLive), Layer.provide(AppConfig.layer))

const main = variant === "baseline" || variant === "notracer" ? MainLive : noObserve
const program = Layer.launch(main)
const run = variant === "notracer" || variant === "bare-ish" ? program.pipe(Effect.withTracerEnabled(false)) : program
run.pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
