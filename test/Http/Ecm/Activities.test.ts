/** ECM activities (ECM §4.1): representations, required fields, access, subtasks, blocking, email, audit. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  activitiesUrl,
  createActivity,
  created,
  insertPatient,
  showActivity,
  staffUser,
  updateActivity
} from "./activitySupport.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

layer(TestApp())("ECM activities", (it) => {
  it.effect("create answers the create representation; performed_by is the caller whatever the body says", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Ada", "Lovelace")
      const me = yield* staffUser("provider", "Pat", "Performer")
      const other = yield* staffUser("support", "Ann", "Assignee")
      const response = yield* createActivity(me.token, patient, {
        activity_type: "task", message: "Call pharmacy", subject: "Refills", assigned_to_id: other.id, performed_by_id: other.id
      })
      expect(response.status).toBe(201)
      const activity = (response.body as { activity: Record<string, unknown> }).activity
      expect(activity).toEqual({
        id: expect.any(Number), activity_type: "task", status: "created", message: "Call pharmacy", subject: "Refills",
        patient_id: patient, performed_by_id: me.id, assigned_to_id: other.id,
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      const [audit] = yield* query<{ action: string; actor_id: number; target_id: number }>(
        `SELECT action, actor_id, target_id FROM audit_events WHERE action LIKE 'ecm_activity%' ORDER BY id DESC LIMIT 1`)
      expect(audit).toEqual({ action: "ecm_activity.create", actor_id: me.id, target_id: activity.id })
    }))

  it.effect("detail: every field, with the event, comments and subtasks", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Ada", "Lovelace")
      const me = yield* staffUser("provider", "Pat", "Performer")
      const id = yield* created(me.token, patient, {
        activity_type: "in_person_appointment", booked_at: "2026-03-02T17:00:00Z", occurred_at: "2026-03-01T10:00:00.000Z",
        subject: "Intake", body: "At the clinic", duration: 45, assigned_to_id: me.id
      })
      const comment = yield* request("POST", activitiesUrl(patient, `/${id}/comments`), { token: me.token, body: { comment: { body: "Confirmed by phone" } } })
      expect(comment.status).toBe(201)
      expect(comment.body).toEqual({
        comment: { id: expect.any(Number), body: "Confirmed by phone", user_id: me.id, user_name: "Pat Performer", activity_id: id, created_at: expect.stringMatching(iso) }
      })
      const { activity } = yield* showActivity(me.token, patient, id)
      const [event] = yield* query<{ id: number }>(`SELECT id FROM ecm_events WHERE activity_id = $1`, id)
      expect(activity).toEqual({
        id, activity_type: "in_person_appointment", status: "created", message: null, subject: "Intake", body: "At the clinic",
        occurred_at: "2026-03-01T10:00:00.000Z", booked_at: "2026-03-02T17:00:00.000Z", email_to: null, transcript: null,
        patient_id: patient, patient_name: "Ada Lovelace", performed_by_id: me.id, performed_by_name: "Pat Performer",
        assigned_to_id: me.id, assigned_to_name: "Pat Performer", parent_id: null, blocked_by_id: null, blocking_id: null,
        voice_call_id: null, text_message_id: null,
        comments: [{ id: expect.any(Number), body: "Confirmed by phone", user_id: me.id, user_name: "Pat Performer", created_at: expect.stringMatching(iso) }],
        subtasks: [], telephony_call: null, telephony_sms: null,
        event: { id: event!.id, event_type: "appointment", occurred_at: "2026-03-01T10:00:00.000Z", status: "scheduled" },
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
    }))

  it.effect("list: list representation, newest first, 25 a page by default, filters", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Lis", "Ting")
      const otherPatient = yield* insertPatient()
      const me = yield* staffUser("supervisor", "Sam", "Super")
      const helper = yield* staffUser("billing", "Bo", "Biller")
      for (let i = 0; i < 27; i++) {
        yield* created(me.token, patient, { activity_type: "note", body: `Note ${i}`, assigned_to_id: me.id, occurred_at: `2026-01-${String(i + 1).padStart(2, "0")}T12:00:00Z` })
      }
      const task = yield* created(me.token, patient, { activity_type: "task", message: "Do it", assigned_to_id: helper.id, status: "complete", occurred_at: "2026-02-01T00:00:00Z" })
      yield* created(me.token, otherPatient, { activity_type: "task", message: "Elsewhere", assigned_to_id: me.id })
      yield* request("POST", activitiesUrl(patient, `/${task}/comments`), { token: me.token, body: { comment: { body: "one" } } })
      yield* request("POST", activitiesUrl(patient, `/${task}/comments`), { token: me.token, body: { comment: { body: "two" } } })

      const first = yield* request("GET", activitiesUrl(patient), { token: me.token })
      expect(first.status).toBe(200)
      const body = first.body as { activities: Array<Record<string, unknown>>; pagination: unknown }
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 28, per_page: 25 })
      expect(body.activities).toHaveLength(25)
      expect(body.activities[0]).toEqual({
        id: task, activity_type: "task", status: "complete", message: "Do it", subject: null, body: null,
        occurred_at: "2026-02-01T00:00:00.000Z", patient_id: patient, patient_name: "Lis Ting",
        performed_by_id: me.id, performed_by_name: "Sam Super", assigned_to_id: helper.id, assigned_to_name: "Bo Biller",
        parent_id: null, comments_count: 2, created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      expect(body.activities[1]).toMatchObject({ body: "Note 26", occurred_at: "2026-01-27T12:00:00.000Z" })
      const client = yield* clientAs(me.token)
      const second = yield* client.ecmActivities.list({ path: { patient_id: patient }, urlParams: { page: 2, page_size: 25 } })
      expect(second.activities.map((a) => a.body)).toEqual(["Note 2", "Note 1", "Note 0"])
      const filtered = (urlParams: Parameters<typeof client.ecmActivities.list>[0]["urlParams"]) =>
        Effect.map(client.ecmActivities.list({ path: { patient_id: patient }, urlParams }), (r) => r.activities.map((a) => a.id))
      expect(yield* filtered({ activity_type: "task" })).toEqual([task])
      expect(yield* filtered({ assigned_to_id: helper.id })).toEqual([task])
      expect(yield* filtered({ status: "complete" })).toEqual([task])
      expect((yield* filtered({ status: "created", page_size: 100 })).length).toBe(27)
      const bad = yield* request("GET", activitiesUrl(patient, "?status=done&page_size=0"), { token: me.token })
      expect({ status: bad.status, body: bad.body }).toEqual({ status: 422, body: { errors: ["Page size must be greater than 0", "Status is not included in the list"] } })
    }))

  it.effect("422 lists every missing required field of the type, then Assigned to; nothing is saved", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const cases: ReadonlyArray<[Record<string, unknown>, ReadonlyArray<string>]> = [
        [{ activity_type: "task" }, ["Message can't be blank", "Assigned to can't be blank"]],
        [{ activity_type: "note", body: "  " }, ["Body can't be blank", "Assigned to can't be blank"]],
        [{ activity_type: "sms", assigned_to_id: me.id }, ["Body can't be blank", "Text message can't be blank"]],
        [{ activity_type: "call" }, ["Voice call can't be blank", "Assigned to can't be blank"]],
        [{ activity_type: "email", assigned_to_id: me.id }, ["Email to can't be blank", "Body can't be blank"]],
        [{ activity_type: "in_person_appointment", assigned_to_id: me.id }, ["Booked at can't be blank"]],
        [{}, ["Activity type can't be blank", "Assigned to can't be blank"]]
      ]
      for (const [activity, errors] of cases) {
        const response = yield* createActivity(me.token, patient, activity)
        expect({ activity, status: response.status, body: response.body }).toEqual({ activity, status: 422, body: { errors } })
      }
      const wrong = yield* createActivity(me.token, patient, { activity_type: "meeting", assigned_to_id: "x", booked_at: "soon" })
      expect({ status: wrong.status, body: wrong.body }).toEqual({
        status: 422, body: { errors: ["Activity type is not included in the list", "Assigned to is not a number", "Booked at is invalid"] }
      })
      const noBody = yield* request("POST", activitiesUrl(patient), { token: me.token, body: {} })
      expect({ status: noBody.status, body: noBody.body }).toEqual({ status: 422, body: { errors: ["Activity can't be blank"] } })
      expect(yield* query(`SELECT id FROM ecm_activities WHERE patient_id = $1`, patient)).toEqual([])
    }))

  it.effect("assigned_to_id must be an active staff user", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const parent = yield* insertUser({ email: "parent@activities.test", role: "parent" })
      const gone = yield* staffUser("support")
      yield* query(`UPDATE users SET status = 'inactive' WHERE id = $1`, gone.id)
      for (const assignee of [parent.id, gone.id, 999999]) {
        const response = yield* createActivity(me.token, patient, { activity_type: "task", message: "m", assigned_to_id: assignee })
        expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: { errors: ["Assigned to must be an active staff user"] } })
      }
    }))

  it.effect("access: 401 without a token, parent 403 in the ECM shape; unknown patient 404 first, activity of another patient 404", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const otherPatient = yield* insertPatient()
      const me = yield* staffUser("support")
      const parent = yield* insertUser({ email: "family@activities.test", role: "parent" })
      const id = yield* created(me.token, otherPatient, { activity_type: "task", message: "m", assigned_to_id: me.id })
      expect((yield* request("GET", activitiesUrl(patient))).status).toBe(401)
      const refused = yield* request("GET", activitiesUrl(patient), { token: parent.token })
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Staff access required"] } })
      const refusedCreate = yield* createActivity(parent.token, patient, { activity_type: "task", message: "m", assigned_to_id: me.id })
      expect(refusedCreate.status).toBe(403)

      const patientMissing = { status: 404, body: { errors: ["Patient not found"] } }
      const activityMissing = { status: 404, body: { errors: ["Activity not found"] } }
      const outcome = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body })
      // Unknown patient: 404 Patient before the body is looked at.
      expect(outcome(yield* createActivity(me.token, 999999, {}))).toEqual(patientMissing)
      expect(outcome(yield* request("GET", activitiesUrl(999999)))).toEqual({ status: 401, body: { errors: "You are not authorized to perform this action." } })
      expect(outcome(yield* request("GET", activitiesUrl(999999), { token: me.token }))).toEqual(patientMissing)
      expect(outcome(yield* request("GET", activitiesUrl(999999, `/${id}`), { token: me.token }))).toEqual(patientMissing)
      expect(outcome(yield* updateActivity(me.token, 999999, id, { status: "complete" }))).toEqual(patientMissing)
      expect(outcome(yield* request("DELETE", activitiesUrl(999999, `/${id}`), { token: me.token }))).toEqual(patientMissing)
      // The activity belongs to another patient than the path's.
      expect(outcome(yield* request("GET", activitiesUrl(patient, `/${id}`), { token: me.token }))).toEqual(activityMissing)
      expect(outcome(yield* updateActivity(me.token, patient, id, { status: "complete" }))).toEqual(activityMissing)
      expect(outcome(yield* request("DELETE", activitiesUrl(patient, `/${id}`), { token: me.token }))).toEqual(activityMissing)
      expect(outcome(yield* request("POST", activitiesUrl(patient, `/${id}/comments`), { token: me.token, body: { comment: { body: "x" } } }))).toEqual(activityMissing)
      const blank = yield* request("POST", activitiesUrl(otherPatient, `/${id}/comments`), { token: me.token, body: { comment: { body: " " } } })
      expect(outcome(blank)).toEqual({ status: 422, body: { errors: ["Body can't be blank"] } })
      expect((yield* showActivity(me.token, otherPatient, id)).activity.status).toBe("created")
    }))

  it.effect("update: any create field, answers the detail representation, keeps the event in step; status moves", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient("Up", "Date")
      const me = yield* staffUser("provider", "Pat", "Performer")
      const other = yield* staffUser("admin", "Al", "Admin")
      const id = yield* created(me.token, patient, { activity_type: "call", voice_call_id: 77, assigned_to_id: me.id, occurred_at: "2026-04-01T09:00:00Z" })
      const response = yield* updateActivity(other.token, patient, id, {
        status: "complete", duration: 12, subject: "Follow-up", occurred_at: "2026-04-02T09:30:00Z", assigned_to_id: other.id
      })
      expect(response.status).toBe(200)
      const activity = (response.body as { activity: Record<string, unknown> }).activity
      expect(activity).toMatchObject({
        id, activity_type: "call", status: "complete", subject: "Follow-up", voice_call_id: 77, occurred_at: "2026-04-02T09:30:00.000Z",
        performed_by_id: me.id, assigned_to_id: other.id, assigned_to_name: "Al Admin",
        event: { event_type: "call", status: "complete", occurred_at: "2026-04-02T09:30:00.000Z", id: expect.any(Number) }
      })
      expect(Object.keys(activity).sort()).toEqual(Object.keys((yield* showActivity(me.token, patient, id)).activity).sort())
      const [event] = yield* query(`SELECT status, subject, duration, occurred_at FROM ecm_events WHERE activity_id = $1`, id)
      expect(event).toEqual({ status: "complete", subject: "Follow-up", duration: 12, occurred_at: new Date("2026-04-02T09:30:00Z") })

      // complete → cancelled must go through created.
      const refused = yield* updateActivity(me.token, patient, id, { status: "cancelled" })
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 422, body: { errors: ["Status can't change from complete to cancelled; reopen the activity (status created) first"] }
      })
      expect((yield* updateActivity(me.token, patient, id, { status: "created" })).status).toBe(200)
      expect((yield* updateActivity(me.token, patient, id, { status: "cancelled" })).status).toBe(200)
      const again = yield* updateActivity(me.token, patient, id, { status: "complete" })
      expect((again.body as { errors: Array<string> }).errors).toEqual(["Status can't change from cancelled to complete; reopen the activity (status created) first"])
      expect((yield* query(`SELECT status FROM ecm_events WHERE activity_id = $1`, id))[0]).toEqual({ status: "cancelled" })

      // Clearing a required field is a 422 like a missing one.
      const cleared = yield* updateActivity(me.token, patient, id, { voice_call_id: null })
      expect(cleared.body).toEqual({ errors: ["Voice call can't be blank"] })
      const clearedAll = yield* updateActivity(me.token, patient, id, { activity_type: null, assigned_to_id: null })
      expect(clearedAll.body).toEqual({ errors: ["Activity type can't be blank", "Assigned to can't be blank"] })
      // A type change changes the event; a note has none.
      const toNote = yield* (yield* clientAs(me.token)).ecmActivities.update({
        path: { patient_id: patient, id }, payload: { activity: { activity_type: "note", body: "Just a note" } }
      })
      expect(toNote.activity).toMatchObject({ id, activity_type: "note", body: "Just a note", event: null })
      expect(yield* query(`SELECT id FROM ecm_events WHERE activity_id = $1`, id)).toEqual([])
      const actions = yield* query<{ action: string }>(`SELECT action FROM audit_events WHERE target_id = $1 AND target_type = 'ecm_activity' ORDER BY id`, id)
      expect(actions.map((a) => a.action)).toEqual(["ecm_activity.create", "ecm_activity.update", "ecm_activity.update", "ecm_activity.update", "ecm_activity.update"])
    }))

  it.effect("delete: 204 with an empty body; its event and comments go; audited", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const client = yield* clientAs(me.token)
      const { activity } = yield* client.ecmActivities.create({
        path: { patient_id: patient }, payload: { activity: { activity_type: "task", message: "m", assigned_to_id: me.id } }
      })
      expect(activity).toMatchObject({ activity_type: "task", status: "created", message: "m", patient_id: patient, performed_by_id: me.id })
      const id = activity.id
      const { comment } = yield* client.ecmActivities.comment({ path: { patient_id: patient, activity_id: id }, payload: { comment: { body: "c" } } })
      expect(comment).toMatchObject({ body: "c", user_id: me.id, activity_id: id })
      const shown = yield* client.ecmActivities.show({ path: { patient_id: patient, id } })
      expect(shown.activity.comments.map((c) => c.id)).toEqual([comment.id])
      const deleted = yield* request("DELETE", activitiesUrl(patient, `/${id}`), { token: me.token })
      expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 204, body: undefined })
      expect(yield* query(`SELECT id FROM ecm_events WHERE activity_id = $1`, id)).toEqual([])
      expect(yield* query(`SELECT id FROM ecm_activity_comments WHERE activity_id = $1`, id)).toEqual([])
      const again = yield* request("DELETE", activitiesUrl(patient, `/${id}`), { token: me.token })
      expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: { errors: ["Activity not found"] } })
      const [audit] = yield* query(`SELECT action FROM audit_events WHERE target_id = $1 AND action = 'ecm_activity.delete'`, id)
      expect(audit).toEqual({ action: "ecm_activity.delete" })
    }))

  it.effect("subtasks: under a task of the same patient only; listed in the parent; deleting the parent keeps them", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const otherPatient = yield* insertPatient()
      const me = yield* staffUser()
      const parent = yield* created(me.token, patient, { activity_type: "task", message: "Parent", assigned_to_id: me.id })
      const note = yield* created(me.token, patient, { activity_type: "note", body: "n", assigned_to_id: me.id })
      const foreignTask = yield* created(me.token, otherPatient, { activity_type: "task", message: "f", assigned_to_id: me.id })
      const child = yield* created(me.token, patient, { activity_type: "task", message: "Child", assigned_to_id: me.id, parent_id: parent })
      const detail = (yield* showActivity(me.token, patient, parent)).activity
      expect(detail.subtasks.map((s: { id: number; parent_id: number; message: string }) => [s.id, s.parent_id, s.message])).toEqual([[child, parent, "Child"]])
      expect(Object.keys(detail.subtasks[0]).sort()).toEqual([
        "activity_type", "assigned_to_id", "assigned_to_name", "body", "comments_count", "created_at", "id", "message", "occurred_at",
        "parent_id", "patient_id", "patient_name", "performed_by_id", "performed_by_name", "status", "subject", "updated_at"
      ])
      for (const parentId of [note, foreignTask, 999999]) {
        const refused = yield* createActivity(me.token, patient, { activity_type: "task", message: "x", assigned_to_id: me.id, parent_id: parentId })
        expect({ status: refused.status, body: refused.body }).toEqual({ status: 422, body: { errors: ["Parent must be a task of this patient"] } })
      }
      const notATask = yield* createActivity(me.token, patient, { activity_type: "note", body: "x", assigned_to_id: me.id, parent_id: parent })
      expect(notATask.body).toEqual({ errors: ["Parent can only be set on a task: subtasks are tasks"] })
      const cycle = yield* updateActivity(me.token, patient, parent, { parent_id: child })
      expect({ status: cycle.status, body: cycle.body }).toEqual({ status: 422, body: { errors: ["Parent would make the task a subtask of itself"] } })
      const self = yield* updateActivity(me.token, patient, parent, { parent_id: parent })
      expect(self.body).toEqual({ errors: ["Parent can't be the activity itself"] })
      const typeChange = yield* updateActivity(me.token, patient, parent, { activity_type: "note", body: "b" })
      expect(typeChange.body).toEqual({ errors: ["Activity type can't change while the task has subtasks"] })
      expect((yield* request("DELETE", activitiesUrl(patient, `/${parent}`), { token: me.token })).status).toBe(204)
      expect((yield* showActivity(me.token, patient, child)).activity.parent_id).toBeNull()
    }))

  it.effect("blocking: both sides stay consistent, cycles are refused, completion waits for the blocker", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const otherPatient = yield* insertPatient()
      const me = yield* staffUser()
      const task = (message: string, extra: Record<string, unknown> = {}) => created(me.token, patient, { activity_type: "task", message, assigned_to_id: me.id, ...extra })
      const a = yield* task("A")
      const b = yield* task("B", { blocked_by_id: a })
      const links = (id: number) => Effect.map(showActivity(me.token, patient, id), ({ activity }) => [activity.blocked_by_id, activity.blocking_id])
      expect(yield* links(a)).toEqual([null, b])
      expect(yield* links(b)).toEqual([a, null])
      // Setting the other side: C blocks B now; A blocks nothing.
      const c = yield* task("C", { blocking_id: b })
      expect(yield* links(b)).toEqual([c, null])
      expect(yield* links(a)).toEqual([null, null])
      expect(yield* links(c)).toEqual([null, b])
      // Cycles, direct and through a chain, leave everything as it was.
      const direct = yield* updateActivity(me.token, patient, c, { blocked_by_id: b })
      expect({ status: direct.status, body: direct.body }).toEqual({ status: 422, body: { errors: ["Blocking links would form a cycle"] } })
      yield* updateActivity(me.token, patient, a, { blocking_id: c })
      const chain = yield* updateActivity(me.token, patient, b, { blocking_id: a })
      expect(chain.body).toEqual({ errors: ["Blocking links would form a cycle"] })
      expect([yield* links(a), yield* links(b), yield* links(c)]).toEqual([[null, c], [c, null], [a, b]])
      const foreign = yield* created(me.token, otherPatient, { activity_type: "task", message: "F", assigned_to_id: me.id })
      const wrong = yield* updateActivity(me.token, patient, a, { blocked_by_id: foreign, blocking_id: a })
      expect(wrong.body).toEqual({ errors: ["Blocked by must be an activity of this patient", "Blocking can't be the activity itself"] })
      // B waits for C, which is open.
      const blocked = yield* updateActivity(me.token, patient, b, { status: "complete" })
      expect({ status: blocked.status, body: blocked.body }).toEqual({
        status: 422, body: { errors: [`Status can't be complete while blocked by activity ${c} (task), which is still open`] }
      })
      const blockedCreate = yield* createActivity(me.token, patient, { activity_type: "task", message: "D", assigned_to_id: me.id, blocked_by_id: a, status: "complete" })
      expect(blockedCreate.body).toEqual({ errors: [`Status can't be complete while blocked by activity ${a} (task), which is still open`] })
      expect((yield* updateActivity(me.token, patient, c, { status: "cancelled" })).status).toBe(200)
      expect((yield* updateActivity(me.token, patient, b, { status: "complete" })).status).toBe(200)
      // Deleting the blocker unblocks; null releases.
      expect((yield* request("DELETE", activitiesUrl(patient, `/${c}`), { token: me.token })).status).toBe(204)
      expect(yield* links(b)).toEqual([null, null])
      expect(yield* links(a)).toEqual([null, null])
    }))

  it.effect("concurrent links that would close a cycle together: one succeeds, one is refused", () =>
    Effect.gen(function*() {
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const a = yield* created(me.token, patient, { activity_type: "task", message: "A", assigned_to_id: me.id })
      const b = yield* created(me.token, patient, { activity_type: "task", message: "B", assigned_to_id: me.id })
      const [x, y] = yield* Effect.all([
        updateActivity(me.token, patient, a, { blocked_by_id: b }),
        updateActivity(me.token, patient, b, { blocked_by_id: a })
      ], { concurrency: 2 })
      expect([x.status, y.status].sort()).toEqual([200, 422])
    }))

  it.effect("email activities send through the Mailer; attachments as links; a failed send saves nothing", () =>
    Effect.gen(function*() {
      const mailer = yield* MemoryMailer
      yield* mailer.clear
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const id = yield* created(me.token, patient, {
        activity_type: "email", email_to: "member@example.test", subject: "Your visit", body: "See you Monday.", assigned_to_id: me.id,
        email_attachments: ["https://files.example.test/map.pdf"]
      })
      const sent = yield* mailer.sent
      expect(sent.map((m) => ({ to: m.to, subject: m.subject, text: m.text, attachments: m.attachments }))).toEqual([{
        to: ["member@example.test"], subject: "Your visit",
        text: "See you Monday.\n\nAttachments:\n- https://files.example.test/map.pdf\n", attachments: undefined
      }])
      expect((yield* showActivity(me.token, patient, id)).activity).toMatchObject({ email_to: "member@example.test", event: { event_type: "email", status: "attempted" } })
      // Updating does not send again.
      yield* updateActivity(me.token, patient, id, { status: "complete" })
      expect(yield* mailer.sent).toHaveLength(1)

      yield* mailer.failNext("SMTP delivery failed (EENVELOPE 550)")
      const failed = yield* createActivity(me.token, patient, { activity_type: "email", email_to: "x@example.test", body: "b", assigned_to_id: me.id })
      expect({ status: failed.status, body: failed.body }).toEqual({ status: 422, body: { errors: ["Email could not be sent: SMTP delivery failed (EENVELOPE 550)"] } })
      expect((yield* query(`SELECT count(*)::int AS n FROM ecm_activities WHERE patient_id = $1`, patient))[0]).toEqual({ n: 1 })
      expect((yield* query(`SELECT count(*)::int AS n FROM ecm_events WHERE patient_id = $1`, patient))[0]).toEqual({ n: 1 })

      const badLink = yield* createActivity(me.token, patient, { activity_type: "email", email_to: "x@example.test", body: "b", assigned_to_id: me.id, email_attachments: ["file:///etc/passwd"] })
      expect(badLink.body).toEqual({ errors: ["Email attachments is not an http(s) URL"] })
      const notEmail = yield* createActivity(me.token, patient, { activity_type: "task", message: "m", assigned_to_id: me.id, email_attachments: ["https://a.example.test/x"] })
      expect(notEmail.body).toEqual({ errors: ["Email attachments are only for email activities"] })
    }))
})
