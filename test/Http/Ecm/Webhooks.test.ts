/** Telephony webhooks (ECM §4.3): signatures, inbound SMS and calls, status callbacks, idempotency, TwiML. */
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { eventCounts, insertPatient, staffUser } from "./activitySupport.js"
import {
  assignLeadCareManagers,
  hookPath,
  insertPatientWithPhone,
  placeCall,
  postHook,
  publicBaseUrl,
  sendSms,
  sid,
  systemUserId,
  twilioSettings
} from "./communicationSupport.js"
import { query } from "./support.js"

const emptyTwiml = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`

/** A minimal valid request of every webhook. */
const minimal: ReadonlyArray<readonly [Parameters<typeof hookPath>[0], Record<string, string>]> = [
  ["sms", { MessageSid: "SMsig00000000000000000000000000001", From: "+14155550100", To: "+15550001111", Body: "hello" }],
  ["voice", { CallSid: "CAsig00000000000000000000000000001", From: "+14155550100", To: "+15550001111" }],
  ["sms_status", { MessageSid: "SMsig00000000000000000000000000002", MessageStatus: "delivered" }],
  ["voice_status", { CallSid: "CAsig00000000000000000000000000002", CallStatus: "completed" }],
  ["outbound_call", { CallSid: "CAsig00000000000000000000000000003", From: "+15550001111", To: "+14155550100" }],
  ["recording", { CallSid: "CAsig00000000000000000000000000004", RecordingUrl: "https://api.twilio.com/r/RE1" }]
]

/** Rows of every table a webhook may write. */
const footprint = query<{ sms: number; calls: number; activities: number; events: number; opt_outs: number }>(
  `SELECT (SELECT count(*)::int FROM sms_messages) AS sms, (SELECT count(*)::int FROM voice_calls) AS calls,
    (SELECT count(*)::int FROM ecm_activities) AS activities, (SELECT count(*)::int FROM ecm_events) AS events,
    (SELECT count(*)::int FROM sms_opt_outs) AS opt_outs`
).pipe(Effect.map((rows) => rows[0]!))

layer(TestApp({ twilio: Option.some(twilioSettings()) }))("Telephony webhooks", (it) => {
  it.effect("every webhook: accepted when signed (TwiML, text/xml), 403 when unsigned, wrongly signed or for another URL", () =>
    Effect.gen(function*() {
      for (const [name, params] of minimal) {
        const before = yield* footprint
        for (const signature of ["none", { token: "another-token" }, { header: "not-a-signature" }] as const) {
          const refused = yield* postHook(hookPath(name), params, { signature })
          expect(refused.status, name).toBe(403)
          expect(JSON.parse(refused.text), name).toEqual({ errors: [expect.stringMatching(/^X-Twilio-Signature is (missing|invalid)$/)] })
        }
        // Signed for another path, or with a parameter changed after signing.
        const moved = yield* postHook(hookPath(name), params, { signedUrl: `${publicBaseUrl}/v1/clinic/webhooks/telephony/elsewhere` })
        expect(moved.status, name).toBe(403)
        expect(yield* footprint, name).toEqual(before)
        const accepted = yield* postHook(hookPath(name), params)
        expect(accepted.status, name).toBe(200)
        expect(accepted.contentType, name).toMatch(/^text\/xml/)
        expect(accepted.text, name).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response>.*<\/Response>$/)
      }
    }))

  it.effect("no X-User-Token is needed, and one does not replace the signature", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const [, params] = minimal[0]!
      const withToken = yield* postHook(hookPath("sms"), { ...params, MessageSid: sid("SM") }, { signature: "none", headers: { "x-user-token": token } })
      expect(withToken.status).toBe(403)
    }))

  it.effect("the query string is part of what is signed", () =>
    Effect.gen(function*() {
      const params = { MessageSid: sid("SM"), MessageStatus: "sent" }
      const signedWithout = yield* postHook(`${hookPath("sms_status")}?sms_id=1`, params, { signedUrl: `${publicBaseUrl}${hookPath("sms_status")}` })
      expect(signedWithout.status).toBe(403)
      const signedWith = yield* postHook(`${hookPath("sms_status")}?sms_id=1`, params, { signedUrl: `${publicBaseUrl}${hookPath("sms_status")}?sms_id=1` })
      expect(signedWith.status).toBe(200)
    }))

  it.effect("a signed request with a malformed payload: 422 in the ECM list", () =>
    Effect.gen(function*() {
      const response = yield* postHook(hookPath("sms"), { From: "+14155550100", To: "+15550001111" })
      expect(response.status).toBe(422)
      expect(JSON.parse(response.text)).toEqual({ errors: ["MessageSid can't be blank"] })
    }))

  it.effect("a JSON body is refused before anything runs", () =>
    Effect.gen(function*() {
      const response = yield* request("POST", hookPath("sms"), { body: { MessageSid: "SM1", From: "+1", To: "+1" } })
      expect(response.status).toBe(422)
    }))

  it.effect("inbound SMS: matched to the patient, activity by the system user for the iLCM, event; media kept", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550111", "Ada", "Lovelace")
      const olcm = yield* staffUser("provider", "Olive", "Outreach")
      const ilcm = yield* staffUser("provider", "Ivy", "Intensive")
      yield* assignLeadCareManagers(patient, { olcm: olcm.id, ilcm: ilcm.id })
      const system = yield* systemUserId
      const messageSid = sid("SM")
      const response = yield* postHook(hookPath("sms"), {
        MessageSid: messageSid, From: "(415) 555-0111", To: "+15550001111", Body: "Can you call me?", NumMedia: "1",
        MediaUrl0: "https://api.twilio.com/media/ME1"
      })
      expect(response).toEqual({ status: 200, text: emptyTwiml, contentType: expect.stringMatching(/^text\/xml/) })
      const [row] = yield* query<Record<string, unknown> & { sms_id: number; activity_id: number }>(
        `SELECT id AS sms_id, patient_id, direction, from_number, body, media_urls, status, activity_id FROM sms_messages WHERE telephony_sid = $1`, messageSid)
      expect(row).toEqual({
        sms_id: expect.any(Number), patient_id: patient, direction: "inbound", from_number: "+14155550111", body: "Can you call me?",
        media_urls: ["https://api.twilio.com/media/ME1"], status: "received", activity_id: expect.any(Number)
      })
      const [activity] = yield* query<Record<string, unknown>>(
        `SELECT a.activity_type, a.status, a.performed_by_id, a.assigned_to_id, a.body, e.event_type
         FROM ecm_activities a JOIN ecm_events e ON e.activity_id = a.id WHERE a.id = $1`, row!.activity_id)
      expect(activity).toEqual({
        activity_type: "sms", status: "created", performed_by_id: system, assigned_to_id: ilcm.id,
        body: "Can you call me?\nMedia: https://api.twilio.com/media/ME1", event_type: "sms"
      })
      // The audit trail names the system account, an ordinary account of its own kind.
      const audited = yield* query<{ actor_id: number; system: boolean; email: string }>(`SELECT e.actor_id, u.system, u.email
        FROM audit_events e JOIN users u ON u.id = e.actor_id WHERE e.action = 'ecm_sms.receive' AND e.target_id = $1`, row!.sms_id)
      expect(audited).toEqual([{ actor_id: system, system: true, email: "system@care-coordination.invalid" }])
      expect(system).toBeLessThan(2147483647)
      // The staff detail names the system user as performer.
      const detail = yield* (yield* clientAs(ilcm.token)).ecmActivities.show({ path: { patient_id: patient, id: row!.activity_id } })
      expect(detail.activity).toMatchObject({ performed_by_id: system, performed_by_name: "Care Coordination System", text_message_id: row!.sms_id })
    }))

  it.effect("inbound SMS without a lead care manager is assigned to the system user (unassigned); oLCM when no iLCM", () =>
    Effect.gen(function*() {
      const alone = yield* insertPatientWithPhone("+14155550112")
      const withOlcm = yield* insertPatientWithPhone("+14155550113")
      const olcm = yield* staffUser("support", "Olive", "Outreach")
      yield* assignLeadCareManagers(withOlcm, { olcm: olcm.id })
      const system = yield* systemUserId
      for (const from of ["+14155550112", "+14155550113"]) {
        expect((yield* postHook(hookPath("sms"), { MessageSid: sid("SM"), From: from, To: "+15550001111", Body: "hi" })).status).toBe(200)
      }
      const rows = yield* query<{ patient_id: number; assigned_to_id: number }>(
        `SELECT patient_id, assigned_to_id FROM ecm_activities WHERE patient_id IN ($1, $2) ORDER BY patient_id`, alone, withOlcm)
      expect(rows).toEqual([{ patient_id: alone, assigned_to_id: system }, { patient_id: withOlcm, assigned_to_id: olcm.id }])
    }))

  it.effect("unknown number: the message is kept, unmatched, listed to admins; the answer is normal", () =>
    Effect.gen(function*() {
      const messageSid = sid("SM")
      const response = yield* postHook(hookPath("sms"), { MessageSid: messageSid, From: "+14155550999", To: "+15550001111", Body: "Who is this?" })
      expect(response).toMatchObject({ status: 200, text: emptyTwiml })
      const admin = yield* signIn()
      const list = yield* (yield* clientAs(admin)).ecmCommunicationsAdmin.unmatchedSms({ urlParams: {} })
      expect(list.sms).toContainEqual(expect.objectContaining({ telephony_sid: messageSid, from: "+14155550999", body: "Who is this?", media_urls: [] }))
      const staff = yield* staffUser()
      expect((yield* request("GET", "/v1/admin/clinic/ecm/communications/unmatched_sms", { token: staff.token })).status).toBe(403)
    }))

  it.effect("the same inbound SMS delivered twice, or twenty times at once, is recorded once", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550114")
      const params = { MessageSid: sid("SM"), From: "+14155550114", To: "+15550001111", Body: "twice" }
      expect((yield* postHook(hookPath("sms"), params)).status).toBe(200)
      const after = yield* footprint
      expect((yield* postHook(hookPath("sms"), params)).status).toBe(200)
      expect(yield* footprint).toEqual(after)
      const concurrent = { ...params, MessageSid: sid("SM") }
      const responses = yield* Effect.all(Array.from({ length: 20 }, () => postHook(hookPath("sms"), concurrent)), { concurrency: "unbounded" })
      expect(responses.every((r) => r.status === 200)).toBe(true)
      const [counted] = yield* query<{ sms: number; activities: number }>(
        `SELECT (SELECT count(*)::int FROM sms_messages WHERE telephony_sid = $1) AS sms,
          (SELECT count(*)::int FROM ecm_activities WHERE patient_id = $2) AS activities`, concurrent.MessageSid, patient)
      expect(counted).toEqual({ sms: 1, activities: 2 })
    }))

  it.effect("auto-reply is not sent to STOP; inbound voice forwards to the LCM's phone, else voicemail", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550115")
      const lcm = yield* staffUser("provider", "Ivy", "Intensive")
      yield* query(`UPDATE users SET phone = '+14155550901' WHERE id = $1`, lcm.id)
      yield* assignLeadCareManagers(patient, { ilcm: lcm.id })
      const callSid = sid("CA")
      const forwarded = yield* postHook(hookPath("voice"), { CallSid: callSid, From: "+14155550115", To: "+15550001111", CallStatus: "ringing" })
      expect(forwarded.status).toBe(200)
      expect(forwarded.text).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Say>Connecting you to your care manager.</Say><Dial timeout="25">+14155550901</Dial></Response>`)
      // A retry answers the same.
      expect((yield* postHook(hookPath("voice"), { CallSid: callSid, From: "+14155550115", To: "+15550001111", CallStatus: "ringing" })).text).toBe(forwarded.text)
      const [call] = yield* query<{ activity_id: number; forwarded_to: string }>(`SELECT activity_id, forwarded_to FROM voice_calls WHERE telephony_sid = $1`, callSid)
      expect(call!.forwarded_to).toBe("+14155550901")
      const [activity] = yield* query<{ activity_type: string; assigned_to_id: number; event_type: string }>(
        `SELECT a.activity_type, a.assigned_to_id, e.event_type FROM ecm_activities a JOIN ecm_events e ON e.activity_id = a.id WHERE a.id = $1`,
        call!.activity_id)
      expect(activity).toEqual({ activity_type: "call", assigned_to_id: lcm.id, event_type: "call" })

      const unknown = yield* postHook(hookPath("voice"), { CallSid: sid("CA"), From: "+14155550998", To: "+15550001111" })
      expect(unknown.text).toContain("<Record ")
      expect(unknown.text).toContain(`action="http://localhost/v1/clinic/webhooks/telephony/recording"`)
    }))

  it.effect("voicemail: the recording and its transcription fill the call and the activity's transcript, once", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatientWithPhone("+14155550116")
      const callSid = sid("CA")
      const answer = yield* postHook(hookPath("voice"), { CallSid: callSid, From: "+14155550116", To: "+15550001111" })
      expect(answer.text).toContain("<Record ")
      const recorded = yield* postHook(hookPath("recording"), { CallSid: callSid, RecordingUrl: "https://api.twilio.com/r/RE9", RecordingDuration: "12" })
      expect(recorded.text).toContain("Goodbye")
      const transcribed = { CallSid: callSid, TranscriptionText: "Please call me back about my ride", TranscriptionStatus: "completed" }
      expect((yield* postHook(hookPath("recording"), transcribed)).text).toBe(emptyTwiml)
      const [first] = yield* query<{ recording_url: string; transcript: string; updated_at: Date; activity_transcript: string; activity_updated: Date }>(
        `SELECT c.recording_url, c.transcript, c.updated_at, a.transcript AS activity_transcript, a.updated_at AS activity_updated
         FROM voice_calls c JOIN ecm_activities a ON a.id = c.activity_id WHERE c.telephony_sid = $1`, callSid)
      expect(first).toMatchObject({
        recording_url: "https://api.twilio.com/r/RE9", transcript: "Please call me back about my ride", activity_transcript: "Please call me back about my ride"
      })
      const [linked] = yield* query<{ activity_id: number }>(`SELECT activity_id FROM voice_calls WHERE telephony_sid = $1`, callSid)
      const staff = yield* staffUser()
      const detail = yield* (yield* clientAs(staff.token)).ecmActivities.show({ path: { patient_id: patient, id: linked!.activity_id } })
      expect(detail.activity).toMatchObject({
        transcript: "Please call me back about my ride", telephony_sms: null,
        telephony_call: { telephony_sid: callSid, direction: "inbound", recording_url: "https://api.twilio.com/r/RE9", transcript: "Please call me back about my ride" }
      })
      yield* postHook(hookPath("recording"), transcribed)
      const [second] = yield* query<{ updated_at: Date; activity_updated: Date }>(
        `SELECT c.updated_at, a.updated_at AS activity_updated FROM voice_calls c JOIN ecm_activities a ON a.id = c.activity_id WHERE c.telephony_sid = $1`, callSid)
      expect(second).toEqual({ updated_at: first!.updated_at, activity_updated: first!.activity_updated })
      expect(patient).toBeGreaterThan(0)
    }))
})

layer(TestApp({ twilio: Option.some(twilioSettings({ smsAutoReply: Option.some("Thanks! Your care team will reply soon. Reply STOP to opt out.") })) }))(
  "Telephony webhooks: auto-reply",
  (it) => {
    it.effect("a configured auto-reply answers inbound SMS, but not STOP or START", () =>
      Effect.gen(function*() {
        const reply = yield* postHook(hookPath("sms"), { MessageSid: sid("SM"), From: "+14155550120", To: "+15550001111", Body: "Hi" })
        expect(reply.text).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Message>Thanks! Your care team will reply soon. Reply STOP to opt out.</Message></Response>`)
        const stop = yield* postHook(hookPath("sms"), { MessageSid: sid("SM"), From: "+14155550120", To: "+15550001111", Body: "STOP" })
        expect(stop.text).toBe(emptyTwiml)
      }))
  }
)

layer(TestApp({ twilio: Option.some(twilioSettings()) }))("Telephony webhooks: status callbacks", (it) => {
  const sendReminder = (token: string, patient: number) => sendSms(token, patient, { phone_number: "4155550140", body: "Reminder" })
  const state = (smsId: number) =>
    Effect.map(
      query<Record<string, unknown>>(
        `SELECT s.status, s.error_code, s.error_message, s.updated_at, a.status AS activity_status, e.status AS event_status
         FROM sms_messages s JOIN ecm_activities a ON a.id = s.activity_id JOIN ecm_events e ON e.activity_id = a.id WHERE s.id = $1`, smsId),
      (rows) => rows[0]!
    )
  // A message handed to the provider has its SID (null only while it is being handed over).
  const smsStatus = (sent: { sms: { id: number; telephony_sid: string | null } }, status: string, extra: Record<string, string> = {}) =>
    postHook(`${hookPath("sms_status")}?sms_id=${sent.sms.id}`, { MessageSid: sent.sms.telephony_sid!, MessageStatus: status, ...extra })

  it.effect("sent then delivered completes the activity; a late sent, and repeats, change nothing", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const sent = yield* sendReminder(me.token, patient)
      expect((yield* smsStatus(sent, "sent")).status).toBe(200)
      expect(yield* state(sent.sms.id)).toMatchObject({ status: "sent", activity_status: "created", event_status: "attempted" })
      expect((yield* smsStatus(sent, "delivered")).text).toBe(emptyTwiml)
      const delivered = yield* state(sent.sms.id)
      expect(delivered).toMatchObject({ status: "delivered", activity_status: "complete", event_status: "complete" })
      yield* smsStatus(sent, "sent")
      yield* smsStatus(sent, "delivered")
      yield* smsStatus(sent, "queued")
      expect(yield* state(sent.sms.id)).toEqual(delivered)
    }))

  it.effect("failed keeps the activity open, stores the error, opens one follow-up task for the coordinator", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const sent = yield* sendReminder(me.token, patient)
      const responses = yield* Effect.all(
        Array.from({ length: 10 }, () => smsStatus(sent, "undelivered", { ErrorCode: "30003", ErrorMessage: "Unreachable destination handset" })),
        { concurrency: "unbounded" }
      )
      expect(responses.every((r) => r.status === 200)).toBe(true)
      yield* smsStatus(sent, "delivered")
      expect(yield* state(sent.sms.id)).toMatchObject({
        status: "undelivered", error_code: "30003", error_message: "Unreachable destination handset", activity_status: "created"
      })
      const tasks = yield* query<{ id: number; activity_type: string; assigned_to_id: number; message: string }>(
        `SELECT id, activity_type, assigned_to_id, message FROM ecm_activities WHERE patient_id = $1 AND activity_type = 'task'`, patient)
      expect(tasks).toEqual([{ id: expect.any(Number), activity_type: "task", assigned_to_id: me.id, message: expect.stringMatching(/Verify the patient's contact details/) }])
      // The audit trail names the system account as the task's author.
      const audited = yield* query<{ actor_id: number }>(
        `SELECT actor_id FROM audit_events WHERE action = 'ecm_activity.create' AND target_type = 'ecm_activity' AND target_id = $1`, tasks[0]!.id)
      expect(audited).toEqual([{ actor_id: yield* systemUserId }])
    }))

  it.effect("a status callback found by MessageSid alone (no sms_id) works too; unknown SIDs and statuses are acknowledged", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const sent = yield* sendReminder(me.token, patient)
      expect((yield* postHook(hookPath("sms_status"), { MessageSid: sent.sms.telephony_sid!, SmsStatus: "delivered" })).status).toBe(200)
      expect(yield* state(sent.sms.id)).toMatchObject({ status: "delivered" })
      const before = yield* footprint
      expect((yield* postHook(hookPath("sms_status"), { MessageSid: sid("SM"), MessageStatus: "delivered" })).status).toBe(200)
      expect((yield* postHook(hookPath("sms_status"), { MessageSid: sent.sms.telephony_sid!, MessageStatus: "exploded" })).status).toBe(200)
      expect(yield* footprint).toEqual(before)
    }))

  it.effect("calls: out-of-order statuses, duration in minutes rounded up, completed completes; no-answer opens a follow-up", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const memory = yield* MemoryTelephony
      const placed = yield* placeCall(me.token, patient, "4155550141")
      const sentCall = (yield* memory.sent).find((s) => s.sid === placed.call.telephony_sid)!
      expect(sentCall.url).toBe(`http://localhost/v1/clinic/webhooks/telephony/outbound_call?call_id=${placed.call.id}`)
      expect(sentCall.statusCallback).toBe(`http://localhost/v1/clinic/webhooks/telephony/voice_status?call_id=${placed.call.id}`)
      const status = (s: string, extra: Record<string, string> = {}) =>
        postHook(`${hookPath("voice_status")}?call_id=${placed.call.id}`, { CallSid: placed.call.telephony_sid!, CallStatus: s, ...extra })
      yield* status("completed", { CallDuration: "61" })
      yield* status("ringing")
      yield* status("in-progress")
      const [row] = yield* query<Record<string, unknown>>(
        `SELECT c.status, c.duration_seconds, a.status AS activity_status, e.duration, e.status AS event_status
         FROM voice_calls c JOIN ecm_activities a ON a.id = c.activity_id JOIN ecm_events e ON e.activity_id = a.id WHERE c.id = $1`, placed.call.id)
      expect(row).toEqual({ status: "completed", duration_seconds: 61, activity_status: "complete", duration: 2, event_status: "complete" })

      const missed = yield* placeCall(me.token, patient, "4155550141")
      for (let i = 0; i < 2; i++) {
        yield* postHook(`${hookPath("voice_status")}?call_id=${missed.call.id}`, { CallSid: missed.call.telephony_sid!, CallStatus: "no-answer", CallDuration: "0" })
      }
      const tasks = yield* query<{ message: string }>(`SELECT message FROM ecm_activities WHERE patient_id = $1 AND activity_type = 'task'`, patient)
      expect(tasks).toEqual([{ message: expect.stringMatching(/^Call to \+14155550141 was not answered \(no-answer\)/) }])
    }))

  it.effect("a call cancelled before it was answered cancels its activity and counts as nothing; no-answer stays an attempt", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const place = Effect.map(placeCall(me.token, patient, "4155550142"), (r) => r.call)
      const outcome = (call: { id: number }) =>
        query<{ activity_status: string; event_status: string }>(`SELECT a.status AS activity_status, e.status AS event_status
          FROM voice_calls c JOIN ecm_activities a ON a.id = c.activity_id JOIN ecm_events e ON e.activity_id = a.id WHERE c.id = $1`, call.id)
      const cancelled = yield* place
      yield* postHook(`${hookPath("voice_status")}?call_id=${cancelled.id}`, { CallSid: cancelled.telephony_sid!, CallStatus: "ringing" })
      yield* postHook(`${hookPath("voice_status")}?call_id=${cancelled.id}`, { CallSid: cancelled.telephony_sid!, CallStatus: "canceled", CallDuration: "0" })
      expect(yield* outcome(cancelled)).toEqual([{ activity_status: "cancelled", event_status: "cancelled" }])
      const missed = yield* place
      yield* postHook(`${hookPath("voice_status")}?call_id=${missed.id}`, { CallSid: missed.telephony_sid!, CallStatus: "busy", CallDuration: "0" })
      expect(yield* outcome(missed)).toEqual([{ activity_status: "created", event_status: "attempted" }])
      // The busy call opened a follow-up task (counted by type only).
      const day = new Date().toISOString().slice(0, 10)
      const { counts } = yield* eventCounts(me.token, patient, { start_date: day, end_date: day })
      expect(counts).toMatchObject({
        total: 3, by_type: { call: 2, task: 1 }, prtf_categories: { telehealth_outreach: 1, telehealth_encounters: 0, in_person_outreach: 0, in_person_encounters: 0 }
      })
    }))

  it.effect("outbound call TwiML says who is calling and bridges to the caller's phone, else asks to call back", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser("provider", "Pat", "Performer")
      const { call } = yield* placeCall(me.token, patient, "4155550142")
      const path = `${hookPath("outbound_call")}?call_id=${call.id}`
      const params = { CallSid: call.telephony_sid!, From: "+15550001111", To: "+14155550142" }
      expect((yield* postHook(path, params)).text).toContain("Please call us back")
      yield* query(`UPDATE users SET phone = '415-555-0902' WHERE id = $1`, me.id)
      expect((yield* postHook(path, params)).text).toBe(
        `<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello, this is Pat from your care team. Connecting you now.</Say><Dial timeout="25">+14155550902</Dial></Response>`
      )
    }))
})

layer(TestApp({ twilio: Option.none() }))("Telephony webhooks without an auth token", (it) => {
  it.effect("403 and nothing written, however the request is signed", () =>
    Effect.gen(function*() {
      const before = yield* footprint
      for (const [name, params] of minimal) {
        const response = yield* postHook(hookPath(name), params)
        expect(response.status, name).toBe(403)
        expect(JSON.parse(response.text)).toEqual({ errors: ["Webhook signatures cannot be checked: TWILIO_AUTH_TOKEN is not configured"] })
      }
      expect(yield* footprint).toEqual(before)
    }))
})

layer(TestApp({ twilio: Option.some(twilioSettings()), publicBaseUrl: "https://api.example.org", trustedProxies: { _tag: "Hops", hops: 1 } }))(
  "Telephony webhooks behind a trusted proxy",
  (it) => {
    it.effect("signed for PUBLIC_BASE_URL, or for the URL the proxy reports (X-Forwarded-Proto/Host)", () =>
      Effect.gen(function*() {
        const params = { MessageSid: sid("SM"), MessageStatus: "sent" }
        const path = hookPath("sms_status")
        expect((yield* postHook(path, params, { signedUrl: `https://api.example.org${path}` })).status).toBe(200)
        const viaProxy = yield* postHook(path, params, {
          signedUrl: `https://hooks.example.org${path}`,
          headers: { "x-forwarded-proto": "https", "x-forwarded-host": "hooks.example.org" }
        })
        expect(viaProxy.status).toBe(200)
        const notForwarded = yield* postHook(path, params, { signedUrl: `https://hooks.example.org${path}` })
        expect(notForwarded.status).toBe(403)
      }))
  }
)

layer(TestApp({ twilio: Option.some(twilioSettings()), publicBaseUrl: "https://api.example.org" }))(
  "Telephony webhooks without trusted proxies",
  (it) => {
    it.effect("forwarded headers from an untrusted peer do not change the URL checked", () =>
      Effect.gen(function*() {
        const path = hookPath("sms_status")
        const spoofed = yield* postHook(path, { MessageSid: sid("SM"), MessageStatus: "sent" }, {
          signedUrl: `https://evil.example.org${path}`,
          headers: { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example.org" }
        })
        expect(spoofed.status).toBe(403)
      }))
  }
)
