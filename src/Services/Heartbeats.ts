/**
 * Who is alive among the holders of work: each instance (the owner of its imports) and each job
 * worker pool (the holder of its job locks) beats its row of `heartbeats` every HEARTBEAT_SECONDS,
 * so that what a crashed process held is released or failed by the others (./Recovery.ts) once it
 * has been silent for HEARTBEAT_STALE_SECONDS — not at graphile-worker's 4-hour lock expiry.
 *
 * Beats are stamped with the database's clock, the one graphile-worker stamps its locks with (the
 * instances' own clocks may differ), and paced by the wall clock even under a test's TestClock.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { AppConfig } from "./AppConfig.js"
import { recordBeat, removeHolder } from "./HeartbeatsRepo.js"

/** Runs `effect` on the real clock: heartbeats and sweeps measure real time against the database's. */
export const onWallClock = Effect.withClock(Clock.make())

/**
 * Records `holderId` alive now and every HEARTBEAT_SECONDS until the scope closes, then removes
 * its row (a clean stop leaves nothing for the others to sweep). A beat that fails is logged and
 * the next one tries again; a row swept meanwhile (a long pause) is written anew.
 */
export const keepAlive = (holderId: string) =>
  Effect.gen(function*() {
    const { heartbeatSeconds } = (yield* AppConfig).liveness
    const beat = recordBeat(holderId)
    yield* Effect.orDie(beat)
    // Added before the beating fiber, so it runs after that fiber is stopped.
    yield* Effect.addFinalizer(() => Effect.ignore(removeHolder(holderId)))
    yield* beat.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("heartbeat not recorded", cause)),
      Effect.delay(Duration.seconds(heartbeatSeconds)),
      Effect.repeat(Schedule.forever),
      onWallClock,
      Effect.annotateLogs({ component: "liveness", "heartbeat.holder": holderId }),
      Effect.forkScoped
    )
  })
