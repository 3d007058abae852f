/**
 * `npm run content:import -- <file> [--dry-run]`: loads a content bundle (the format of
 * `POST /v1/admin/content/import`, e.g. seeds/content/demo.json) into the configured database
 * through the same service, one transaction. Prints the counts, or the errors by path and exits 1.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { ContentBundle } from "../src/Api/Content/Bundle.js"
import { AppConfigLive } from "../src/Layers/Config.js"
import { DatabaseLive } from "../src/Layers/Database.js"
import { AuditLog } from "../src/Services/AuditLog.js"
import { ContentImport } from "../src/Services/Content/ContentImport.js"

const args = process.argv.slice(2)
const file = args.find((a) => !a.startsWith("--"))
const dryRun = args.includes("--dry-run")

const program = Effect.gen(function*() {
  if (file === undefined) return yield* Effect.dieMessage("usage: npm run content:import -- <file.json> [--dry-run]")
  const text = yield* Effect.promise(() => readFile(file, "utf8"))
  const bundle = yield* Schema.decodeUnknown(Schema.parseJson(ContentBundle), { errors: "all" })(text).pipe(
    Effect.catchAll((error) => Effect.dieMessage(`${file} is not a valid bundle:\n${error.message}`))
  )
  const content = yield* ContentImport
  const result = yield* content.load(bundle, { dryRun, actorId: null }).pipe(
    Effect.catchTag("ValidationFailed", (error) => Effect.dieMessage(`${file} was not imported:\n${JSON.stringify(error.errors, null, 2)}`))
  )
  yield* Effect.sync(() => console.log(JSON.stringify(result, null, 2)))
})

program.pipe(
  Effect.provide(ContentImport.Default.pipe(
    Layer.provide(AuditLog.Default),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(AppConfigLive),
    Layer.provide(NodeContext.layer)
  )),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
