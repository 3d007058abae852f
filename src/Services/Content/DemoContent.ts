/**
 * The demo library (seeds/content/demo.json): loaded at start-up when the library is
 * empty, so a fresh install has something to show, unless CONTENT_DEMO=false; and on demand with
 * `npm run content:import -- seeds/content/demo.json`.
 */
import { Effect, Schema } from "effect"
import demo from "../../../seeds/content/demo.json" with { type: "json" }
import { ContentBundle } from "../../Api/Content/Bundle.js"
import { AppConfig } from "../AppConfig.js"
import { ContentImport } from "./ContentImport.js"

export const demoBundle = Schema.decodeUnknownSync(ContentBundle)(demo)

/** Loads the demo bundle into an empty library (a no-op otherwise, or with CONTENT_DEMO=false). */
export const loadDemoContent = Effect.gen(function*() {
  if (!(yield* AppConfig).contentDemo) return
  const content = yield* ContentImport
  if (!(yield* content.isEmpty)) return
  const result = yield* content.load(demoBundle, { dryRun: false, actorId: null }).pipe(
    // The bundle ships with the code: an invalid one is a bug. Two instances loading it at once are
    // serialised by the import's lock; the second finds every item unchanged.
    Effect.catchTag("ValidationFailed", (error) => Effect.die(new Error(`demo content is invalid: ${JSON.stringify(error.errors)}`)))
  )
  yield* Effect.logInfo("Demo content loaded").pipe(Effect.annotateLogs({ "content.pieces": result.created.pieces }))
}).pipe(Effect.withSpan("DemoContent.load"))
