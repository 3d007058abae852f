/** Jobs of the reports area. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { ReportGenerator } from "./ReportGenerator.js"

/** Runs, first included: a run that fails marks its report failed itself; retries only follow a crash mid-run. */
export const reportMaxAttempts = 3

/** Generates one report file; idempotent (the run claims the report's row first). */
export const generateReportTask = defineTask({
  name: "reports.generate",
  payload: Schema.Struct({ report: Schema.Int }),
  run: (payload) => Effect.flatMap(ReportGenerator, (generator) => generator.generate(payload.report))
})

/** Deletes report files past their 30 days; scheduled daily (`src/Layers/Http/Reports/index.ts`). Idempotent. */
export const expireReportsTask = defineTask({
  name: "reports.expire",
  payload: Schema.Struct({}),
  run: () => Effect.flatMap(ReportGenerator, (generator) => Effect.asVoid(generator.expire))
})
