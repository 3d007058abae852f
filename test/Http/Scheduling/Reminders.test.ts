/**
 * Appointment reminders (general §2.14, §4.16): the default schedule, the rules of a new
 * reminder, sending at `send_at` exactly once through the real queue (graphile-worker's `runOnce`),
 * reschedule and cancel, the catalogue's languages, opted-out SMS, a crash between claim and send.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { MemoryPush, PushError } from "../../../src/Layers/MemoryPush.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { ReminderDeliveries } from "../../../src/Services/Scheduling/ReminderDeliveries.js"
import { ReminderSender } from "../../../src/Services/Scheduling/ReminderSender.js"
import { sendReminderTask } from "../../../src/Services/Scheduling/ReminderTasks.js"
import { reminderReasons } from "../../../src/Services/Scheduling/RemindersRepo.js"
import { request, signIn, TestApp } from "../../support/app.js"
import { insertPatient, insertSmsOptOut } from "../../support/fixtures.js"
import { adminToken, bookSlot, createSlot, hoursFromNow, insertUser, makeProvider, password } from "./helpers.js"

const path = "/v1/clinic/notifications/appointment_reminders"
const hourMs = 3_600_000
const minuteMs = 60_000
const reminderKeys = [
  "appointment_id", "created_at", "delivery_status", "id", "language", "message", "reminder_type", "send_at", "sent_at",
  "status", "status_reason", "updated_at"
]

interface Reminder {
  readonly id: number
  readonly appointment_id: number
  readonly reminder_type: string
  readonly status: string
  readonly delivery_status: string
  readonly send_at: string
  readonly sent_at: string | null
  readonly message: string | null
  readonly language: string
  readonly status_reason: string | null
}
interface Created { readonly appointment_reminder: Reminder; readonly reminders: ReadonlyArray<Reminder> }

let phoneCounter = 100
let emailCounter = 0

/** A parent with a patient (phone, email, language as given) and a provider named Avery Quinn. */
const family = (options: { phone?: string | null; email?: string | null; language?: string; optedOut?: boolean; linked?: boolean } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const token = yield* adminToken
    const provider = yield* makeProvider(token, "provider", { first_name: "Avery", last_name: "Quinn" })
    const parentId = yield* insertUser({ role: "parent" })
    const parentToken = yield* signIn((yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${parentId}`)[0]!.email, password)
    const phone = options.phone === undefined ? `+1415555${String(++phoneCounter).padStart(4, "0")}` : options.phone
    const email = options.email === undefined ? `family${++emailCounter}.${Date.now()}@reminders.test` : options.email
    // Without the patient's own contact the parent's account is used: keep the account's out of the way.
    yield* sql`UPDATE users SET phone = NULL WHERE id = ${parentId}`
    // Unlinked: no parent account, so no account email or device to fall back on.
    const patientId = yield* insertPatient({
      first_name: "Robin", last_name: "Vale", date_of_birth: "2015-06-01", user_id: options.linked === false ? null : parentId, phone, email,
      language: options.language ?? "en"
    })
    // The number answered STOP (the telephony webhook records it in sms_opt_outs).
    if (options.optedOut === true && phone !== null) yield* insertSmsOptOut(phone)
    const parentEmail = (yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${parentId}`)[0]!.email
    return { token, parentToken, parentId, provider, patientId, phone, email, signInParent: signIn(parentEmail, password) }
  }).pipe(Effect.orDie)

type Family = Effect.Effect.Success<ReturnType<typeof family>>

/** A booked appointment `hours` from the test clock's now; its id and time. */
const appointmentIn = (f: Family, hours: number) =>
  Effect.gen(function*() {
    // Slots are checked against the server's clock, the shared TestClock: count from it.
    const base = yield* Clock.currentTimeMillis
    const created = yield* createSlot(f.token, { provider_id: f.provider.id, start_time: hoursFromNow(hours, base), end_time: hoursFromNow(hours + 1, base) })
    if (created.status !== 201) return yield* Effect.dieMessage(`slot: ${created.status} ${JSON.stringify(created.body)}`)
    const slot = (created.body as { available_slot: { id: number } }).available_slot.id
    const { appointmentId } = yield* bookSlot(f.token, slot, f.patientId)
    const [row] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ scheduled_at: Date }>`SELECT scheduled_at FROM appointments WHERE id = ${appointmentId}`).pipe(Effect.orDie)
    return { id: appointmentId, at: row!.scheduled_at }
  })

const ofType = (reminders: ReadonlyArray<Reminder>, type: string) => reminders.filter((r) => r.reminder_type === type)

const create = (token: string, reminder: Record<string, unknown>) => request("POST", path, { token, body: { appointment_reminder: reminder } })

const listOf = (token: string, appointmentId: number) =>
  Effect.map(request("GET", `${path}?appointment_id=${appointmentId}`, { token }), (r) => (r.body as { appointment_reminders: Array<Reminder> }).appointment_reminders)

const jobsOf = (reminderIds: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ key: string; run_at: Date; attempts: number; id: string }>`SELECT key, run_at, attempts, id::text FROM graphile_worker._private_jobs
      WHERE key IN ${sql.in(reminderIds.length === 0 ? ["none"] : reminderIds.map((id) => `appointment_reminder:${id}`))} ORDER BY key`).pipe(Effect.orDie)

const rowOf = (id: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string; delivery_status: string; status_reason: string | null; sent_at: Date | null; attempts: number; provider_message_id: string | null }>`
      SELECT status, delivery_status, status_reason, sent_at, attempts, provider_message_id FROM appointment_reminders WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

/**
 * Moves the test clock on, then makes the queue's jobs due by that clock (PostgreSQL's own clock
 * does not move with it) and runs everything due once, as a worker would.
 */
const advanceAndRun = (ms: number) =>
  Effect.gen(function*() {
    yield* TestClock.adjust(ms)
    const now = new Date(yield* Clock.currentTimeMillis)
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE run_at <= ${now} AND locked_at IS NULL`.pipe(Effect.orDie)
    yield* runDueJobs([sendReminderTask]).pipe(Effect.provide(ReminderSender.Default))
  })

const smsTo = (phone: string | null) =>
  Effect.map(Effect.flatMap(MemoryTelephony, (t) => t.sent), (sent) => sent.filter((s) => s.to === phone && s.kind === "sms"))
const callsTo = (phone: string | null) =>
  Effect.map(Effect.flatMap(MemoryTelephony, (t) => t.sent), (sent) => sent.filter((s) => s.to === phone && s.kind === "call"))
const mailTo = (email: string | null) =>
  Effect.map(Effect.flatMap(MemoryMailer, (m) => m.sent), (sent) => sent.filter((m) => email !== null && m.to.includes(email)))

const registerDevice = (token: string, userId: number, deviceToken: string) =>
  request("POST", `/v1/users/${userId}/devices`, { token, body: { device: { token: deviceToken, platform: "android" } } })

layer(TestApp())("appointment reminders", (it) => {
  it.effect("a booking schedules email 24 h and SMS 2 h before (push 30 min with a device), each with its job", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const appointment = yield* appointmentIn(f, 72)
      const reminders = yield* listOf(f.token, appointment.id)
      expect(reminders.map((r) => [r.reminder_type, r.send_at])).toEqual([
        ["email", new Date(appointment.at.getTime() - 24 * hourMs).toISOString()],
        ["sms", new Date(appointment.at.getTime() - 2 * hourMs).toISOString()]
      ])
      expect(Object.keys(reminders[0]!).sort()).toEqual(reminderKeys)
      expect(reminders.every((r) => r.status === "scheduled" && r.delivery_status === "pending" && r.language === "en" && r.sent_at === null)).toBe(true)
      const jobs = yield* jobsOf(reminders.map((r) => r.id))
      expect(jobs.map((j) => j.run_at.toISOString())).toEqual(reminders.map((r) => r.send_at))

      // With a registered device, push joins, 30 minutes before; voice (asked for) 2 hours before.
      expect((yield* registerDevice(f.parentToken, f.parentId, `device-${f.parentId}-a`)).status).toBe(201)
      const withPush = yield* appointmentIn(f, 96)
      const pushed = yield* listOf(f.token, withPush.id)
      expect(pushed.map((r) => [r.reminder_type, r.send_at])).toEqual([
        ["email", new Date(withPush.at.getTime() - 24 * hourMs).toISOString()],
        ["sms", new Date(withPush.at.getTime() - 2 * hourMs).toISOString()],
        ["push", new Date(withPush.at.getTime() - 30 * minuteMs).toISOString()]
      ])
      const voice = yield* create(f.token, { appointment_id: withPush.id, reminder_type: "voice" })
      expect(voice.status).toBe(201)
      expect((voice.body as Created).appointment_reminder).toMatchObject({
        reminder_type: "voice", send_at: new Date(withPush.at.getTime() - 2 * hourMs).toISOString()
      })
      const push = yield* create(f.token, { appointment_id: withPush.id, reminder_type: "push", language: "es", message: "Traiga su tarjeta" })
      expect((push.body as Created).reminders).toHaveLength(1)
      expect((push.body as Created).appointment_reminder).toMatchObject({
        reminder_type: "push", language: "es", message: "Traiga su tarjeta",
        send_at: new Date(withPush.at.getTime() - 30 * minuteMs).toISOString()
      })
    }))

  it.effect("`all` makes one reminder per available channel: the first, and all of them", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const appointment = yield* appointmentIn(f, 50)
      const all = yield* create(f.parentToken, { appointment_id: appointment.id, reminder_type: "all", message: "Bring the forms" })
      expect(all.status).toBe(201)
      const body = all.body as Created
      expect(body.reminders.map((r) => r.reminder_type)).toEqual(["email", "sms"])
      expect(body.appointment_reminder).toEqual(body.reminders[0])
      expect(body.reminders.every((r) => r.message === "Bring the forms")).toBe(true)

      const mute = yield* family({ phone: null, email: null, linked: false })
      const unreachable = yield* appointmentIn(mute, 50)
      const none = yield* create(mute.token, { appointment_id: unreachable.id, reminder_type: "all" })
      expect(none.status).toBe(422)
      expect(none.body).toEqual({ errors: { reminder_type: ["has no available channel: the patient has no email address, phone number or registered device"] } })
      const sms = yield* create(mute.token, { appointment_id: unreachable.id, reminder_type: "sms" })
      expect(sms.body).toEqual({ errors: { reminder_type: ["is not available: the patient has no phone number"] } })
      const push = yield* create(mute.token, { appointment_id: unreachable.id, reminder_type: "push" })
      expect(push.body).toEqual({ errors: { reminder_type: ["is not available: the patient's account has no registered device"] } })
    }))

  it.effect("every 404, 403 and 422 of a new reminder, and nothing is created", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const other = yield* family()
      const appointment = yield* appointmentIn(f, 30)
      const before = (yield* listOf(f.token, appointment.id)).length
      const now = yield* Clock.currentTimeMillis
      const cases: Array<[Record<string, unknown>, number, unknown, string?]> = [
        [{ appointment_id: 999999, reminder_type: "sms" }, 404, { errors: "Appointment not found" }],
        [{ appointment_id: appointment.id, reminder_type: "fax" }, 422, { errors: { reminder_type: ["is not included in the list"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", send_at: new Date(now - minuteMs).toISOString() }, 422,
          { errors: { send_at: ["must be in the future"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", send_at: new Date(appointment.at.getTime() + minuteMs).toISOString() }, 422,
          { errors: { send_at: ["must be before the appointment"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", send_at: appointment.at.toISOString() }, 422,
          { errors: { send_at: ["must be before the appointment"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", send_at: "tomorrow" }, 422, { errors: { send_at: ["is invalid"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", language: "xx" }, 422, { errors: { language: ["is invalid"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", language: "eng" }, 422, { errors: { language: ["is invalid"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms", language: "ES" }, 422, { errors: { language: ["is invalid"] } }],
        [{ reminder_type: "sms" }, 422, { errors: { appointment_id: ["can't be blank"] } }],
        [{ appointment_id: appointment.id, reminder_type: "sms" }, 403, { errors: "You are not authorized to perform this action." }, other.parentToken]
      ]
      for (const [body, status, errors, token] of cases) {
        const response = yield* create(token ?? f.token, body)
        expect([response.status, response.body], JSON.stringify(body)).toEqual([status, errors])
      }
      // A cancelled appointment, and a finished one, get no reminder.
      expect((yield* request("DELETE", `/v1/admin/clinic/appointments/${appointment.id}`, { token: f.token })).status).toBe(204)
      const cancelled = yield* create(f.token, { appointment_id: appointment.id, reminder_type: "email" })
      expect([cancelled.status, cancelled.body]).toEqual([422, { errors: { appointment_id: ["is cancelled: no reminder can be scheduled"] } }])
      const finished = yield* appointmentIn(f, 40)
      for (const status of ["confirmed", "in_progress", "completed"]) {
        expect((yield* request("PUT", `/v1/admin/clinic/appointments/${finished.id}`, { token: f.token, body: { appointment: { status } } })).status).toBe(200)
      }
      const late = yield* create(f.token, { appointment_id: finished.id, reminder_type: "email" })
      expect([late.status, late.body]).toEqual([422, { errors: { appointment_id: ["is completed: no reminder can be scheduled"] } }])
      expect((yield* listOf(f.token, appointment.id)).filter((r) => r.status !== "cancelled")).toHaveLength(0)
      expect((yield* listOf(f.token, appointment.id)).length).toBe(before)
    }))

  it.effect("list, show and cancel: a parent sees their own (another family's is 403), staff see all", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const other = yield* family()
      const appointment = yield* appointmentIn(f, 30)
      const [email, sms] = yield* listOf(f.parentToken, appointment.id)
      const shown = yield* request("GET", `${path}/${sms!.id}`, { token: f.parentToken })
      expect(shown.body).toEqual({ appointment_reminder: sms })
      expect((yield* request("GET", `${path}/${sms!.id}`, { token: other.parentToken })).status).toBe(403)
      expect((yield* request("GET", `${path}?appointment_id=${appointment.id}`, { token: other.parentToken })).body)
        .toEqual({ errors: "You are not authorized to perform this action." })
      expect((yield* request("GET", `${path}/999999`, { token: f.token })).body).toEqual({ errors: "Appointment reminder not found" })
      const mine = yield* request("GET", path, { token: other.parentToken })
      expect((mine.body as { appointment_reminders: Array<Reminder> }).appointment_reminders.some((r) => r.appointment_id === appointment.id)).toBe(false)

      expect((yield* request("DELETE", `${path}/${sms!.id}`, { token: other.parentToken })).status).toBe(403)
      const cancelled = yield* request("DELETE", `${path}/${sms!.id}`, { token: f.parentToken })
      expect(cancelled.status).toBe(200)
      expect((cancelled.body as { appointment_reminder: Reminder }).appointment_reminder).toMatchObject({
        id: sms!.id, status: "cancelled", status_reason: "cancelled by a user"
      })
      expect(yield* jobsOf([sms!.id])).toEqual([])
      expect((yield* jobsOf([email!.id])).length).toBe(1)
      expect((yield* request("DELETE", `${path}/${sms!.id}`, { token: f.token })).status).toBe(200)
    }))

  it.effect("a reminder due by the test clock is sent exactly once by runOnce; a sent one cannot be cancelled", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const appointment = yield* appointmentIn(f, 30)
      const [email, sms] = yield* listOf(f.token, appointment.id)
      yield* advanceAndRun(28 * hourMs + minuteMs)
      const texts = yield* smsTo(f.phone)
      expect(texts).toHaveLength(1)
      expect(texts[0]!.body).toContain("Avery Quinn")
      expect(yield* mailTo(f.email)).toHaveLength(1)
      const sent = yield* rowOf(sms!.id)
      expect(sent).toMatchObject({ status: "sent", delivery_status: "sending", status_reason: null, attempts: 1, provider_message_id: texts[0]!.sid })
      expect(yield* rowOf(email!.id)).toMatchObject({ status: "sent", delivery_status: "delivered" })
      // Again: nothing is due, and running the job once more by hand sends nothing either.
      yield* advanceAndRun(hourMs)
      const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
      yield* sender.send(sms!.id, { id: "another-job", attempt: 1, maxAttempts: 5 })
      expect(yield* smsTo(f.phone)).toHaveLength(1)
      const refused = yield* request("DELETE", `${path}/${sms!.id}`, { token: yield* adminToken })
      expect([refused.status, refused.body]).toEqual([422, {
        errors: { status: ["is not scheduled: only a scheduled reminder that is not being sent can be cancelled"] }
      }])
      // The SMS status webhook's report moves the delivery status, once (ReminderDelivery.test.ts: the webhook).
      const deliveries = yield* ReminderDeliveries.pipe(Effect.provide(ReminderDeliveries.Default))
      expect(yield* deliveries.report(texts[0]!.sid, { delivery: "delivered", reason: null })).toBe(true)
      expect(yield* rowOf(sms!.id)).toMatchObject({ status: "delivered", delivery_status: "delivered", status_reason: null })
      expect(yield* deliveries.report(texts[0]!.sid, { delivery: "failed", reason: "provider reported failed" })).toBe(false)
      expect(yield* rowOf(sms!.id)).toMatchObject({ status: "delivered", delivery_status: "delivered", status_reason: null })
    }))

  it.effect("two workers never send one reminder twice: 20 reminders, two runOnce at once, and racing claims", () =>
    Effect.gen(function*() {
      const f = yield* family({ email: null })
      const appointment = yield* appointmentIn(f, 30)
      const sendAt = new Date((yield* Clock.currentTimeMillis) + hourMs).toISOString()
      for (let i = 0; i < 19; i++) yield* create(f.token, { appointment_id: appointment.id, reminder_type: "sms", send_at: sendAt })
      const reminders = yield* listOf(f.token, appointment.id)
      expect(reminders.filter((r) => r.reminder_type === "sms")).toHaveLength(20)
      yield* TestClock.adjust(29 * hourMs)
      const now = new Date(yield* Clock.currentTimeMillis)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE run_at <= ${now}`.pipe(Effect.orDie)
      const worker = runDueJobs([sendReminderTask]).pipe(Effect.provide(ReminderSender.Default))
      yield* Effect.all([worker, worker], { concurrency: 2 })
      expect(yield* smsTo(f.phone)).toHaveLength(20)

      // Two jobs for one reminder (a reschedule while its job was running) race to claim it: one sends.
      const extra = yield* create(yield* adminToken, { appointment_id: appointment.id, reminder_type: "sms",
        send_at: new Date((yield* Clock.currentTimeMillis) + minuteMs).toISOString() })
      const id = (extra.body as Created).appointment_reminder.id
      yield* TestClock.adjust(2 * minuteMs)
      const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
      yield* Effect.all([1, 2, 3, 4].map((n) => sender.send(id, { id: `racer-${n}`, attempt: 1, maxAttempts: 5 })), { concurrency: 4 })
      expect(yield* smsTo(f.phone)).toHaveLength(21)
    }))

  it.effect("rescheduling moves pending reminders and replaces their jobs; cancelling stops them", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const appointment = yield* appointmentIn(f, 30)
      const before = yield* listOf(f.token, appointment.id)
      const explicit = yield* create(f.token, { appointment_id: appointment.id, reminder_type: "sms",
        send_at: new Date(appointment.at.getTime() - 5 * hourMs).toISOString() })
      const ids = [...before.map((r) => r.id), (explicit.body as Created).appointment_reminder.id]
      const newTime = new Date(appointment.at.getTime() + 24 * hourMs)
      const moved = yield* request("PUT", `/v1/admin/clinic/appointments/${appointment.id}`, {
        token: f.token, body: { appointment: { scheduled_at: newTime.toISOString() } }
      })
      expect(moved.status).toBe(200)
      const after = yield* listOf(f.token, appointment.id)
      expect(after.map((r) => [r.id, r.send_at])).toEqual([
        [ids[0], new Date(newTime.getTime() - 24 * hourMs).toISOString()],
        [ids[2], new Date(newTime.getTime() - 5 * hourMs).toISOString()],
        [ids[1], new Date(newTime.getTime() - 2 * hourMs).toISOString()]
      ])
      const jobs = yield* jobsOf(ids)
      expect(jobs).toHaveLength(3)
      expect(new Map(jobs.map((j) => [j.key, j.run_at.toISOString()]))).toEqual(
        new Map(after.map((r) => [`appointment_reminder:${r.id}`, r.send_at]))
      )
      // Nothing goes out at the old times.
      yield* advanceAndRun(28 * hourMs + minuteMs)
      expect(yield* smsTo(f.phone)).toHaveLength(0)

      const cancelled = yield* request("DELETE", `/v1/admin/clinic/appointments/${appointment.id}`, { token: yield* adminToken })
      expect(cancelled.status).toBe(204)
      const stopped = yield* listOf(yield* adminToken, appointment.id)
      expect(stopped.map((r) => [r.status, r.status_reason])).toEqual(stopped.map(() => ["cancelled", "appointment is cancelled"]))
      expect(yield* jobsOf(ids)).toEqual([])
      yield* advanceAndRun(48 * hourMs)
      expect(yield* smsTo(f.phone)).toHaveLength(0)
      expect(yield* mailTo(f.email)).toHaveLength(0)
    }))

  it.effect("an appointment moved into the past sends no reminder: its pending ones are cancelled with a reason", () =>
    Effect.gen(function*() {
      const f = yield* family()
      const appointment = yield* appointmentIn(f, 30)
      const before = yield* listOf(f.token, appointment.id)
      expect(before.map((r) => r.status)).toEqual(["scheduled", "scheduled"])
      // A back-office correction: it really took place ten days ago.
      const tenDaysAgo = new Date((yield* Clock.currentTimeMillis) - 10 * 24 * hourMs)
      const moved = yield* request("PUT", `/v1/admin/clinic/appointments/${appointment.id}`, {
        token: yield* adminToken, body: { appointment: { scheduled_at: tenDaysAgo.toISOString() } }
      })
      expect(moved.status).toBe(200)
      const after = yield* listOf(f.token, appointment.id)
      expect(after.map((r) => [r.id, r.status, r.delivery_status, r.status_reason])).toEqual(
        before.map((r) => [r.id, "cancelled", "pending", "appointment time has passed"])
      )
      expect(yield* jobsOf(before.map((r) => r.id))).toEqual([])
      yield* advanceAndRun(minuteMs)
      expect(yield* smsTo(f.phone)).toHaveLength(0)
      expect(yield* mailTo(f.email)).toHaveLength(0)
    }))

  it.effect("the sender itself refuses a reminder whose appointment has begun, and cancels it with a reason", () =>
    Effect.gen(function*() {
      const f = yield* family({ email: null })
      const appointment = yield* appointmentIn(f, 30)
      const [sms] = ofType(yield* listOf(f.token, appointment.id), "sms")
      yield* TestClock.adjust(28 * hourMs + minuteMs)
      // The appointment's time changed without going through the reminders (as an import or a repair would).
      const sql = yield* SqlClient.SqlClient
      const started = new Date((yield* Clock.currentTimeMillis) - minuteMs)
      yield* sql`UPDATE appointments SET scheduled_at = ${started} WHERE id = ${appointment.id}`.pipe(Effect.orDie)
      yield* advanceAndRun(0)
      expect(yield* smsTo(f.phone)).toHaveLength(0)
      expect(yield* rowOf(sms!.id)).toMatchObject({
        status: "cancelled", delivery_status: "pending", status_reason: "appointment time has passed", sent_at: null
      })
    }))

  it.effect("the message in English and in Spanish, with the time in the clinic's zone; voice says it", () =>
    Effect.gen(function*() {
      const en = yield* family({ language: "en" })
      const es = yield* family({ language: "es" })
      const a = yield* appointmentIn(en, 30)
      const b = yield* appointmentIn(es, 31)
      yield* create(es.token, { appointment_id: b.id, reminder_type: "voice", message: "Traiga su tarjeta <b>" })
      // Everything is due, and neither appointment has begun (a reminder is never sent after that).
      yield* advanceAndRun(29 * hourMs)
      const zoned = (at: Date, locale: string, options: Intl.DateTimeFormatOptions) =>
        new Intl.DateTimeFormat(locale, { timeZone: "America/Los_Angeles", ...options }).format(at)
      const time = (at: Date, locale: string) => zoned(at, locale, { hour: "numeric", minute: "2-digit" })
      const day = (at: Date, locale: string) => zoned(at, locale, { weekday: "long", year: "numeric", month: "long", day: "numeric" })

      const [english] = yield* mailTo(en.email)
      expect(english!.subject).toBe(`Reminder: your appointment on ${day(a.at, "en-US")} at ${time(a.at, "en-US")}`)
      expect(english!.text).toContain(`This is a reminder of your appointment with Avery Quinn on ${day(a.at, "en-US")} at ${time(a.at, "en-US")}`)
      expect(english!.html).toContain("<strong>Avery Quinn</strong>")
      const [englishSms] = yield* smsTo(en.phone)
      expect(englishSms!.body).toMatch(/^Reminder: appointment with Avery Quinn on .* Reply STOP to opt out\.$/)

      const [spanish] = yield* mailTo(es.email)
      expect(spanish!.subject).toBe(`Recordatorio: su cita del ${day(b.at, "es-US")} a las ${time(b.at, "es-US")}`)
      expect(spanish!.text).toContain("Le recordamos su cita con Avery Quinn")
      expect(spanish!.html).toContain("comuníquese con la clínica")
      const [spanishSms] = yield* smsTo(es.phone)
      expect(spanishSms!.body).toContain(`Recordatorio: cita con Avery Quinn el ${day(b.at, "es-US")} a las ${time(b.at, "es-US")}`)
      const [call] = yield* callsTo(es.phone)
      expect(call!.body).toBe(`Hola. Le recordamos su cita con Avery Quinn el ${day(b.at, "es-US")} a las ${time(b.at, "es-US")}. Traiga su tarjeta <b> Adiós.`)
    }))

  it.effect("a patient who opted out of SMS gets no SMS reminder: cancelled with its reason, at creation or at send time", () =>
    Effect.gen(function*() {
      const out = yield* family({ optedOut: true })
      const appointment = yield* appointmentIn(out, 30)
      const [email, sms] = yield* listOf(out.token, appointment.id)
      expect(sms).toMatchObject({ reminder_type: "sms", status: "cancelled", delivery_status: "unsubscribed", status_reason: "patient opted out of SMS" })
      expect(yield* jobsOf([sms!.id])).toEqual([])
      expect((yield* jobsOf([email!.id])).length).toBe(1)
      const asked = yield* create(out.token, { appointment_id: appointment.id, reminder_type: "sms" })
      expect(asked.status).toBe(201)
      expect((asked.body as Created).appointment_reminder).toMatchObject({ status: "cancelled", status_reason: "patient opted out of SMS" })

      // Opting out after the reminder was scheduled: it is cancelled when it comes due.
      const later = yield* family()
      const other = yield* appointmentIn(later, 30)
      const [, laterSms] = yield* listOf(later.token, other.id)
      yield* insertSmsOptOut(later.phone!)
      yield* advanceAndRun(29 * hourMs)
      expect(yield* smsTo(later.phone)).toHaveLength(0)
      expect(yield* smsTo(out.phone)).toHaveLength(0)
      expect(yield* rowOf(laterSms!.id)).toMatchObject({ status: "cancelled", delivery_status: "unsubscribed", status_reason: "patient opted out of SMS" })
    }))

  it.effect("a send cut by a crash is never sent again: the job's next run marks it failed; a live claim of another job is left alone", () =>
    Effect.gen(function*() {
      const f = yield* family({ email: null })
      const appointment = yield* appointmentIn(f, 30)
      const [sms] = ofType(yield* listOf(f.token, appointment.id), "sms")
      const sql = yield* SqlClient.SqlClient
      const [job] = yield* jobsOf([sms!.id])
      yield* TestClock.adjust(28 * hourMs + minuteMs)
      const now = new Date(yield* Clock.currentTimeMillis)
      // This very job claimed it and the process died: the provider may have accepted the text.
      yield* sql`UPDATE appointment_reminders SET delivery_status = 'sending', claimed_by = ${job!.id}, claimed_at = ${now} WHERE id = ${sms!.id}`.pipe(Effect.orDie)
      yield* advanceAndRun(0)
      expect(yield* smsTo(f.phone)).toHaveLength(0)
      expect(yield* rowOf(sms!.id)).toMatchObject({
        status: "failed", delivery_status: "failed", status_reason: reminderReasons.interrupted, sent_at: null
      })

      // Another job holds a fresh claim: this one does nothing; once that claim is stale, it is failed, not sent.
      const second = yield* create(yield* adminToken, { appointment_id: appointment.id, reminder_type: "sms", send_at: new Date(now.getTime() + minuteMs).toISOString() })
      const id = (second.body as Created).appointment_reminder.id
      yield* TestClock.adjust(2 * minuteMs)
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* sql`UPDATE appointment_reminders SET delivery_status = 'sending', claimed_by = 'other-worker', claimed_at = ${at} WHERE id = ${id}`.pipe(Effect.orDie)
      const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
      yield* sender.send(id, { id: "late-job", attempt: 1, maxAttempts: 5 })
      expect(yield* rowOf(id)).toMatchObject({ status: "scheduled", delivery_status: "sending" })
      yield* TestClock.adjust(11 * minuteMs)
      yield* sender.send(id, { id: "late-job", attempt: 2, maxAttempts: 5 })
      yield* sender.send(id, { id: "late-job-2", attempt: 1, maxAttempts: 5 })
      expect(yield* smsTo(f.phone)).toHaveLength(0)
      expect(yield* rowOf(id)).toMatchObject({ status: "failed", delivery_status: "failed", status_reason: reminderReasons.interrupted })
    }))

  it.effect("a provider failure releases the claim for a retry; the last attempt records the failure and its reason", () =>
    Effect.gen(function*() {
      const f = yield* family({ email: null })
      const appointment = yield* appointmentIn(f, 30)
      const [sms] = ofType(yield* listOf(f.token, appointment.id), "sms")
      yield* TestClock.adjust(28 * hourMs + minuteMs)
      const telephony = yield* MemoryTelephony
      const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
      yield* telephony.failNext("The 'To' number is not reachable")
      const first = yield* Effect.either(sender.send(sms!.id, { id: "j1", attempt: 1, maxAttempts: 2 }))
      expect(first._tag).toBe("Left")
      expect(yield* rowOf(sms!.id)).toMatchObject({ status: "scheduled", delivery_status: "pending", status_reason: "The 'To' number is not reachable" })
      yield* telephony.failNext("The 'To' number is not reachable")
      yield* sender.send(sms!.id, { id: "j1", attempt: 2, maxAttempts: 2 })
      expect(yield* rowOf(sms!.id)).toMatchObject({ status: "failed", delivery_status: "failed", status_reason: "The 'To' number is not reachable" })
      expect(yield* smsTo(f.phone)).toHaveLength(0)
    }))

  it.effect("push goes to every registered device; a dead token is forgotten; device registration rules", () =>
    Effect.gen(function*() {
      const f = yield* family({ email: null })
      const other = yield* family()
      const registered = yield* registerDevice(f.parentToken, f.parentId, `tok-live-${f.parentId}-0123456789`)
      expect(registered.status).toBe(201)
      const device = (registered.body as { device: Record<string, unknown> & { id: number } }).device
      expect(device).toMatchObject({ user_id: f.parentId, platform: "android", token_suffix: "23456789" })
      expect(JSON.stringify(registered.body)).not.toContain("tok-live")
      const again = yield* registerDevice(f.parentToken, f.parentId, `tok-live-${f.parentId}-0123456789`)
      expect((again.body as { device: { id: number } }).device.id).toBe(device.id)
      const dead = yield* registerDevice(f.parentToken, f.parentId, `tok-dead-${f.parentId}`)
      const deadId = (dead.body as { device: { id: number } }).device.id
      expect((yield* registerDevice(other.parentToken, f.parentId, "tok-x")).body).toEqual({ errors: "You are not authorized to perform this action." })
      expect((yield* request("POST", `/v1/users/${f.parentId}/devices`, { token: f.parentToken, body: { device: { token: "", platform: "fax" } } })).body)
        .toEqual({ errors: { token: ["can't be blank"], platform: ["is not included in the list"] } })

      const appointment = yield* appointmentIn(f, 30)
      const push = (yield* listOf(f.token, appointment.id)).find((r) => r.reminder_type === "push")!
      const memory = yield* MemoryPush
      yield* memory.clear
      // The first device (live) is sent to first; then the dead one fails as unregistered. Counted
      // from the reminder's own time: the appointment starts on a whole hour, and a fixed step from
      // the clock's now (which starts at the real time) reached the send time at :59.
      const untilPush = new Date(push.send_at).getTime() - (yield* Clock.currentTimeMillis)
      yield* advanceAndRun(untilPush - 29 * minuteMs)
      const sentBefore = (yield* memory.sent).length
      expect(sentBefore).toBe(0)
      const sender = yield* ReminderSender.pipe(Effect.provide(ReminderSender.Default))
      // Due, and the appointment 29 minutes away.
      yield* TestClock.adjust(30 * minuteMs)
      // Fail the live device's send as unregistered, then the dead one succeeds: the live one is forgotten.
      yield* memory.failNext(new PushError({ reason: "messaging/registration-token-not-registered", unregistered: true }))
      yield* sender.send(push.id, { id: "push-job", attempt: 1, maxAttempts: 5 })
      const sent = yield* memory.sent
      expect(sent.map((s) => [s.token, s.title, s.data])).toEqual([
        [`tok-dead-${f.parentId}`, "Appointment reminder", { appointment_id: String(appointment.id), appointment_reminder_id: String(push.id) }]
      ])
      expect(yield* rowOf(push.id)).toMatchObject({ status: "sent", delivery_status: "delivered" })
      // The clock moved past the sessions' lifetime: sign in again.
      const parentToken = yield* f.signInParent
      const otherToken = yield* other.signInParent
      expect((yield* request("DELETE", `/v1/users/${f.parentId}/devices/${device.id}`, { token: parentToken })).body).toEqual({ errors: "Device not found" })
      expect((yield* request("DELETE", `/v1/users/${f.parentId}/devices/${deadId}`, { token: otherToken })).status).toBe(403)
      expect((yield* request("DELETE", `/v1/users/${f.parentId}/devices/${deadId}`, { token: parentToken })).status).toBe(204)
      expect((yield* request("DELETE", `/v1/users/${f.parentId}/devices/${deadId}`, { token: yield* adminToken })).status).toBe(404)
    }))
})
