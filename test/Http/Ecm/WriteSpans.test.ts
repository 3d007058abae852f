/**
 * A write whose body runs in a transaction carries its ids on its own span: the body runs under the
 * `sql.transaction` span (a child of the method's), so the ids are set outside it.
 */
import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { tracingWith } from "../../../src/Layers/Tracing.js"
import { request, signIn, TestApp } from "../../support/app.js"
import { created, insertPatient, staffUser, updateActivity } from "./activitySupport.js"
import { insertMember, insertStatus } from "./prtfSupport.js"

const exporter = new InMemorySpanExporter()
const Observability = Layer.mergeAll(tracingWith("test", new SimpleSpanProcessor(exporter)), Logger.minimumLogLevel(LogLevel.Error))

/** The one span of that name since the last reset, and the transaction spans directly under it. */
const spanWithTransactions = (name: string) => {
  const spans = exporter.getFinishedSpans()
  const named = spans.filter((s) => s.name === name)
  expect(named.map((s) => s.name)).toEqual([name])
  const span = named[0]!
  const transactions = spans.filter((s: ReadableSpan) =>
    s.name === "sql.transaction" && s.parentSpanContext?.spanId === span.spanContext().spanId)
  return { span, transactions }
}

layer(TestApp({}, Observability))("spans of transactional writes", (it) => {
  it.effect("activity create and update: the patient and activity ids are on the method's span, not its transaction's", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()

      exporter.reset()
      const id = yield* created(me.token, patient, { activity_type: "task", message: "Call back", assigned_to_id: me.id, occurred_at: "2026-02-01T00:00:00Z" })
      const create = spanWithTransactions("Activities.create")
      expect(create.span.attributes["patient.id"]).toBe(patient)
      expect(create.transactions).toHaveLength(1)
      expect(create.transactions[0]!.attributes["patient.id"]).toBeUndefined()

      exporter.reset()
      expect((yield* updateActivity(me.token, patient, id, { message: "Called back" })).status).toBe(200)
      const update = spanWithTransactions("Activities.update")
      expect(update.span.attributes).toMatchObject({ "patient.id": patient, "activity.id": id })
      expect(update.transactions).toHaveLength(1)
      expect(update.transactions[0]!.attributes["activity.id"]).toBeUndefined()
    }))

  it.effect("engagement status update: the patient id is on the method's span, not its transaction's", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const member = yield* insertMember({ first_name: "Nia", last_name: "New", member_id: "W1" })
      yield* insertStatus(member, "new_member", "2026-01-02", "Created by MIF import", "mif")

      exporter.reset()
      const changed = yield* request("PUT", `/v1/admin/clinic/ecm/patients/${member}/engagement_status`, {
        token: admin,
        body: { status: "enrolled", effective_date: "2026-02-01", reason: "Consented by phone" }
      })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      const update = spanWithTransactions("EngagementStatuses.update")
      expect(update.span.attributes["patient.id"]).toBe(member)
      expect(update.transactions).toHaveLength(1)
      expect(update.transactions[0]!.attributes["patient.id"]).toBeUndefined()
    }))
})
