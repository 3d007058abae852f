/** Jobs of the scheduling area. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { Slots } from "./Slots.js"

/**
 * Keeps recurring availability 90 days ahead: scheduled daily (`src/Layers/Http/Scheduling/index.ts`). Idempotent:
 * each series moves its `generated_until` with the slots it adds, and inserts skip existing ones.
 */
export const extendSlotSeries = defineTask({
  name: "availability.extend_series",
  payload: Schema.Struct({}),
  run: () =>
    Effect.flatMap(Slots, (slots) => slots.extendSeries).pipe(
      Effect.tap((created) => Effect.annotateCurrentSpan("slots.created", created)),
      Effect.asVoid
    )
})
