/** ECM events (ECM §4.2, §6): one per activity but notes, list, detail, counts with the PRTF rule, pairing. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertStatusEntries } from "../../support/fixtures.js"
import { activitiesUrl, createActivity, created, eventCounts, eventsUrl, insertPatient, staffUser } from "./activitySupport.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface Listed {
  readonly events: ReadonlyArray<Record<string, any>>
  readonly pagination: Record<string, number>
}

layer(TestApp())("ECM events", (it) => {
  it.effect("every activity type but note generates its event (task, sms, call, email, appointment)", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const bodies: ReadonlyArray<[Record<string, unknown>, string | null, string]> = [
        [{ activity_type: "task", message: "t" }, "task", "scheduled"],
        [{ activity_type: "note", body: "n" }, null, ""],
        [{ activity_type: "sms", body: "s", text_message_id: 5 }, "sms", "attempted"],
        [{ activity_type: "call", voice_call_id: 6 }, "call", "attempted"],
        [{ activity_type: "email", email_to: "m@example.test", body: "e" }, "email", "attempted"],
        [{ activity_type: "in_person_appointment", booked_at: "2026-05-01T10:00:00Z" }, "appointment", "scheduled"]
      ]
      for (const [activity, eventType, status] of bodies) {
        const id = yield* created(me.token, patient, { ...activity, assigned_to_id: me.id })
        const rows = yield* query<{ event_type: string; status: string }>(`SELECT event_type, status FROM ecm_events WHERE activity_id = $1`, id)
        expect({ activity: activity.activity_type, rows }).toEqual({ activity: activity.activity_type, rows: eventType === null ? [] : [{ event_type: eventType, status }] })
      }
    }))

  it.effect("list: Event fields, newest first, per_page 25 by default, event_type and whole-day date filters", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Eve", "Ent")
      const me = yield* staffUser()
      for (let i = 0; i < 26; i++) {
        yield* created(me.token, patient, { activity_type: "task", message: `T${i}`, assigned_to_id: me.id, occurred_at: `2026-02-${String(i + 1).padStart(2, "0")}T23:59:59.999Z` })
      }
      const callId = yield* created(me.token, patient, {
        activity_type: "call", voice_call_id: 9, assigned_to_id: me.id, occurred_at: "2026-03-05T00:00:00Z", subject: "S", body: "B", duration: 7, status: "complete"
      })
      // The first page as served: the exact representation; the filters below through the typed client.
      const served = yield* request("GET", eventsUrl(patient), { token: me.token })
      expect(served.status).toBe(200)
      const first = served.body as Listed
      expect(first.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 27, per_page: 25 })
      const [event] = yield* query<{ id: number }>(`SELECT id FROM ecm_events WHERE activity_id = $1`, callId)
      expect(first.events[0]).toEqual({
        id: event!.id, event_type: "call", occurred_at: "2026-03-05T00:00:00.000Z", subject: "S", body: "B", duration: 7,
        status: "complete", patient_id: patient, patient_name: "Eve Ent", activity_id: callId,
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      expect(first.events[1]).toMatchObject({ event_type: "task", body: "T25", duration: null, subject: null })
      const client = yield* clientAs(me.token)
      const listed = (urlParams: Parameters<typeof client.ecmEvents.list>[0]["urlParams"]) =>
        Effect.map(client.ecmEvents.list({ path: { patient_id: patient }, urlParams }), (r) => r.events)
      expect((yield* listed({ event_type: "call" })).map((e) => e.activity_id)).toEqual([callId])
      // Whole days, inclusive: the 3rd and the 4th, up to 23:59:59.999 of the 4th.
      expect((yield* listed({ start_date: "2026-02-03", end_date: "2026-02-04" })).map((e) => e.body)).toEqual(["T3", "T2"])
      expect((yield* listed({ start_date: "2026-03-05" })).map((e) => e.activity_id)).toEqual([callId])
      expect((yield* listed({ end_date: "2026-02-01" })).map((e) => e.body)).toEqual(["T0"])
      expect((yield* listed({ per_page: 2, page: 3 })).map((e) => e.body)).toEqual(["T22", "T21"])
      const bad = yield* request("GET", eventsUrl(patient, "?event_type=note&start_date=2026-02-30"), { token: me.token })
      expect({ status: bad.status, body: bad.body }).toEqual({ status: 422, body: { errors: ["Event type is not included in the list", "Start date is invalid"] } })
    }))

  it.effect("detail: the event with its activity; another patient's event or an unknown one is 404", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("De", "Tail")
      const otherPatient = yield* insertPatient()
      const me = yield* staffUser("provider", "Pat", "Performer")
      const assignee = yield* staffUser("support", "Ann", "Assignee")
      const id = yield* created(me.token, patient, { activity_type: "task", message: "Book ride", assigned_to_id: assignee.id, occurred_at: "2026-06-01T08:00:00Z" })
      const [event] = yield* query<{ id: number }>(`SELECT id FROM ecm_events WHERE activity_id = $1`, id)
      const shown = yield* request("GET", eventsUrl(patient, `/${event!.id}`), { token: me.token })
      expect(shown.status).toBe(200)
      expect(shown.body).toEqual({
        event: {
          id: event!.id, event_type: "task", occurred_at: "2026-06-01T08:00:00.000Z", subject: null, body: "Book ride", duration: null,
          status: "scheduled", patient_id: patient, patient_name: "De Tail", activity_id: id,
          created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso),
          activity: {
            id, activity_type: "task", status: "created", performed_by_id: me.id, performed_by_name: "Pat Performer",
            assigned_to_id: assignee.id, assigned_to_name: "Ann Assignee"
          }
        }
      })
      for (const [patientId, eventId, message] of [[otherPatient, event!.id, "Event not found"], [patient, 999999, "Event not found"], [999999, event!.id, "Patient not found"]] as const) {
        const missing = yield* request("GET", eventsUrl(patientId, `/${eventId}`), { token: me.token })
        expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: [message] } })
      }
      const parent = yield* insertUser({ email: "parent@events.test", role: "parent" })
      const refused = yield* request("GET", eventsUrl(patient), { token: parent.token })
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Staff access required"] } })
    }))

  it.effect("updates keep the event in step; deleting the activity removes it", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const id = yield* created(me.token, patient, { activity_type: "in_person_appointment", booked_at: "2026-05-01T10:00:00Z", assigned_to_id: me.id, occurred_at: "2026-05-01T10:00:00Z" })
      const { activity } = yield* (yield* clientAs(me.token)).ecmActivities.update({
        path: { patient_id: patient, id },
        payload: { activity: { subject: "Moved", body: "Room 2", duration: 30, occurred_at: new Date("2026-05-02T11:00:00Z"), status: "complete" } }
      })
      expect(activity.event).toMatchObject({ event_type: "appointment", status: "complete", occurred_at: new Date("2026-05-02T11:00:00Z") })
      expect(yield* query(`SELECT event_type, status, subject, body, duration, occurred_at FROM ecm_events WHERE activity_id = $1`, id)).toEqual([
        { event_type: "appointment", status: "complete", subject: "Moved", body: "Room 2", duration: 30, occurred_at: new Date("2026-05-02T11:00:00Z") }
      ])
      expect((yield* request("DELETE", activitiesUrl(patient, `/${id}`), { token: me.token })).status).toBe(204)
      expect(yield* query(`SELECT id FROM ecm_events WHERE activity_id = $1`, id)).toEqual([])
    }))

  it.effect("an activity and its event are written together: a failure after the activity insert leaves neither", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const audits = query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE action = 'ecm_activity.create'`)
      const auditsBefore = (yield* audits)[0]!.n
      yield* query(`CREATE FUNCTION refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`)
      yield* query(`CREATE TRIGGER refuse_events BEFORE INSERT OR UPDATE ON ecm_events FOR EACH ROW EXECUTE FUNCTION refuse_events()`)
      const failed = yield* createActivity(me.token, patient, { activity_type: "task", message: "m", assigned_to_id: me.id })
      // A note has no event, so it is saved.
      const note = yield* createActivity(me.token, patient, { activity_type: "note", body: "n", assigned_to_id: me.id })
      yield* query(`DROP TRIGGER refuse_events ON ecm_events`)
      yield* query(`DROP FUNCTION refuse_events()`)
      expect({ status: failed.status, body: failed.body }).toEqual({ status: 500, body: { errors: ["Internal server error"] } })
      expect(note.status).toBe(201)
      expect(yield* query(`SELECT activity_type FROM ecm_activities WHERE patient_id = $1`, patient)).toEqual([{ activity_type: "note" }])
      expect(yield* query(`SELECT id FROM ecm_events WHERE patient_id = $1`, patient)).toEqual([])
      // Only the note's creation is in the audit log.
      expect((yield* audits)[0]!.n).toBe(auditsBefore + 1)
    }))

  it.effect("counts: both dates required, bad dates 422, all keys present", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const counts = (params: string) => request("GET", eventsUrl(patient, `/counts${params}`), { token: me.token })
      for (const params of ["", "?start_date=2026-01-01", "?end_date=2026-01-01"]) {
        const r = yield* counts(params)
        expect({ params, status: r.status, body: r.body }).toEqual({ params, status: 422, body: { errors: ["Start date and end date are required"] } })
      }
      const bad = yield* counts("?start_date=2026-13-01&end_date=01-31-2026")
      expect({ status: bad.status, body: bad.body }).toEqual({ status: 422, body: { errors: ["Start date is invalid", "End date is invalid"] } })
      const reversed = yield* counts("?start_date=2026-02-01&end_date=2026-01-31")
      expect(reversed.body).toEqual({ errors: ["End date must be on or after start date"] })
      const empty = yield* counts("?start_date=2026-01-01&end_date=2026-12-31")
      expect(empty.body).toEqual({
        patient_id: patient, start_date: "2026-01-01", end_date: "2026-12-31",
        counts: {
          total: 0,
          by_type: { sms: 0, call: 0, email: 0, appointment: 0, task: 0, meeting: 0 },
          prtf_categories: { telehealth_encounters: 0, in_person_encounters: 0, telehealth_outreach: 0, in_person_outreach: 0 }
        }
      })
      const missing = yield* request("GET", eventsUrl(999999, "/counts"), { token: me.token })
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: ["Patient not found"] } })
    }))

  it.effect("counts: held appointments and connected calls are encounters only while enrolled at occurred_at; cancelled and planned ones nothing", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      // Enrolled from March 10 to March 20 (then disenrolled); two entries on March 20: the later one wins.
      yield* insertStatusEntries([
        { patientId: patient, status: "new_member", effectiveDate: "2026-01-01", source: "mif" },
        { patientId: patient, status: "enrolled", effectiveDate: "2026-03-10" },
        { patientId: patient, status: "enrolled", effectiveDate: "2026-03-20" },
        { patientId: patient, status: "disenrolled", effectiveDate: "2026-03-20" }
      ])
      const add = (activity: Record<string, unknown>) => created(me.token, patient, { assigned_to_id: me.id, ...activity })
      const call = (day: string, extra: Record<string, unknown>) => add({ activity_type: "call", voice_call_id: 1, occurred_at: `${day}T12:00:00Z`, ...extra })
      // Before enrolment: outreach, even connected.
      yield* call("2026-03-01", { status: "complete", duration: 10 })
      // Enrolled: connected → encounter; not connected (no duration, zero, open) → outreach.
      yield* call("2026-03-10", { status: "complete", duration: 10 })
      yield* call("2026-03-15", { status: "complete", duration: 0 })
      yield* call("2026-03-15", { status: "complete" })
      yield* call("2026-03-19", { duration: 5 })
      // After disenrolment (same-day entries: the later one, disenrolled, wins).
      yield* call("2026-03-20", { status: "complete", duration: 10 })
      const appointment = (day: string, status?: string) =>
        add({ activity_type: "in_person_appointment", booked_at: `${day}T09:00:00Z`, occurred_at: `${day}T09:00:00Z`, ...(status === undefined ? {} : { status }) })
      // Held: outreach before enrolment, an encounter while enrolled.
      yield* appointment("2026-03-09", "complete")
      yield* appointment("2026-03-11", "complete")
      // Cancelled, or planned and not yet held: neither, enrolled or not.
      yield* appointment("2026-03-11", "cancelled")
      yield* appointment("2026-03-12")
      yield* add({ activity_type: "sms", body: "s", text_message_id: 3, occurred_at: "2026-03-12T00:00:00Z" })
      yield* add({ activity_type: "email", email_to: "m@example.test", body: "e", occurred_at: "2026-03-12T00:00:00Z" })
      yield* add({ activity_type: "task", message: "t", occurred_at: "2026-03-12T00:00:00Z" })
      yield* add({ activity_type: "note", body: "n", occurred_at: "2026-03-12T00:00:00Z" })
      // Outside the range.
      yield* call("2026-04-01", { status: "complete", duration: 10 })
      // A held meeting event (no activity type makes one yet) while enrolled: an in-person encounter.
      const meetingActivity = yield* add({ activity_type: "task", message: "m", occurred_at: "2026-03-13T00:00:00Z" })
      yield* query(`UPDATE ecm_events SET event_type = 'meeting', status = 'complete' WHERE activity_id = $1`, meetingActivity)

      expect(yield* eventCounts(me.token, patient, { start_date: "2026-03-01", end_date: "2026-03-31" })).toEqual({
        patient_id: patient, start_date: "2026-03-01", end_date: "2026-03-31",
        counts: {
          total: 14,
          by_type: { sms: 1, call: 6, email: 1, appointment: 4, task: 1, meeting: 1 },
          prtf_categories: { telehealth_encounters: 1, in_person_encounters: 2, telehealth_outreach: 7, in_person_outreach: 1 }
        }
      })
    }))
})
