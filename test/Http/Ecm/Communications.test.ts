/** ECM communications (ECM §4.3): outbound SMS and calls, phone normalisation, refusals, opt-outs, reconciliation. */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import pg from "pg"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { OutboxTelephonyWithCallbacks } from "../../../src/Layers/OutboxTelephony.js"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { Telephony } from "../../../src/Services/Telephony.js"
import { clientAs, request, TestApp, testConfig } from "../../support/app.js"
import { insertPatient, staffUser } from "./activitySupport.js"
import {
  authToken,
  callUrl,
  hookPath,
  insertPatientWithPhone,
  placeCall,
  postHook,
  publicBaseUrl,
  sendSms,
  smsUrl,
  twilioSettings
} from "./communicationSupport.js"
import { query } from "./support.js"

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

layer(TestApp({ twilio: Option.some(twilioSettings()) }))("ECM communications: outbound", (it) => {
  it.effect("SMS: sent through Telephony, recorded, activity and event created; status callback URL names the record", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Ada", "Lovelace")
      const me = yield* staffUser("provider", "Pat", "Performer")
      const memory = yield* MemoryTelephony
      yield* memory.clear
      const response = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "(415) 555-0132", body: "See you tomorrow" } } })
      expect(response.status).toBe(201)
      const body = response.body as { message: string; sms: Record<string, unknown>; activity: Record<string, unknown> }
      expect(body.message).toBe("SMS sent successfully")
      const [sent] = yield* memory.sent
      expect(sent).toMatchObject({ kind: "sms", to: "+14155550132", body: "See you tomorrow" })
      expect(body.sms).toEqual({
        id: expect.any(Number), telephony_sid: sent!.sid, to: "+14155550132", from: sent!.from, body: "See you tomorrow",
        status: "queued", direction: "outbound", segments: 1, created_at: expect.stringMatching(iso)
      })
      expect(sent!.statusCallback).toBe(`http://localhost/v1/clinic/webhooks/telephony/sms_status?sms_id=${body.sms.id}`)
      expect(body.activity).toEqual({
        id: expect.any(Number), activity_type: "sms", status: "created", patient_id: patient, performed_by_id: me.id, assigned_to_id: me.id
      })
      const { activity } = yield* (yield* clientAs(me.token)).ecmActivities.show({ path: { patient_id: patient, id: body.activity.id as number } })
      expect(activity).toMatchObject({
        text_message_id: body.sms.id, body: "See you tomorrow", event: { event_type: "sms", status: "attempted" }, telephony_call: null,
        telephony_sms: {
          id: body.sms.id, telephony_sid: sent!.sid, to: "+14155550132", body: "See you tomorrow", status: "queued", direction: "outbound",
          segments: 1, media_urls: [], error_code: null, created_at: body.sms.created_at, updated_at: expect.stringMatching(iso)
        }
      })
    }))

  it.effect("phone numbers in national, dashed, parenthesised and E.164 forms are normalised (US default)", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      for (const [input, e164] of [
        ["4155550132", "+14155550132"], ["415-555-0132", "+14155550132"], ["(415) 555-0132", "+14155550132"],
        ["+1 415 555 0132", "+14155550132"], ["+14155550132", "+14155550132"], ["1-415-555-0132", "+14155550132"],
        ["+44 20 7946 0958", "+442079460958"]
      ] as const) {
        const { call } = yield* placeCall(me.token, patient, input)
        expect(call.to, input).toBe(e164)
      }
    }))

  it.effect("invalid and missing numbers, over-long bodies: 422 in the ECM list, nothing sent or written", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const memory = yield* MemoryTelephony
      yield* memory.clear
      const [before] = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM sms_messages`)
      const invalid = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "555-12", body: "hi" } } })
      expect(invalid).toMatchObject({ status: 422, body: { errors: ["Phone number is invalid"] } })
      const missing = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { body: "hi" } } })
      expect(missing).toMatchObject({ status: 422, body: { errors: ["Phone number can't be blank"] } })
      const missingCall = yield* request("POST", callUrl(patient), { token: me.token, body: { call: {} } })
      expect(missingCall).toMatchObject({ status: 422, body: { errors: ["Phone number can't be blank"] } })
      const long = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550132", body: "x".repeat(1601) } } })
      expect(long.status).toBe(422)
      expect((long.body as { errors: Array<string> }).errors[0]).toMatch(/^Body /)
      expect(yield* memory.sent).toEqual([])
      const [after] = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM sms_messages`)
      expect(after!.n).toBe(before!.n)
    }))

  it.effect("over 160 characters is sent and counted in segments", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const { sms } = yield* sendSms(me.token, patient, { phone_number: "4155550132", body: "y".repeat(400) })
      expect(sms.segments).toBe(3)
    }))

  it.effect("unknown patient: 404; parents: 403; no token: 401", () =>
    Effect.gen(function*() {
      const me = yield* staffUser()
      const unknown = yield* request("POST", smsUrl(999_999), { token: me.token, body: { sms: { phone_number: "4155550132", body: "hi" } } })
      expect(unknown).toMatchObject({ status: 404, body: { errors: ["Patient not found"] } })
      const anonymous = yield* request("POST", callUrl(1), { body: { call: { phone_number: "4155550132" } } })
      expect(anonymous.status).toBe(401)
    }))

  it.effect("a provider rejection: 422 with Twilio's reason, the record stays failed, no activity or event", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const memory = yield* MemoryTelephony
      yield* memory.failNext("The 'To' number +14155550199 is not a valid phone number.")
      const sms = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550199", body: "hi" } } })
      expect(sms).toMatchObject({ status: 422, body: { errors: ["Failed to send SMS: The 'To' number +14155550199 is not a valid phone number."] } })
      yield* memory.failNext("Account suspended")
      const call = yield* request("POST", callUrl(patient), { token: me.token, body: { call: { phone_number: "4155550199" } } })
      expect(call).toMatchObject({ status: 422, body: { errors: ["Failed to place call: Account suspended"] } })
      const smsRows = yield* query<{ status: string; error_message: string; activity_id: number | null }>(
        `SELECT status, error_message, activity_id FROM sms_messages WHERE patient_id = $1`, patient)
      expect(smsRows).toEqual([{ status: "failed", error_message: "The 'To' number +14155550199 is not a valid phone number.", activity_id: null }])
      const callRows = yield* query<{ status: string }>(`SELECT status FROM voice_calls WHERE patient_id = $1`, patient)
      expect(callRows).toEqual([{ status: "failed" }])
      const [activities] = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM ecm_activities WHERE patient_id = $1`, patient)
      expect(activities!.n).toBe(0)
    }))

  it.effect("a number that answered STOP is refused until START; both show in the activity timeline", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550177")
      const me = yield* staffUser()
      const stop = yield* postHook(hookPath("sms"), { MessageSid: "SMstop000000000000000000000000001", From: "+14155550177", To: "+15550001111", Body: "Stop" })
      expect(stop.status).toBe(200)
      const refused = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "415.555.0177", body: "hi" } } })
      expect(refused).toMatchObject({ status: 422, body: { errors: [expect.stringMatching(/opted out of SMS/)] } })
      // Another number for the same patient is refused too: the patient has opted out.
      const other = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550178", body: "hi" } } })
      expect(other.status).toBe(422)
      const start = yield* postHook(hookPath("sms"), { MessageSid: "SMstart00000000000000000000000001", From: "+14155550177", To: "+15550001111", Body: "START" })
      expect(start.status).toBe(200)
      const sent = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550177", body: "Welcome back" } } })
      expect(sent.status).toBe(201)
      const subjects = yield* query<{ subject: string }>(
        `SELECT subject FROM ecm_activities WHERE patient_id = $1 AND subject LIKE 'Inbound SMS:%' ORDER BY id`, patient)
      expect(subjects.map((s) => s.subject)).toEqual(["Inbound SMS: opted out of SMS", "Inbound SMS: opted back in to SMS"])
    }))
})

/**
 * A provider that accepts the message and, before answering, takes away a table the activity
 * needs (over a connection of its own), so the transaction after the send fails.
 */
const BreakingTelephony = Layer.effect(
  Telephony,
  Effect.map(AppConfig, (config) =>
    Telephony.of({
      sendSms: (sms) =>
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: Redacted.value(Option.getOrThrow(config.databaseUrl)) })
          await client.connect()
          await client.query("ALTER TABLE ecm_events RENAME TO ecm_events_away")
          await client.end()
          return { sid: "SMbroken0000000000000000000000001", to: sms.to, from: "+15550001111", status: "queued", createdAt: new Date() }
        }),
      placeCall: () => Effect.dieMessage("not used")
    }))
)

const BreakingApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(BreakingTelephony, MemoryObjectStore.layer, MemoryMailer.layer, MemoryPush.layer)),
  Layer.provideMerge(testConfig({ twilio: Option.some(twilioSettings()) })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

layer(BreakingApp)("ECM communications: database failure after sending", (it) => {
  it.effect("the record is still there and the provider's status callback reconciles it", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const response = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550132", body: "Sent, then lost" } } })
      expect(response.status).toBeGreaterThanOrEqual(500)
      yield* query(`ALTER TABLE ecm_events_away RENAME TO ecm_events`)
      const [kept] = yield* query<{ id: number; telephony_sid: string | null; activity_id: number | null; body: string }>(
        `SELECT id, telephony_sid, activity_id, body FROM sms_messages WHERE patient_id = $1`, patient)
      expect(kept).toEqual({ id: expect.any(Number), telephony_sid: null, activity_id: null, body: "Sent, then lost" })
      const callback = yield* postHook(`${hookPath("sms_status")}?sms_id=${kept!.id}`, {
        MessageSid: "SMbroken0000000000000000000000001", MessageStatus: "delivered"
      })
      expect(callback.status).toBe(200)
      const [reconciled] = yield* query<{ telephony_sid: string; status: string; activity_id: number }>(
        `SELECT telephony_sid, status, activity_id FROM sms_messages WHERE id = $1`, kept!.id)
      expect(reconciled).toMatchObject({ telephony_sid: "SMbroken0000000000000000000000001", status: "delivered", activity_id: expect.any(Number) })
      const [activity] = yield* query<{ status: string; performed_by_id: number; text_message_id: number }>(
        `SELECT status, performed_by_id, text_message_id FROM ecm_activities WHERE id = $1`, reconciled!.activity_id)
      expect(activity).toEqual({ status: "complete", performed_by_id: me.id, text_message_id: kept!.id })
    }))
})

/** The test server's port, known once the server is up; the outbox posts its callbacks there. */
let serverPort = 0

const RoundTripApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(
    OutboxTelephonyWithCallbacks({
      authToken,
      deliverTo: (url) => url.replace(publicBaseUrl, `http://127.0.0.1:${serverPort}`)
    }),
    MemoryObjectStore.layer,
    MemoryMailer.layer,
    MemoryPush.layer
  )),
  Layer.provideMerge(testConfig({ twilio: Option.some(twilioSettings()) })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

layer(RoundTripApp)("ECM communications through the outbox with its status callbacks", (it) => {
  it.effect("the outbox reports delivered and completed, signed: the activities complete, the call gets its minutes", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      serverPort = address._tag === "TcpAddress" ? address.port : 0
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const sms = yield* request("POST", smsUrl(patient), { token: me.token, body: { sms: { phone_number: "4155550150", body: "Round trip" } } })
      expect(sms.status).toBe(201)
      const call = yield* request("POST", callUrl(patient), { token: me.token, body: { call: { phone_number: "4155550150" } } })
      expect(call.status).toBe(201)
      const rows = yield* query<{ activity_type: string; status: string; duration: number | null }>(
        `SELECT a.activity_type, a.status, e.duration FROM ecm_activities a JOIN ecm_events e ON e.activity_id = a.id
         WHERE a.patient_id = $1 ORDER BY a.id`, patient)
      expect(rows).toEqual([
        { activity_type: "sms", status: "complete", duration: null },
        { activity_type: "call", status: "complete", duration: 1 }
      ])
      const [record] = yield* query<{ status: string }>(`SELECT status FROM sms_messages WHERE patient_id = $1`, patient)
      expect(record!.status).toBe("delivered")
    }))
})
