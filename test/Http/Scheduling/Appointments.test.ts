import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import jwt from "jsonwebtoken"
import type { UpdateAppointmentRequest } from "../../../src/Api/Scheduling/Appointments.js"
import { type AppointmentId, type PatientId, ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { adminToken, bookSlot, hoursFromNow, insertPatient, insertUser, makeProvider, password, slotAt, slotAvailable } from "./helpers.js"

const appointmentKeys = [
  "appointment_type", "created_at", "duration_minutes", "id", "no_show", "notes", "patient", "patient_id", "provider", "provider_id",
  "scheduled_at", "status", "telephony_room_sid", "updated_at"
]
const admin = "/v1/admin/clinic/appointments"
const video = { accountSid: "AC0123456789abcdef0123456789abcdef", apiKeySid: "SK0123456789abcdef0123456789abcdef", secret: "video-key-secret-for-tests" }
type AppointmentBody = { appointment: Record<string, unknown> }
const onePage = { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 }

const put = (token: string, id: number, appointment: Record<string, unknown>) =>
  request("PUT", `${admin}/${id}`, { token, body: { appointment } })

/** An update through the typed client; the appointment and the response's status. */
const update = (token: string, id: AppointmentId, appointment: UpdateAppointmentRequest["appointment"]) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const [updated, response] = yield* client.appointments.update({ path: { id }, payload: { appointment }, withResponse: true })
    return { appointment: updated.appointment, status: response.status }
  })

/** A booked appointment `hours` ahead; the ids. */
const appointmentAt = (token: string, hours: number, providerId?: ProviderId, patientId?: PatientId) =>
  Effect.gen(function*() {
    const provider = providerId ?? (yield* makeProvider(token)).id
    const patient = patientId ?? (yield* insertPatient())
    const slot = yield* slotAt(token, provider, hours)
    const booked = yield* bookSlot(token, slot, patient)
    return { provider, patient, slot, id: booked.appointmentId, bookId: booked.bookId }
  })

layer(TestApp({
  video: Option.some({ accountSid: video.accountSid, apiKeySid: video.apiKeySid, apiKeySecret: Redacted.make(video.secret) })
}))("appointments", (it) => {
  it.effect("show, list and filter in the §2.13 representation; unknown is 404", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token, "provider", { first_name: "Avery", last_name: "Quinn" })
      const patient = yield* insertPatient(null, { first: "Robin", last: "Vale" })
      const a = yield* appointmentAt(token, 30, provider.id, patient)
      const client = yield* clientAs(token)
      const { appointment: typed } = yield* client.appointments.show({ path: { id: a.id } })
      expect(typed).toMatchObject({
        id: a.id, patient_id: patient, provider_id: provider.id,
        patient: { id: patient, first_name: "Robin", last_name: "Vale" },
        provider: { id: provider.id, first_name: "Avery", last_name: "Quinn" },
        status: "scheduled", duration_minutes: 60, telephony_room_sid: null, notes: null
      })
      // The exact representation, pinned once; the lists below answer the same object.
      const shown = yield* request("GET", `${admin}/${a.id}`, { token })
      expect(shown.status).toBe(200)
      const appointment = (shown.body as AppointmentBody).appointment
      expect(Object.keys(appointment).sort()).toEqual(appointmentKeys)
      expect(appointment).toMatchObject({ id: a.id, patient: { id: patient }, provider: { id: provider.id } })
      const missing = yield* request("GET", `${admin}/999999`, { token })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ errors: "Appointment not found" })

      const listed = yield* request("GET", `${admin}?provider_id=${provider.id}&status=scheduled&search=vale`, { token })
      expect(listed.body).toEqual({ appointments: [appointment], pagination: onePage })
      const typedList = yield* client.appointments.list({ urlParams: { provider_id: provider.id, status: "scheduled", search: "vale" } })
      expect(typedList.appointments).toEqual([typed])
      expect((yield* client.appointments.list({ urlParams: { provider_id: provider.id, status: "confirmed" } })).appointments).toEqual([])
      const filters = { provider_name: "quinn", patient_name: "Robin", status: "scheduled" } as const
      const filtered = yield* request("POST", `${admin}/filter_appointments`, { token, body: { filters } })
      expect(filtered.body).toEqual({ appointments: [appointment], pagination: onePage })
      expect((yield* client.appointments.filter({ payload: { filters } })).appointments).toEqual([typed])
      const none = yield* client.appointments.filter({ payload: { filters: { date: { start_date: "2001-01-01", end_date: "2001-01-02" } } } })
      expect(none.appointments).toEqual([])
      const options = yield* client.appointments.filters()
      expect(options).toMatchObject({
        statuses: ["scheduled", "confirmed", "in_progress", "completed", "cancelled", "no_show", "rescheduled"],
        appointment_types: ["therapy", "consultation", "follow_up", "assessment", "group_therapy", "medication_review"]
      })
      expect(options.providers).toContainEqual({ id: provider.id, first_name: "Avery", last_name: "Quinn" })

      const ofProvider = yield* request("GET", `/v1/admin/clinic/providers/${provider.id}/appointments`, { token })
      expect(ofProvider.body).toEqual({ appointments: [appointment], pagination: onePage })
      expect((yield* client.providerAppointments.list({ path: { provider_id: provider.id }, urlParams: {} })).appointments).toEqual([typed])
      expect((yield* request("GET", `/v1/admin/clinic/providers/${provider.id}/appointments/${a.id}`, { token })).body).toEqual({ appointment })
      expect((yield* client.providerAppointments.show({ path: { provider_id: provider.id, id: a.id } })).appointment).toEqual(typed)
      const other = yield* makeProvider(token)
      const notTheirs = yield* request("GET", `/v1/admin/clinic/providers/${other.id}/appointments/${a.id}`, { token })
      expect(notTheirs.status).toBe(404)
      expect(notTheirs.body).toEqual({ errors: "Appointment not found" })
      const noProvider = yield* request("GET", `/v1/admin/clinic/providers/999999/appointments`, { token })
      expect(noProvider.body).toEqual({ errors: "Provider not found" })
    }))

  it.effect("the status machine: forward moves work, final states refuse to move (422), nothing changes", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 40)
      const skip = yield* put(token, a.id, { status: "completed" })
      expect(skip.status).toBe(422)
      expect(skip.body).toEqual({ errors: { status: ["can't change from scheduled to completed"] } })
      for (const status of ["confirmed", "in_progress", "completed"] as const) {
        const moved = yield* update(token, a.id, { status })
        expect(moved.status, status).toBe(200)
        expect(moved.appointment.status).toBe(status)
      }
      for (const status of ["scheduled", "cancelled", "in_progress"]) {
        const refused = yield* put(token, a.id, { status })
        expect(refused.status).toBe(422)
        expect(refused.body).toEqual({ errors: { status: ["is completed, which is final"] } })
      }
      expect((yield* put(token, a.id, { scheduled_at: hoursFromNow(41) })).status).toBe(422)
      const notes = yield* update(token, a.id, { notes: "Went well" })
      expect(notes.appointment).toMatchObject({ status: "completed", notes: "Went well" })

      const b = yield* appointmentAt(token, 42)
      const noShow = yield* update(token, b.id, { status: "no_show" })
      expect(noShow.appointment).toMatchObject({ status: "no_show", no_show: true })
      expect((yield* put(token, b.id, { status: "confirmed" })).status).toBe(422)
      const client = yield* clientAs(token)
      const noShows = yield* client.appointments.noShows({ urlParams: {} })
      expect(noShows.appointments.map((x) => x.id)).toContain(b.id)
      const outside = yield* client.appointments.noShows({ urlParams: { date_range: "2001-01-01..2001-01-31" } })
      expect(outside.appointments).toEqual([])
      const badRange = yield* request("GET", `${admin}/no_shows?date_range=yesterday`, { token })
      expect(badRange.status).toBe(422)
      expect(badRange.body).toEqual({ errors: { date_range: ["is invalid"] } })
    }))

  it.effect("cancel (DELETE) frees the slot for a new booking; cancelling twice is harmless; final ones refuse", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 50)
      const client = yield* clientAs(token)
      const [, cancelled] = yield* client.appointments.cancel({ path: { id: a.id }, withResponse: true })
      expect(cancelled.status).toBe(204)
      expect((yield* request("DELETE", `${admin}/${a.id}`, { token })).status).toBe(204)
      expect((yield* client.appointments.show({ path: { id: a.id } })).appointment.status).toBe("cancelled")
      expect(yield* slotAvailable(token, a.slot)).toBe(true)
      const books = yield* client.availability.listBooks({ urlParams: { available_slot_id: a.slot } })
      expect(books.books.map((b) => b.status)).toEqual(["cancelled"])
      const rebooked = yield* bookSlot(token, a.slot, yield* insertPatient())
      expect(rebooked.appointmentId).not.toBe(a.id)
      expect((yield* request("DELETE", `${admin}/999999`, { token })).status).toBe(404)
      const done = yield* appointmentAt(token, 52)
      expect((yield* update(token, done.id, { status: "no_show" })).status).toBe(200)
      const refused = yield* request("DELETE", `${admin}/${done.id}`, { token })
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({ errors: { status: ["is no_show, which is final"] } })
    }))

  it.effect("reschedule: a free time works (status rescheduled, slot freed); an overlap with the provider's appointments is 409", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 60)
      const b = yield* appointmentAt(token, 62, a.provider)
      const clash = yield* put(token, b.id, { scheduled_at: hoursFromNow(60.5) })
      expect(clash.status).toBe(409)
      expect(clash.body).toEqual({ errors: "Appointment conflicts with another appointment of the provider" })
      const longer = yield* put(token, a.id, { duration_minutes: 150 })
      expect(longer.status).toBe(409)
      // Touching is fine; the move frees the old slot.
      const moved = yield* update(token, b.id, { scheduled_at: new Date(hoursFromNow(61)) })
      expect(moved.status).toBe(200)
      expect(moved.appointment).toMatchObject({ status: "rescheduled", scheduled_at: new Date(hoursFromNow(61)) })
      expect(yield* slotAvailable(token, b.slot)).toBe(true)
      // Another provider at the same time is fine; moving onto that provider's busy time is not.
      const other = yield* appointmentAt(token, 70)
      const toOther = yield* put(token, a.id, { provider_id: other.provider, scheduled_at: hoursFromNow(70) })
      expect(toOther.status).toBe(409)
      const moveOk = yield* update(token, a.id, { provider_id: other.provider, scheduled_at: new Date(hoursFromNow(71)) })
      expect(moveOk.appointment).toMatchObject({ provider_id: other.provider, status: "rescheduled" })
      const unknownProvider = yield* put(token, a.id, { provider_id: 999999 })
      expect(unknownProvider.body).toEqual({ errors: { provider_id: ["must exist"] } })
      // Cancelled appointments hold no time.
      yield* Effect.flatMap(clientAs(token), (client) => client.appointments.cancel({ path: { id: other.id } }))
      expect((yield* update(token, a.id, { scheduled_at: new Date(hoursFromNow(70)) })).status).toBe(200)
    }))

  it.effect("back-office: a walk-in is moved into the past and completed; the move is recorded with old and new time", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 80)
      const past = hoursFromNow(-26)
      const moved = yield* update(token, a.id, { scheduled_at: new Date(past), status: "confirmed" })
      expect(moved.status).toBe(200)
      expect(moved.appointment).toMatchObject({ scheduled_at: new Date(past), status: "confirmed" })
      for (const status of ["in_progress", "completed"] as const) expect((yield* update(token, a.id, { status })).status).toBe(200)
      const sql = yield* SqlClient.SqlClient
      const changes = yield* sql<{ old_scheduled_at: Date; new_scheduled_at: Date; old_status: string; new_status: string }>`
        SELECT old_scheduled_at, new_scheduled_at, old_status, new_status FROM appointment_changes WHERE appointment_id = ${a.id} ORDER BY id`
      expect(changes[0]).toMatchObject({ old_scheduled_at: new Date(hoursFromNow(80)), new_scheduled_at: new Date(past), old_status: "scheduled", new_status: "confirmed" })
      expect(changes.map((c) => c.new_status)).toEqual(["confirmed", "in_progress", "completed"])
      const actions = yield* sql<{ action: string }>`SELECT action FROM audit_events WHERE target_type = 'appointment' AND target_id = ${a.id} ORDER BY id`
      expect(actions.map((r) => r.action)).toContain("appointment.reschedule")
      // The provider-overlap rule still holds in the past.
      const b = yield* appointmentAt(token, 90, a.provider)
      const onTop = yield* put(token, b.id, { scheduled_at: past })
      expect(onTop.status).toBe(409)
    }))

  it.effect("video tokens: signed with the API key, a Video grant for the room, ids as identities, a few hours' expiry", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 100)
      const client = yield* clientAs(token)
      const [body, response] = yield* client.appointments.refreshTelephonyTokens({ path: { id: a.id }, withResponse: true })
      expect(response.status).toBe(200)
      expect(body.appointment_id).toBe(a.id)
      expect(body.room_name).toBe(`appointment-${a.id}`)
      for (const [side, identity] of [["provider", `provider-${a.provider}`], ["patient", `patient-${a.patient}`]] as const) {
        const claims = jwt.verify(body.tokens[side], video.secret, { algorithms: ["HS256"] }) as jwt.JwtPayload
        expect(claims.iss).toBe(video.apiKeySid)
        expect(claims.sub).toBe(video.accountSid)
        expect(claims.grants).toEqual({ identity, video: { room: body.room_name } })
        const lifetime = claims.exp! - claims.iat!
        expect(lifetime).toBeGreaterThan(3600)
        expect(lifetime).toBeLessThanOrEqual(6 * 3600)
        expect(() => jwt.verify(body.tokens[side], "another-secret")).toThrow()
      }
      expect(body.expires_at.getTime() - Date.now()).toBeGreaterThan(3 * 3600 * 1000)
      const shown = yield* client.appointments.show({ path: { id: a.id } })
      expect(shown.appointment.telephony_room_sid).toBe(`appointment-${a.id}`)
      expect((yield* request("POST", `${admin}/999999/refresh_telephony_tokens`, { token })).status).toBe(404)
    }))

  it.effect("clinic: a parent sees their patients' appointments only; staff see all; others' are 404", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const parentId = yield* insertUser({ email: "parent@clinic.scheduling.test" })
      const parent = yield* signIn("parent@clinic.scheduling.test", password)
      const mine = yield* insertPatient(parentId)
      const theirs = yield* insertPatient()
      const a = yield* appointmentAt(token, 110, undefined, mine)
      const b = yield* appointmentAt(token, 111, undefined, theirs)
      const asParent = yield* clientAs(parent)
      const [listed, response] = yield* asParent.clinicAppointments.list({ urlParams: {}, withResponse: true })
      expect(response.status).toBe(200)
      expect(listed.appointments.map((x) => x.id)).toEqual([a.id])
      const [named, namedResponse] = yield* asParent.clinicAppointments.list({ urlParams: { patient_id: mine }, withResponse: true })
      expect(namedResponse.status).toBe(200)
      expect(named.appointments.map((x) => x.id)).toEqual([a.id])
      const other = yield* request("GET", `/v1/clinic/patients/appointments?patient_id=${theirs}`, { token: parent })
      expect(other.status).toBe(404)
      expect(other.body).toEqual({ errors: "Patient not found" })
      expect((yield* asParent.clinicAppointments.show({ path: { id: a.id } })).appointment).toMatchObject({ id: a.id, patient_id: mine })
      const hidden = yield* request("GET", `/v1/clinic/patients/appointments/${b.id}`, { token: parent })
      expect(hidden.status).toBe(404)
      expect(hidden.body).toEqual({ errors: "Appointment not found" })
      expect((yield* (yield* clientAs(token)).clinicAppointments.show({ path: { id: b.id } })).appointment).toMatchObject({ id: b.id, patient_id: theirs })
      const staffList = yield* request("GET", "/v1/clinic/patients/appointments", { token })
      expect(staffList.body).toEqual({ errors: { patient_id: ["can't be blank"] } })
      expect((yield* request("GET", "/v1/clinic/patients/appointments")).status).toBe(401)
    }))

  it.effect("on call: the parent or the provider gets a token from 15 minutes before to the end; otherwise 422 saying when", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const parentId = yield* insertUser({ email: "parent@oncall.scheduling.test" })
      const parent = yield* signIn("parent@oncall.scheduling.test", password)
      const providerUser = yield* insertUser({ email: "provider@oncall.scheduling.test" })
      yield* request("PUT", `/v1/admin/clinic/users/${providerUser}`, { token, body: { user: { role: "provider" } } })
      const providerToken = yield* signIn("provider@oncall.scheduling.test", password)
      const sql = yield* SqlClient.SqlClient
      const [{ id }] = (yield* sql<{ id: number }>`SELECT id FROM providers WHERE user_id = ${providerUser}`) as [{ id: number }]
      const providerId = ProviderId.make(id)
      const patient = yield* insertPatient(parentId)
      const later = yield* appointmentAt(token, 5, providerId, patient)
      const early = yield* request("GET", `/v1/clinic/patients/on_call/appointments/${later.id}`, { token: parent })
      expect(early.status).toBe(422)
      const opens = new Date(Date.parse(hoursFromNow(5)) - 15 * 60_000).toISOString()
      expect(early.body).toEqual({ errors: { scheduled_at: [`the call opens at ${opens}, 15 minutes before the appointment`] } })

      // Starting in 10 minutes: open.
      const soon = yield* appointmentAt(token, 20, providerId, patient)
      const startsAt = new Date(Date.now() + 10 * 60_000)
      yield* sql`UPDATE appointments SET scheduled_at = ${startsAt} WHERE id = ${soon.id}`
      for (const [caller, identity] of [[parent, `patient-${patient}`], [providerToken, `provider-${providerId}`]] as const) {
        const [body, open] = yield* (yield* clientAs(caller)).clinicAppointments.onCall({ path: { id: soon.id }, withResponse: true })
        expect(open.status).toBe(200)
        expect(body.appointment.id).toBe(soon.id)
        expect(body.identity).toBe(identity)
        const claims = jwt.verify(body.token, video.secret) as jwt.JwtPayload
        expect(claims.grants).toEqual({ identity, video: { room: `appointment-${soon.id}` } })
      }
      // Anyone else: 404; an admin uses refresh_telephony_tokens instead.
      expect((yield* request("GET", `/v1/clinic/patients/on_call/appointments/${soon.id}`, { token })).status).toBe(404)

      const ended = yield* appointmentAt(token, 21, providerId, patient)
      yield* sql`UPDATE appointments SET scheduled_at = now() - interval '2 hours' WHERE id = ${ended.id}`
      const over = yield* request("GET", `/v1/clinic/patients/on_call/appointments/${ended.id}`, { token: parent })
      expect(over.status).toBe(422)
      expect(JSON.stringify(over.body)).toContain("the appointment ended at")
    }))
})

layer(TestApp())("appointments without video settings", (it) => {
  it.effect("refresh_telephony_tokens is 422: video is not configured", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* appointmentAt(token, 10)
      const response = yield* request("POST", `${admin}/${a.id}/refresh_telephony_tokens`, { token })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({
        errors: { video: ["is not configured (set TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)"] }
      })
    }))
})
