/**
 * This instance: its id, its heartbeat, and the sweep that releases or settles the work of
 * instances that are gone — once at start-up (work this very instance held before a crash and
 * restart is found then, once its old heartbeat is stale) and every HEARTBEAT_SECONDS.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../Services/AppConfig.js"
import { keepAlive, onWallClock } from "../Services/Heartbeats.js"
import { Instance } from "../Services/Instance.js"
import { recoverInterruptedWork } from "../Services/Recovery.js"

export const InstanceLive = Layer.scoped(
  Instance,
  Effect.gen(function*() {
    const id = `instance-${randomBytes(9).toString("hex")}`
    const { heartbeatSeconds } = (yield* AppConfig).liveness
    yield* keepAlive(id)
    yield* recoverInterruptedWork.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("recovery sweep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(heartbeatSeconds))),
      onWallClock,
      Effect.annotateLogs("component", "liveness"),
      Effect.forkScoped
    )
    return Instance.of({ id })
  })
)
