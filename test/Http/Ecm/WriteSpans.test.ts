/**
 * A write whose body runs in a transaction carries its ids on its own span: the body runs under the
 * `sql.transaction` span (a child of the method's), so the ids are set outside it, those it learns
 * inside the transaction (an inbound text's row) included.
 */
import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { tracingWith } from "../../../src/Layers/Tracing.js"
import { request, signIn, TestApp } from "../../support/app.js"
import { created, insertPatient, staffUser, updateActivity } from "./activitySupport.js"
import { assignLeadCareManagers, hookPath, insertPatientWithPhone, postHook, sid, twilioSettings } from "./communicationSupport.js"
import { insertMember, insertStatus } from "./prtfSupport.js"
import { dataUri, importedMif, membersCsv } from "./support.js"

/** Spans kept in memory; one per test layer, since a layer's teardown shuts its exporter down. */
const observability = () => {
  const exporter = new InMemorySpanExporter()
  return { exporter, layer: Layer.mergeAll(tracingWith("test", new SimpleSpanProcessor(exporter)), Logger.minimumLogLevel(LogLevel.Error)) }
}
const { exporter, layer: Observability } = observability()
const webhooks = observability()

/** The one span of that name since the last reset, and the transaction spans directly under it. */
const spanWithTransactions = (name: string, from: InMemorySpanExporter = exporter) => {
  const spans = from.getFinishedSpans()
  const named = spans.filter((s) => s.name === name)
  expect(named.map((s) => s.name)).toEqual([name])
  const span = named[0]!
  const transactions = spans.filter((s: ReadableSpan) =>
    s.name === "sql.transaction" && s.parentSpanContext?.spanId === span.spanContext().spanId)
  return { span, transactions }
}

/** The span of that name has `attributes`, and its one transaction none of their keys. */
const onMethodNotTransaction = (name: string, attributes: Record<string, unknown>) => {
  const { span, transactions } = spanWithTransactions(name, webhooks.exporter)
  expect(span.attributes, name).toMatchObject(attributes)
  expect(transactions, name).toHaveLength(1)
  for (const key of Object.keys(attributes)) expect(transactions[0]!.attributes[key], `${name} ${key}`).toBeUndefined()
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

layer(TestApp({ twilio: Option.some(twilioSettings()) }, webhooks.layer))("spans of webhook and import writes", (it) => {
  it.effect("inbound SMS and call: the row ids learnt inside the transaction are on the method's span", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550131")
      const lcm = yield* staffUser()
      yield* assignLeadCareManagers(patient, { ilcm: lcm.id })

      webhooks.exporter.reset()
      const texted = yield* postHook(hookPath("sms"), { MessageSid: sid("SM"), From: "+14155550131", To: "+15550001111", Body: "Hello" })
      expect(texted.status).toBe(200)
      onMethodNotTransaction("TelephonyWebhooks.inboundSms", { "sms.id": expect.any(Number), "patient.matched": true })

      webhooks.exporter.reset()
      const called = yield* postHook(hookPath("voice"), { CallSid: sid("CA"), From: "+14155550131", To: "+15550001111", CallStatus: "ringing" })
      expect(called.status).toBe(200)
      onMethodNotTransaction("TelephonyWebhooks.inboundVoice", { "call.id": expect.any(Number) })
    }))

  it.effect("MIF import: the record count is on MifImport.run's span, not its transaction's", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const csv = membersCsv([
        { member_id: "S1", first_name: "Sam", last_name: "Span", dob: "01-02-1980" },
        { member_id: "S2", first_name: "Sue", last_name: "Span", dob: "03-04-1985" }
      ])
      webhooks.exporter.reset()
      expect((yield* importedMif(admin, { file: dataUri("csv", csv) })).imported_count).toBe(2)
      onMethodNotTransaction("MifImport.run", { "mif.records": 2 })
    }))
})
