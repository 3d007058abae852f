import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { MainLive } from "./Layers/Main.js"

Layer.launch(MainLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
