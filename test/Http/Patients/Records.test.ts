import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { auditActions } from "../Providers/helpers.js"
import { adminToken, iso, newPatient, patientNotFound, provider, signedIn, staffRequired } from "./helpers.js"

/** A family: a parent with one patient, and the staff who made it (an admin: staff who see every patient). */
const family = Effect.gen(function*() {
  const staff = yield* signedIn("admin")
  const parent = yield* signedIn("parent")
  const patient = yield* newPatient(staff.token, { user_id: parent.id })
  return { staff, parent, patient }
})

layer(TestApp({ clinicSupportEmail: "help@clinic.test" }))("help requests", (it) => {
  it.effect("a parent asks about their patient (patient_id optional with one patient); the support inbox is emailed", () =>
    Effect.gen(function*() {
      const { staff, parent, patient } = yield* family
      const mailer = yield* MemoryMailer
      yield* mailer.clear
      const created = yield* request("POST", "/v1/clinic/patients/help_requests", {
        token: parent.token, body: { help_request: { subject: " Rescheduling ", message: "Can we move Thursday?" } }
      })
      expect(created.status).toBe(201)
      const helpRequest = (created.body as { help_request: Record<string, unknown> }).help_request
      expect(helpRequest).toEqual({
        id: expect.any(Number), patient_id: patient, user_id: parent.id, subject: "Rescheduling", message: "Can we move Thursday?",
        status: "open", created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      const sent = yield* mailer.sent
      expect(sent).toHaveLength(1)
      expect(sent[0]!.to).toEqual(["help@clinic.test"])
      expect(sent[0]!.subject).toBe(`Help request #${helpRequest.id}`)
      // The message is health information: it stays in the API.
      expect(sent[0]!.text).not.toContain("Thursday")

      const [byStaff, byStaffResponse] = yield* (yield* clientAs(staff.token)).helpRequests.create({
        payload: { help_request: { patient_id: patient, subject: "Forms", message: "Sent by phone" } }, withResponse: true
      })
      expect(byStaffResponse.status).toBe(201)
      expect(byStaff.help_request).toMatchObject({ patient_id: patient, subject: "Forms", status: "open" })
      const listed = yield* request("GET", "/v1/clinic/patients/help_requests", { token: parent.token })
      expect(listed.status).toBe(200)
      expect(listed.body).toMatchObject({
        help_requests: [{ subject: "Forms", user_id: staff.id }, { subject: "Rescheduling" }],
        pagination: { current_page: 1, total_pages: 1, total_count: 2, per_page: 25 }
      })
      const paged = yield* request("GET", `/v1/clinic/patients/help_requests?patient_id=${patient}&page_size=1&page=2`, { token: staff.token })
      expect(paged.body).toMatchObject({ help_requests: [{ subject: "Rescheduling" }], pagination: { total_pages: 2, per_page: 1 } })
    }))

  it.effect("staff must name the patient; a parent naming another's patient gets 404; a mail failure keeps nothing", () =>
    Effect.gen(function*() {
      const { staff, parent, patient } = yield* family
      const other = yield* family
      const unnamed = yield* request("GET", "/v1/clinic/patients/help_requests", { token: staff.token })
      expect(unnamed.status).toBe(422)
      expect(unnamed.body).toEqual({ errors: { patient_id: ["can't be blank"] } })
      for (const [method, url, body] of [
        ["GET", `/v1/clinic/patients/help_requests?patient_id=${other.patient}`, undefined],
        ["POST", "/v1/clinic/patients/help_requests", { help_request: { patient_id: other.patient, subject: "x", message: "y" } }]
      ] as const) {
        const refused = yield* request(method, url, { token: parent.token, body })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual(patientNotFound)
      }
      // A second patient: the parent must now say which.
      yield* newPatient(staff.token, { user_id: parent.id })
      expect((yield* request("GET", "/v1/clinic/patients/help_requests", { token: parent.token })).body)
        .toEqual({ errors: { patient_id: ["can't be blank"] } })
      const blank = yield* request("POST", "/v1/clinic/patients/help_requests", { token: parent.token, body: { help_request: { patient_id: patient } } })
      expect(blank.body).toEqual({ errors: { subject: ["can't be blank"], message: ["can't be blank"] } })

      const mailer = yield* MemoryMailer
      yield* mailer.failNext("smtp down")
      const failed = yield* request("POST", "/v1/clinic/patients/help_requests", {
        token: parent.token, body: { help_request: { patient_id: patient, subject: "Lost", message: "Never stored" } }
      })
      expect(failed.status).toBe(503)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id FROM help_requests WHERE subject = 'Lost'`).toEqual([])
    }))
})

layer(TestApp())("treatment plans", (it) => {
  it.effect("staff create and edit plans (audited); the parent reads them; the latest is /last; completed is read-only", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const { staff, parent, patient } = yield* family
      const providerId = yield* provider(admin, "Tara", "Lind")
      const none = yield* request("GET", `/v1/clinic/patients/treatment_plans/last?patient_id=${patient}`, { token: staff.token })
      expect(none.status).toBe(404)
      expect(none.body).toEqual({ errors: "Treatment plan not found" })

      const created = yield* request("POST", "/v1/clinic/patients/treatment_plans", {
        token: staff.token,
        body: {
          treatment_plan: {
            patient_id: patient, provider_id: providerId, title: "Anxiety", diagnosis_codes: ["F41.1"],
            goals: [{ description: "Coping skills", target_date: "2026-06-30" }], interventions: ["CBT weekly"],
            start_date: "2026-01-15", end_date: "2026-07-15", status: "active"
          }
        }
      })
      expect(created.status).toBe(201)
      const plan = (created.body as { treatment_plan: Record<string, unknown> }).treatment_plan
      expect(plan).toEqual({
        id: expect.any(Number), patient_id: patient, provider_id: providerId, title: "Anxiety", diagnosis_codes: ["F41.1"],
        goals: [{ description: "Coping skills", target_date: "2026-06-30", status: "not_started" }], interventions: ["CBT weekly"],
        start_date: "2026-01-15", end_date: "2026-07-15", status: "active",
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      const id = plan.id as number
      const second = yield* (yield* clientAs(staff.token)).treatmentPlans.create({ payload: { treatment_plan: { patient_id: patient, title: "Sleep" } } })
      const secondId = second.treatment_plan.id
      expect(second.treatment_plan).toMatchObject({
        provider_id: null, diagnosis_codes: [], goals: [], interventions: [], start_date: null, end_date: null, status: "draft"
      })

      // The parent reads: list (newest first), last (their only patient: no patient_id needed), show.
      const listed = yield* request("GET", "/v1/clinic/patients/treatment_plans", { token: parent.token })
      expect(listed.body).toMatchObject({ treatment_plans: [{ id: secondId }, { id }], pagination: { total_count: 2, per_page: 25 } })
      const last = yield* request("GET", "/v1/clinic/patients/treatment_plans/last", { token: parent.token })
      expect(last.body).toMatchObject({ treatment_plan: { id: secondId, title: "Sleep" } })
      expect((yield* request("GET", `/v1/clinic/patients/treatment_plans/${id}`, { token: parent.token })).body)
        .toMatchObject({ treatment_plan: { id, title: "Anxiety" } })

      // The parent may not write, even on their own patient's plan.
      const parentEdit = yield* request("PUT", `/v1/clinic/patients/treatment_plans/${id}`, { token: parent.token, body: { treatment_plan: { title: "X" } } })
      expect(parentEdit.status).toBe(403)
      expect(parentEdit.body).toEqual(staffRequired)
      const parentCreate = yield* request("POST", "/v1/clinic/patients/treatment_plans", { token: parent.token, body: { treatment_plan: { patient_id: patient, title: "X" } } })
      expect(parentCreate.body).toEqual(staffRequired)

      const edited = yield* request("PUT", `/v1/clinic/patients/treatment_plans/${id}`, {
        token: staff.token, body: { treatment_plan: { goals: [{ description: "Coping skills", status: "achieved" }], interventions: [] } }
      })
      expect(edited.status).toBe(200)
      expect(edited.body).toMatchObject({ treatment_plan: { title: "Anxiety", goals: [{ status: "achieved", target_date: null }], interventions: [], diagnosis_codes: ["F41.1"] } })
      const badDates = yield* request("PUT", `/v1/clinic/patients/treatment_plans/${id}`, { token: staff.token, body: { treatment_plan: { end_date: "2025-01-01" } } })
      expect(badDates.status).toBe(422)
      expect(badDates.body).toEqual({ errors: { end_date: ["must be after start date"] } })
      const completed = yield* request("PUT", `/v1/clinic/patients/treatment_plans/${id}`, { token: staff.token, body: { treatment_plan: { status: "completed" } } })
      expect(completed.body).toMatchObject({ treatment_plan: { status: "completed" } })
      const readOnly = yield* request("PUT", `/v1/clinic/patients/treatment_plans/${id}`, { token: staff.token, body: { treatment_plan: { title: "Again" } } })
      expect(readOnly.status).toBe(422)
      expect(readOnly.body).toEqual({ errors: { status: ["is completed: the plan is read-only"] } })
      expect(yield* auditActions("treatment_plan", id)).toEqual(["treatment_plan.create", "treatment_plan.update", "treatment_plan.completed"])
    }))

  it.effect("another family's plans are 404 to a parent; unknown plan, patient and provider ids are refused", () =>
    Effect.gen(function*() {
      const { staff, patient } = yield* family
      const other = yield* family
      const created = yield* (yield* clientAs(staff.token)).treatmentPlans.create({ payload: { treatment_plan: { patient_id: patient, title: "Mine" } } })
      const id = created.treatment_plan.id
      for (const [method, url, body] of [
        ["GET", `/v1/clinic/patients/treatment_plans/${id}`, undefined],
        ["PUT", `/v1/clinic/patients/treatment_plans/${id}`, { treatment_plan: { title: "Stolen" } }]
      ] as const) {
        const refused = yield* request(method, url, { token: other.parent.token, body })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual({ errors: "Treatment plan not found" })
      }
      for (const url of [`/v1/clinic/patients/treatment_plans?patient_id=${patient}`, `/v1/clinic/patients/treatment_plans/last?patient_id=${patient}`]) {
        const refused = yield* request("GET", url, { token: other.parent.token })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual(patientNotFound)
      }
      const foreignCreate = yield* request("POST", "/v1/clinic/patients/treatment_plans", { token: other.parent.token, body: { treatment_plan: { patient_id: patient, title: "X" } } })
      expect(foreignCreate.body).toEqual(patientNotFound)
      const missing = yield* request("GET", "/v1/clinic/patients/treatment_plans/999999", { token: staff.token })
      expect(missing.body).toEqual({ errors: "Treatment plan not found" })
      const badProvider = yield* request("POST", "/v1/clinic/patients/treatment_plans", {
        token: staff.token, body: { treatment_plan: { patient_id: patient, title: "X", provider_id: 999999, start_date: "2026-02-01", end_date: "2026-01-01" } }
      })
      expect(badProvider.status).toBe(422)
      expect(badProvider.body).toEqual({ errors: { provider_id: ["must exist"], end_date: ["must be after start date"] } })
      const badStatus = yield* request("POST", "/v1/clinic/patients/treatment_plans", { token: staff.token, body: { treatment_plan: { patient_id: patient, title: "X", status: "done" } } })
      expect(badStatus.body).toEqual({ errors: { status: ["is not included in the list"] } })
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ title: string }>`SELECT title FROM treatment_plans WHERE id = ${id}`)[0]?.title).toBe("Mine")
    }))
})

layer(TestApp())("waitlist spots", (it) => {
  it.effect("positions count the waiting spots of the same program, oldest first; one open spot per patient and program", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("support")
      const patients = [yield* newPatient(staff.token), yield* newPatient(staff.token), yield* newPatient(staff.token)]
      const add = (patient: number, program: string) =>
        request("POST", `/v1/clinic/patients/${patient}/spot`, { token: staff.token, body: { spot: { program, notes: "Afternoons" } } })
      const spotOf = (body: unknown) => (body as { spot: Record<string, unknown> }).spot
      const first = yield* add(patients[0]!, "iop")
      expect(first.status).toBe(201)
      expect(spotOf(first.body)).toEqual({
        id: expect.any(Number), patient_id: patients[0], status: "waiting", position: 1, program: "iop", notes: "Afternoons",
        requested_at: expect.stringMatching(iso), offered_at: null, responded_at: null
      })
      const second = spotOf((yield* add(patients[1]!, "iop")).body)
      const third = spotOf((yield* add(patients[2]!, "iop")).body)
      const otherProgram = spotOf((yield* add(patients[1]!, "groups")).body)
      expect([second.position, third.position, otherProgram.position]).toEqual([2, 3, 1])

      const duplicate = yield* add(patients[0]!, "iop")
      expect(duplicate.status).toBe(409)
      expect(duplicate.body).toEqual({ errors: "Patient already has an open spot for this program" })

      // The first is offered: it leaves the waiting queue and everyone behind moves up.
      const offered = yield* request("PATCH", `/v1/clinic/patients/${patients[0]}/spot/${spotOf(first.body).id}`, { token: staff.token, body: { spot: { status: "offered" } } })
      expect(offered.status).toBe(200)
      expect(spotOf(offered.body)).toMatchObject({ status: "offered", position: null, offered_at: expect.stringMatching(iso), responded_at: null })
      const listed = yield* request("GET", `/v1/clinic/patients/${patients[2]}/spot`, { token: staff.token })
      expect(listed.body).toMatchObject({ spots: [{ id: third.id, position: 2 }], pagination: { total_count: 1, per_page: 25 } })
      // Still open while offered: no second spot.
      expect((yield* add(patients[0]!, "iop")).status).toBe(409)
      const declined = yield* request("PATCH", `/v1/clinic/patients/${patients[0]}/spot/${spotOf(first.body).id}`, { token: staff.token, body: { spot: { status: "declined" } } })
      expect(spotOf(declined.body)).toMatchObject({ status: "declined", responded_at: expect.stringMatching(iso) })
      // Closed: the patient may join the queue again, at its end.
      const again = yield* add(patients[0]!, "iop")
      expect(again.status).toBe(201)
      expect(spotOf(again.body).position).toBe(3)
    }))

  it.effect("moves follow the waitlist; a parent answers an offer on their own spot only; others' spots are 404", () =>
    Effect.gen(function*() {
      const { staff, parent, patient } = yield* family
      const other = yield* family
      const [created, createdResponse] = yield* (yield* clientAs(parent.token)).spots.create({
        path: { patient_id: patient }, payload: { spot: { program: "iop" } }, withResponse: true
      })
      expect(createdResponse.status).toBe(201)
      const id = created.spot.id
      const patch = (token: string, body: Record<string, unknown>, onPatient = patient, spotId = id) =>
        request("PATCH", `/v1/clinic/patients/${onPatient}/spot/${spotId}`, { token, body: { spot: body } })
      const early = yield* patch(parent.token, { status: "accepted" })
      expect(early.status).toBe(422)
      expect(early.body).toEqual({ errors: { status: ["can't change from waiting to accepted"] } })
      const parentOffers = yield* patch(parent.token, { status: "offered" })
      expect(parentOffers.status).toBe(403)
      expect(parentOffers.body).toEqual(staffRequired)
      expect((yield* patch(staff.token, { status: "offered" })).status).toBe(200)
      const accepted = yield* patch(parent.token, { status: "accepted" })
      expect(accepted.status).toBe(200)
      expect(accepted.body).toMatchObject({ spot: { status: "accepted", position: null } })
      const final = yield* patch(staff.token, { status: "waiting" })
      expect(final.body).toEqual({ errors: { status: ["can't change from accepted to waiting"] } })

      // Another family: their patient is 404; this family's spot under their own patient is 404 too.
      const foreign = yield* patch(other.parent.token, { status: "declined" })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual(patientNotFound)
      const crossed = yield* patch(other.parent.token, { status: "declined" }, other.patient)
      expect(crossed.status).toBe(404)
      expect(crossed.body).toEqual({ errors: "Spot not found" })
      for (const [method, body] of [["GET", undefined], ["POST", { spot: { program: "x" } }]] as const) {
        const refused = yield* request(method, `/v1/clinic/patients/${patient}/spot`, { token: other.parent.token, body })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual(patientNotFound)
      }
      expect(yield* auditActions("spot", id)).toEqual(["spot.create", "spot.offered", "spot.accepted"])
    }))

  it.effect("concurrent requests for the same program: exactly one spot", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("support")
      const patient = yield* newPatient(staff.token)
      const results = yield* Effect.all(
        Array.from({ length: 10 }, () => request("POST", `/v1/clinic/patients/${patient}/spot`, { token: staff.token, body: { spot: { program: "race" } } })),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
    }))
})
