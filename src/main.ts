import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { dataDirConfig } from "./Layers/Config.js"
import { MainLive } from "./Layers/Main.js"
import { preparePrivateTempDir } from "./Services/PrivateTemp.js"

// Before anything makes a temporary file: the instance's private directory, emptied of what a
// crash left there, becomes the process's temp directory (libraries such as exceljs write there).
// A DATA_DIR that cannot be written fails again, with its message, below.
await Effect.runPromise(dataDirConfig).then(preparePrivateTempDir).then((dir) => (process.env["TMPDIR"] = dir), () => undefined)

Layer.launch(MainLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
