/**
 * Reminder delivery reports end to end: a reminder SMS or call goes out through TwilioTelephony
 * (the official `twilio` client) to the local Twilio stand-in, with the telephony status webhook
 * as its callback; a status callback signed by the `twilio` library then moves the reminder's
 * `delivery_status` — once, forwards only, and never without a valid signature. A callback that
 * comes before the sender has recorded the SID is applied when it does.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Context, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import { TwilioTelephonyLive } from "../../../src/Layers/TwilioTelephony.js"
import { ReminderSender } from "../../../src/Services/Scheduling/ReminderSender.js"
import { request, TestAppWith } from "../../support/app.js"
import { twilioStandIn, type TwilioStandIn } from "../../Layers/twilioStandIn.js"
import { hookPath, postHook, publicBaseUrl, twilioSettings } from "../Ecm/communicationSupport.js"
import { insertPatient } from "../../support/fixtures.js"
import { adminToken, bookSlot, makeProvider, slotAt } from "./helpers.js"

const minuteMs = 60_000

class StandIn extends Context.Tag("test/TwilioStandIn")<StandIn, TwilioStandIn>() {}

/** The app with Twilio telephony pointed at a stand-in that gives every message and call its own SID. */
const TwilioApp = Layer.unwrapScoped(Effect.map(
  twilioStandIn({ sid: (kind, n) => `${kind}${n.toString(16).padStart(32, "0")}` }),
  (standIn) =>
    TestAppWith(
      Layer.mergeAll(TwilioTelephonyLive, MemoryObjectStore.layer, MemoryMailer.layer, MemoryPush.layer),
      { twilio: Option.some(twilioSettings({ apiBaseUrl: Option.some(standIn.url) })) }
    ).pipe(Layer.merge(Layer.succeed(StandIn, standIn)))
))

let phones = 200

/** A patient reachable by phone only, booked 30 hours ahead with a provider named Avery Quinn. */
const bookedPatient = Effect.gen(function*() {
  const token = yield* adminToken
  const provider = yield* makeProvider(token, "provider", { first_name: "Avery", last_name: "Quinn" })
  const phone = `+1415555${String(++phones).padStart(4, "0")}`
  const patientId = yield* insertPatient({ first_name: "Robin", last_name: "Vale", date_of_birth: "2015-06-01", phone })
  const base = yield* Clock.currentTimeMillis
  const slot = yield* slotAt(token, provider.id, 30, 1, base)
  const { appointmentId } = yield* bookSlot(token, slot, patientId)
  return { token, phone, appointmentId }
})

const reminderRow = (id: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string; delivery_status: string; status_reason: string | null; provider_message_id: string | null }>`
      SELECT status, delivery_status, status_reason, provider_message_id FROM appointment_reminders WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

const remindersOf = (appointmentId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: number; reminder_type: string; send_at: Date }>`
      SELECT id, reminder_type, send_at FROM appointment_reminders WHERE appointment_id = ${appointmentId} ORDER BY id`).pipe(Effect.orDie)

/** Sends reminder `id` now, as its job would (the clock moved to its send time first). */
const sendNow = (id: number, sendAt: Date) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(sendAt.getTime() + minuteMs)
    const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
    yield* sender.send(id, { id: `job-${id}`, attempt: 1, maxAttempts: 5 })
  })

const smsStatus = (sid: string, status: string, extra: Record<string, string> = {}) =>
  postHook(hookPath("sms_status"), { MessageSid: sid, MessageStatus: status, AccountSid: "AC00000000000000000000000000000000", ...extra })
const callStatus = (sid: string, status: string) =>
  postHook(hookPath("voice_status"), { CallSid: sid, CallStatus: status, CallDuration: "0", AccountSid: "AC00000000000000000000000000000000" })

layer(TwilioApp)("reminder delivery reports through the telephony webhooks", (it) => {
  it.effect("an SMS reminder carries the sms_status callback; a signed callback moves it to delivered, once", () =>
    Effect.gen(function*() {
      const standIn = yield* StandIn
      const patient = yield* bookedPatient
      const [sms] = yield* remindersOf(patient.appointmentId)
      expect(sms!.reminder_type).toBe("sms")
      yield* sendNow(sms!.id, sms!.send_at)

      const sent = standIn.captured.find((c) => c.form.To?.[0] === patient.phone)!
      expect(sent.path).toMatch(/\/Messages\.json$/)
      expect(sent.form.StatusCallback).toEqual([`${publicBaseUrl}/v1/clinic/webhooks/telephony/sms_status`])
      expect(sent.form.Body![0]).toContain("Avery Quinn")
      const row = yield* reminderRow(sms!.id)
      expect(row).toMatchObject({ status: "sent", delivery_status: "sending" })
      const sid = row.provider_message_id!

      // Unsigned, or signed with another token: refused, nothing moves.
      expect((yield* postHook(hookPath("sms_status"), { MessageSid: sid, MessageStatus: "delivered" }, { signature: "none" })).status).toBe(403)
      expect((yield* postHook(hookPath("sms_status"), { MessageSid: sid, MessageStatus: "delivered" }, { signature: { token: "not-ours" } })).status).toBe(403)
      // On its way: still sending.
      expect((yield* smsStatus(sid, "sent")).status).toBe(200)
      expect(yield* reminderRow(sms!.id)).toMatchObject({ status: "sent", delivery_status: "sending" })

      expect((yield* smsStatus(sid, "delivered")).status).toBe(200)
      expect(yield* reminderRow(sms!.id)).toMatchObject({ status: "delivered", delivery_status: "delivered", status_reason: null })
      const shown = yield* request("GET", `/v1/clinic/notifications/appointment_reminders/${sms!.id}`, { token: yield* adminToken })
      expect(shown.body).toMatchObject({ appointment_reminder: { id: sms!.id, status: "delivered", delivery_status: "delivered" } })

      // Twilio retries, and a late report never moves a final state.
      expect((yield* smsStatus(sid, "delivered")).status).toBe(200)
      expect((yield* smsStatus(sid, "undelivered", { ErrorCode: "30003" })).status).toBe(200)
      expect(yield* reminderRow(sms!.id)).toMatchObject({ status: "delivered", delivery_status: "delivered", status_reason: null })
    }))

  it.effect("undelivered is bounced and failed is failed, with the provider's status and error code as the reason", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const patient = yield* bookedPatient
      const [first] = yield* remindersOf(patient.appointmentId)
      const second = yield* request("POST", "/v1/clinic/notifications/appointment_reminders", {
        token, body: { appointment_reminder: { appointment_id: patient.appointmentId, reminder_type: "sms", send_at: new Date(first!.send_at.getTime() + minuteMs).toISOString() } }
      })
      expect(second.status).toBe(201)
      const secondId = (second.body as { appointment_reminder: { id: number } }).appointment_reminder.id
      yield* sendNow(first!.id, first!.send_at)
      yield* sendNow(secondId, new Date(first!.send_at.getTime() + minuteMs))
      const a = (yield* reminderRow(first!.id)).provider_message_id!
      const b = (yield* reminderRow(secondId)).provider_message_id!
      expect(a).not.toBe(b)

      yield* smsStatus(a, "undelivered", { ErrorCode: "30003", ErrorMessage: "Unreachable destination handset" })
      expect(yield* reminderRow(first!.id)).toMatchObject({ status: "failed", delivery_status: "bounced", status_reason: "provider reported undelivered (error 30003)" })
      yield* smsStatus(b, "failed", { ErrorCode: "30008" })
      expect(yield* reminderRow(secondId)).toMatchObject({ status: "failed", delivery_status: "failed", status_reason: "provider reported failed (error 30008)" })
    }))

  it.effect("a voice reminder's call says the reminder and reports to voice_status: no-answer is failed, completed delivered", () =>
    Effect.gen(function*() {
      const standIn = yield* StandIn
      const token = yield* adminToken
      const patient = yield* bookedPatient
      const [sms] = yield* remindersOf(patient.appointmentId)
      const created = yield* request("POST", "/v1/clinic/notifications/appointment_reminders", {
        token, body: { appointment_reminder: { appointment_id: patient.appointmentId, reminder_type: "voice", send_at: sms!.send_at.toISOString() } }
      })
      const voiceId = (created.body as { appointment_reminder: { id: number } }).appointment_reminder.id
      yield* sendNow(voiceId, sms!.send_at)
      const call = standIn.captured.find((c) => c.path.endsWith("/Calls.json") && c.form.To?.[0] === patient.phone)!
      expect(call.form.StatusCallback).toEqual([`${publicBaseUrl}/v1/clinic/webhooks/telephony/voice_status`])
      expect(call.form.Twiml![0]).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?><Response><Say>.*Avery Quinn.*<\/Say><Hangup\/><\/Response>$/)
      const sid = (yield* reminderRow(voiceId)).provider_message_id!
      expect(sid).toMatch(/^CA/)

      expect((yield* callStatus(sid, "ringing")).status).toBe(200)
      expect(yield* reminderRow(voiceId)).toMatchObject({ status: "sent", delivery_status: "sending" })
      expect((yield* callStatus(sid, "no-answer")).status).toBe(200)
      expect(yield* reminderRow(voiceId)).toMatchObject({ status: "failed", delivery_status: "failed", status_reason: "provider reported no-answer" })
      // A later, contradicting report changes nothing.
      yield* callStatus(sid, "completed")
      expect(yield* reminderRow(voiceId)).toMatchObject({ status: "failed", delivery_status: "failed" })
    }))

  it.effect("a callback that arrives before the sender recorded the SID is applied when it does", () =>
    Effect.gen(function*() {
      const standIn = yield* StandIn
      const patient = yield* bookedPatient
      const [sms] = yield* remindersOf(patient.appointmentId)
      // Twilio answers the send only after it has called back.
      const hold = standIn.holdNext()
      const sending = yield* Effect.fork(sendNow(sms!.id, sms!.send_at))
      const sid = yield* Effect.promise(() => hold.received)
      expect((yield* smsStatus(sid, "delivered")).status).toBe(200)
      expect(yield* reminderRow(sms!.id)).toMatchObject({ status: "scheduled", delivery_status: "sending", provider_message_id: null })
      hold.release()
      yield* Fiber.join(sending)
      expect(yield* reminderRow(sms!.id)).toMatchObject({ status: "delivered", delivery_status: "delivered", provider_message_id: sid })
      const [kept] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM reminder_delivery_reports WHERE provider_message_id = ${sid}`).pipe(Effect.orDie)
      expect(kept!.count).toBe(0)
    }))

  it.effect("a status for a SID that is neither a communication nor a reminder is acknowledged and changes no reminder", () =>
    Effect.gen(function*() {
      const before = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ status: string }>`SELECT status || '/' || delivery_status AS status FROM appointment_reminders ORDER BY id`).pipe(Effect.orDie)
      const response = yield* smsStatus(`SM${"f".repeat(32)}`, "delivered")
      expect(response.status).toBe(200)
      const after = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ status: string }>`SELECT status || '/' || delivery_status AS status FROM appointment_reminders ORDER BY id`).pipe(Effect.orDie)
      expect(after).toEqual(before)
    }))
})
