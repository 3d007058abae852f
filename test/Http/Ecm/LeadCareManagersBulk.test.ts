/**
 * Bulk assign is set-based: the statements one request runs do not grow with its assignments
 * (counted as `sql.execute` spans of the request's trace). Timing is for bench/lcm-bulk.ts.
 */
import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { tracingWith } from "../../../src/Layers/Tracing.js"
import { clientAs, signIn, TestApp } from "../../support/app.js"
import { insertPatients } from "../../support/fixtures.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const exporter = new InMemorySpanExporter()
const Observability = Layer.mergeAll(tracingWith("test", new SimpleSpanProcessor(exporter)), Logger.minimumLogLevel(LogLevel.Error))

/** Statements run under the request's `LeadCareManagers.bulkAssign` span. */
const statementsOfLastBulk = () => {
  const spans = exporter.getFinishedSpans()
  const bulk = spans.filter((s) => s.name === "LeadCareManagers.bulkAssign").at(-1)!
  return spans.filter((s) => s.name === "sql.execute" && s.spanContext().traceId === bulk.spanContext().traceId).length
}

layer(TestApp({}, Observability))("bulk assign statements", (it) => {
  it.effect("1,000 assignments run as many statements as 2", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const olcm = yield* insertUser({ email: "o@bulk.test", role: "provider" })
      const ilcm = yield* insertUser({ email: "i@bulk.test", role: "supervisor" })
      const patients = yield* insertPatients(1002)
      const client = yield* clientAs(token)
      const bulk = (entries: ReadonlyArray<{ id: number }>) =>
        client.ecmLeadCareManagers.bulkAssign({
          payload: { assignments: entries.map((p, i) => ({ patient_id: p.id, olcm_user_id: olcm.id, ...(i % 2 === 0 ? { ilcm_user_id: ilcm.id } : {}) })) }
        })

      exporter.reset()
      expect(yield* bulk(patients.slice(0, 2))).toMatchObject({ successful_count: 2, failed_count: 0 })
      const few = statementsOfLastBulk()
      exporter.reset()
      expect(yield* bulk(patients.slice(2))).toMatchObject({ successful_count: 1000, failed_count: 0 })
      const many = statementsOfLastBulk()
      expect(few).toBeGreaterThan(0)
      expect(many).toBe(few)
      expect(many).toBeLessThanOrEqual(10)

      const [counted] = yield* query<{ olcm: number; ilcm: number; changes: number; audited: number }>(
        `SELECT (SELECT count(*)::int FROM case_loads WHERE olcm_user_id = $1) AS olcm,
          (SELECT count(*)::int FROM case_loads WHERE ilcm_user_id = $2) AS ilcm,
          (SELECT count(*)::int FROM case_load_changes WHERE via = 'bulk_assign') AS changes,
          (SELECT count(*)::int FROM audit_events WHERE target_type = 'case_load') AS audited`, olcm.id, ilcm.id)
      expect(counted).toEqual({ olcm: 1002, ilcm: 501, changes: 1503, audited: 1503 })
    }))
})
