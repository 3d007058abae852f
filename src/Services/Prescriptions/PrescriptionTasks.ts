/** Jobs of the prescriptions area. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { Prescriptions } from "./Prescriptions.js"

/**
 * Expires active prescriptions past their end date; scheduled daily (`src/Layers/Http/Prescriptions/index.ts`).
 * Idempotent: each batch claims its rows by moving them from `active` (compare-and-swap).
 */
export const expirePrescriptions = defineTask({
  name: "prescriptions.expire",
  payload: Schema.Struct({}),
  run: () =>
    Effect.flatMap(Prescriptions, (prescriptions) => prescriptions.expireDue).pipe(
      Effect.tap((expired) => Effect.annotateCurrentSpan("prescriptions.expired", expired)),
      Effect.asVoid
    )
})
