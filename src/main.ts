import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { dataDirConfig } from "./Layers/Config.js"
import { MainLive } from "./Layers/Main.js"
import { preparePrivateTempDir } from "./Services/PrivateTemp.js"

// Before any job or request makes a temporary file: the instance's private directory, emptied of
// what a crash left there. (A DATA_DIR that cannot be read fails again, with its message, below.)
await Effect.runPromise(dataDirConfig).then(preparePrivateTempDir).catch(() => undefined)

Layer.launch(MainLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
