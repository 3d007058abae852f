/** Jobs of the accounts area. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { Sessions } from "./Sessions.js"

/** Deletes expired session tokens; scheduled hourly (`src/Layers/Http/Accounts/index.ts`). Idempotent: a DELETE by cut-off. */
export const sweepExpiredSessions = defineTask({
  name: "sessions.sweep_expired",
  payload: Schema.Struct({}),
  run: () =>
    Effect.flatMap(Sessions, (sessions) => sessions.sweepExpired).pipe(
      Effect.tap((deleted) => Effect.annotateCurrentSpan("sessions.deleted", deleted)),
      Effect.asVoid
    )
})
