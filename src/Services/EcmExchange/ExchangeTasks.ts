/** Jobs of the return files. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { ExchangeGenerator } from "./ExchangeGenerator.js"

/** Runs, first included: a run that fails marks its report failed itself; retries only follow a crash mid-run. */
export const exchangeMaxAttempts = 3

/** Generates one RTF or OTF; idempotent (the run claims the report's row first). */
export const generateExchangeTask = defineTask({
  name: "ecm_exchange.generate",
  payload: Schema.Struct({ report: Schema.Int }),
  run: (payload) => Effect.flatMap(ExchangeGenerator, (generator) => generator.generate(payload.report))
})
