/**
 * Engagement status: PUT records a validated entry in ecm_status_histories (possibly late, with a
 * reason), GET shows the history; outreach activities move new and pending members to
 * outreach_in_progress in the activity's transaction.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { createActivity, created, eventCounts, insertPatient, staffUser, updateActivity } from "./activitySupport.js"
import { csvText, generateReport, insertMember, insertStatus, parseCsv } from "./prtfSupport.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const statusUrl = (patientId: number) => `/v1/admin/clinic/ecm/patients/${patientId}/engagement_status`
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const put = (token: string, patientId: number, body: unknown) => request("PUT", statusUrl(patientId), { token, body })

/** The history through the typed client: the current entry and every entry, newest first. */
const history = (token: string, patientId: number) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmEngagementStatus.show({ path: { id: patientId } }))

const today = Effect.map(TestClock.currentTimeMillis, (ms) => new Date(ms).toISOString().slice(0, 10))

layer(TestApp())("ECM engagement status", (it) => {
  it.effect("PUT appends a user entry (staff or admin); GET shows the current one and the history newest first", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const staff = yield* staffUser("support", "Sam", "Staff")
      const member = yield* insertMember({ first_name: "Nia", last_name: "New", member_id: "E1" })
      yield* insertStatus(member, "new_member", "2026-01-02", "Created by MIF import", "mif")
      const changed = yield* put(staff.token, member, { status: "enrolled", effective_date: "2026-02-01", reason: "  Consented by phone " })
      expect(changed.status).toBe(200)
      const entry = {
        id: expect.any(Number), status: "enrolled", effective_date: "2026-02-01", source: "user", reason: "Consented by phone",
        actor_id: staff.id, created_at: expect.stringMatching(iso), replaced_status: "new_member", replaced_effective_date: "2026-01-02"
      }
      expect(changed.body).toEqual({ message: "Engagement status changed to enrolled", engagement_status: entry })
      const disenrolled = yield* put(admin, member, { status: "disenrolled", effective_date: "2026-03-01", reason: "Moved" })
      expect(disenrolled.status).toBe(200)
      const shown = yield* history(staff.token, member)
      expect(shown.patient_id).toBe(member)
      expect(shown.engagement_status).toMatchObject({ status: "disenrolled", effective_date: "2026-03-01", reason: "Moved", source: "user" })
      expect(shown.status_histories.map((e) => [e.status, e.effective_date, e.source])).toEqual([
        ["disenrolled", "2026-03-01", "user"], ["enrolled", "2026-02-01", "user"], ["new_member", "2026-01-02", "mif"]
      ])
      const audited = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE action = 'ecm_status_history.create'`)
      expect(audited[0]!.n).toBe(2)
    }))

  it.effect("transitions are validated; a refused change writes nothing", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const member = yield* insertMember({ first_name: "Tia", last_name: "Transit", member_id: "E2" })
      const day = yield* today
      const refusals: ReadonlyArray<[Record<string, unknown>, ReadonlyArray<string>]> = [
        [{ status: "disenrolled", effective_date: "2026-01-01", reason: "x" }, ["Status can't be disenrolled before any other status"]],
        [{ status: "enrolled", effective_date: "2999-01-01" }, ["Effective date can't be in the future"]],
        [{ status: "ready", effective_date: "2026-13-01" }, ["Status is not included in the list", "Effective date is invalid"]],
        [{}, ["Status can't be blank", "Effective date can't be blank"]]
      ]
      for (const [body, errors] of refusals) {
        const refused = yield* put(admin, member, body)
        expect({ body, status: refused.status, errors: refused.body }).toEqual({ body, status: 422, errors: { errors } })
      }
      expect((yield* history(admin, member)).status_histories).toEqual([])
      const ok = (body: Record<string, unknown>) =>
        Effect.map(put(admin, member, { reason: "Recorded late", ...body }), (r) => expect(r.status, JSON.stringify(r.body)).toBe(200))
      yield* ok({ status: "new_member", effective_date: "2026-01-01" })
      yield* ok({ status: "outreach_in_progress", effective_date: "2026-01-05" })
      yield* ok({ status: "enrolled", effective_date: "2026-01-05" })
      const afterEnrolled: ReadonlyArray<[Record<string, unknown>, ReadonlyArray<string>]> = [
        [{ status: "enrolled", effective_date: day }, ["Status is already enrolled"]],
        [{ status: "declined", effective_date: day }, ["Status can't change from enrolled to declined"]],
        // Late: on 2026-01-04 the member was new, and a new member cannot be disenrolled.
        [{ status: "disenrolled", effective_date: "2026-01-04", reason: "Moved" }, [
          "Status can't change from new_member to disenrolled",
          "Status can't be disenrolled from 2026-01-04: the later entry outreach_in_progress (2026-01-05) can't follow disenrolled"
        ]],
        [{ status: "declined", effective_date: "2026-01-03" }, ["Reason can't be blank when the effective date is in the past (say why it is recorded late)"]],
        [{ status: "enrolled", effective_date: "2026-01-03", reason: "Late" }, [
          "Status can't be enrolled from 2026-01-03: the later entry outreach_in_progress (2026-01-05) can't follow enrolled"
        ]],
        [{ status: "disenrolled", effective_date: day, reason: "  " }, ["Reason can't be blank when disenrolling (the discontinuation reason)"]],
        [{ status: "disenrolled", effective_date: day }, ["Reason can't be blank when disenrolling (the discontinuation reason)"]]
      ]
      for (const [body, errors] of afterEnrolled) {
        const refused = yield* put(admin, member, body)
        expect({ body, status: refused.status, errors: refused.body }).toEqual({ body, status: 422, errors: { errors } })
      }
      yield* ok({ status: "disenrolled", effective_date: day, reason: "Moved out of county" })
      for (const status of ["enrolled", "pending_outreach", "outreach_in_progress", "declined", "unable_to_reach"]) {
        const refused = yield* put(admin, member, { status, effective_date: day })
        expect(refused.body).toEqual({ errors: [`Status can't change from disenrolled to ${status} (only a re-referral, new_member, follows disenrolled)`] })
      }
      yield* ok({ status: "new_member", effective_date: day })
      expect((yield* history(admin, member)).status_histories.map((e) => e.status)).toEqual([
        "new_member", "disenrolled", "enrolled", "outreach_in_progress", "new_member"
      ])
    }))

  it.effect("recorded late: a past effective date with a reason; automatic moves it makes untrue are withdrawn and kept; PRTF reads each day's status", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const me = yield* staffUser("provider", "Lena", "Late")
      const member = yield* insertMember({ first_name: "Lou", last_name: "Late", member_id: "L1", auth_to: null })
      yield* insertStatus(member, "new_member", "2026-01-01", "Created by MIF import", "mif")
      // Calls made on Jan 18 and Jan 25, connected: the first moves the member to outreach_in_progress.
      const call = (day: string, voice_call_id: number) => created(me.token, member, {
        activity_type: "call", voice_call_id, assigned_to_id: me.id, status: "complete", duration: 15, occurred_at: `${day}T10:00:00Z`
      })
      yield* call("2026-01-18", 11)
      yield* call("2026-01-25", 12)
      const automatic = (yield* history(admin, member)).engagement_status!
      expect(automatic).toMatchObject({ status: "outreach_in_progress", effective_date: "2026-01-18", source: "system", replaced_status: "new_member" })
      const counts = Effect.map(eventCounts(me.token, member, { start_date: "2026-01-01", end_date: "2026-01-31" }), (r) => r.counts.prtf_categories)
      expect(yield* counts).toMatchObject({ telehealth_encounters: 0, telehealth_outreach: 2 })

      // The consent was signed on Jan 15 and is entered today: a reason is required.
      const noReason = yield* put(me.token, member, { status: "enrolled", effective_date: "2026-01-15" })
      expect({ status: noReason.status, body: noReason.body }).toEqual({
        status: 422, body: { errors: ["Reason can't be blank when the effective date is in the past (say why it is recorded late)"] }
      })
      const { engagement_status: entry } = yield* (yield* clientAs(me.token)).ecmEngagementStatus.update({
        path: { id: member }, payload: { status: "enrolled", effective_date: "2026-01-15", reason: "Consent form found in the mail" }
      })
      expect(entry).toMatchObject({
        status: "enrolled", effective_date: "2026-01-15", source: "user", actor_id: me.id, reason: "Consent form found in the mail",
        replaced_status: "new_member", replaced_effective_date: "2026-01-01"
      })
      // The history, by effective date: the automatic move, made because nobody knew, is withdrawn.
      const shown = yield* history(admin, member)
      expect(shown.status_histories.map((e) => [e.status, e.effective_date, e.source])).toEqual([
        ["enrolled", "2026-01-15", "user"], ["new_member", "2026-01-01", "mif"]
      ])
      expect(yield* query(`SELECT entry_id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source,
          withdrawn_by_entry_id, withdrawn_by_actor_id FROM ecm_status_history_withdrawals WHERE patient_id = $1`, member)).toEqual([{
        entry_id: automatic.id, status: "outreach_in_progress", effective_date: "2026-01-18", source: "system",
        withdrawn_by_entry_id: entry.id, withdrawn_by_actor_id: me.id
      }])
      expect(yield* query(`SELECT action, target_id, actor_id FROM audit_events WHERE action LIKE 'ecm_status_history.%' ORDER BY id`))
        .toEqual(expect.arrayContaining([
          { action: "ecm_status_history.withdraw", target_id: automatic.id, actor_id: me.id },
          { action: "ecm_status_history.create", target_id: entry.id, actor_id: me.id }
        ]))
      // Both calls fell while enrolled: encounters now, in the counts and in the PRTF file.
      expect(yield* counts).toMatchObject({ telehealth_encounters: 2, telehealth_outreach: 0 })
      const report = yield* generateReport(admin, { start_date: "2026-01-01", end_date: "2026-01-31" })
      const [header, ...rows] = parseCsv(yield* csvText(report.prtf_report.url))
      const row = rows.find((r) => r[header!.indexOf("Member ID (CIN)")] === "L1")!
      expect([row[header!.indexOf("Telehealth Encounters")], row[header!.indexOf("Telehealth Outreach Attempts")],
        row[header!.indexOf("ECM Enrollment Start Date")]]).toEqual(["2", "0", "2026-01-15"])

      // Never in the future, even with a reason.
      const day = yield* today
      const tomorrow = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
      const future = yield* put(me.token, member, { status: "disenrolled", effective_date: tomorrow, reason: "Moving" })
      expect({ status: future.status, body: future.body }).toEqual({ status: 422, body: { errors: ["Effective date can't be in the future"] } })
      expect((yield* history(admin, member)).status_histories.length).toBe(2)
    }))

  it.effect("404 for an unknown patient or one that is not an ECM member; parents are refused", () =>
    Effect.gen(function*() {
      const admin = yield* signIn()
      const clinicPatient = yield* insertPatient("Cli", "Nic")
      for (const id of [clinicPatient, 999999]) {
        const missing = yield* put(admin, id, { status: "new_member", effective_date: "2026-01-01" })
        expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: ["Patient not found"] } })
        const shown = yield* request("GET", statusUrl(id), { token: admin })
        expect({ status: shown.status, body: shown.body }).toEqual({ status: 404, body: { errors: ["Patient not found"] } })
      }
      const parent = yield* insertUser({ email: "parent@engagement.test", role: "parent" })
      const member = yield* insertMember({ first_name: "Pia", last_name: "Parent", member_id: "E3" })
      const refused = yield* put(parent.token, member, { status: "new_member", effective_date: "2026-01-01" })
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Staff access required"] } })
    }))

  it.effect("outreach moves new_member and pending_outreach to outreach_in_progress, in the activity's transaction", () =>
    Effect.gen(function*() {
      const me = yield* staffUser("provider", "Otto", "Outreach")
      const day = yield* today
      const fresh = yield* insertMember({ first_name: "Fred", last_name: "Fresh", member_id: "E4" })
      yield* insertStatus(fresh, "new_member", "2026-01-02", null, "mif")
      // A task or a planned appointment is no outreach attempt: nothing moves.
      yield* created(me.token, fresh, { activity_type: "task", message: "Call Fred", assigned_to_id: me.id })
      const appointment = yield* created(me.token, fresh, { activity_type: "in_person_appointment", booked_at: "2026-05-01T10:00:00Z", assigned_to_id: me.id, occurred_at: "2026-05-01T10:00:00Z" })
      expect((yield* history(me.token, fresh)).status_histories.map((e) => e.status)).toEqual(["new_member"])
      // The appointment took place (complete): an in-person outreach attempt, effective its day.
      yield* updateActivity(me.token, fresh, appointment, { status: "complete" })
      const moved = (yield* history(me.token, fresh)).status_histories
      expect(moved[0]).toMatchObject({
        status: "outreach_in_progress", effective_date: "2026-05-01", source: "system", actor_id: me.id,
        reason: `Outreach attempt recorded (activity ${appointment})`
      })
      // Once in progress, more outreach adds nothing.
      yield* created(me.token, fresh, { activity_type: "sms", body: "Hi", text_message_id: 1, assigned_to_id: me.id })
      expect((yield* history(me.token, fresh)).status_histories.length).toBe(2)

      const pending = yield* insertMember({ first_name: "Pam", last_name: "Pending", member_id: "E5" })
      yield* insertStatus(pending, "pending_outreach", "2026-02-01")
      // An sms recorded as of a day before the current entry takes effect the current entry's day.
      yield* created(me.token, pending, { activity_type: "sms", body: "Hi", text_message_id: 2, assigned_to_id: me.id, occurred_at: "2026-01-15T10:00:00Z" })
      expect((yield* history(me.token, pending)).engagement_status).toMatchObject({ status: "outreach_in_progress", effective_date: "2026-02-01" })

      // Enrolled members, and patients without any status, are left alone.
      const enrolled = yield* insertMember({ first_name: "Eli", last_name: "Enrolled", member_id: "E6" })
      yield* insertStatus(enrolled, "enrolled", "2026-01-01")
      yield* created(me.token, enrolled, { activity_type: "call", voice_call_id: 3, assigned_to_id: me.id })
      expect((yield* history(me.token, enrolled)).status_histories.map((e) => e.status)).toEqual(["enrolled"])
      const clinic = yield* insertPatient("No", "Status")
      yield* created(me.token, clinic, { activity_type: "call", voice_call_id: 4, assigned_to_id: me.id })
      expect(yield* query(`SELECT status FROM ecm_status_histories WHERE patient_id = $1`, clinic)).toEqual([])

      // The move and the activity commit together: a failure after the move leaves neither.
      const other = yield* insertMember({ first_name: "Rob", last_name: "Rollback", member_id: "E7" })
      yield* insertStatus(other, "new_member", day, null, "mif")
      yield* query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`)
      yield* query(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit()`)
      const failed = yield* createActivity(me.token, other, { activity_type: "call", voice_call_id: 5, assigned_to_id: me.id })
      yield* query(`DROP TRIGGER refuse_audit ON audit_events`)
      expect(failed.status).toBe(500)
      expect(yield* query(`SELECT status FROM ecm_status_histories WHERE patient_id = $1`, other)).toEqual([{ status: "new_member" }])
      expect(yield* query(`SELECT id FROM ecm_activities WHERE patient_id = $1`, other)).toEqual([])
    }))
})
