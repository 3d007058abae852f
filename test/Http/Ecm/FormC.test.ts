/** Form C submissions: clinic create / list / detail, admin list / detail, every 422 and 404. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { maxFormDataBytes } from "../../../src/Domain/Ecm/FormC.js"
import { FormCSubmissions } from "../../../src/Services/Ecm/FormCSubmissions.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const clinicPath = "/v1/clinic/patients/ecm/form_c_submissions"
const adminPath = "/v1/admin/clinic/ecm/form_c_submissions"

const insertPatient = (first: string, last: string, memberId: string | null = null) =>
  fixtures.insertPatient({ first_name: first, last_name: last, member_id: memberId, date_of_birth: null })

const submit = (token: string, patientId: number | string, body: unknown) =>
  request("POST", `${clinicPath}?patient_id=${patientId}`, { token, body })

const errorsOf = (response: { readonly status: number; readonly body: unknown }) => ({ status: response.status, body: response.body })

const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

layer(TestApp())("Form C submissions", (it) => {
  it.effect("clinic staff create, list and show a patient's submissions; each create is audited", () =>
    Effect.gen(function*() {
      const nurse = yield* insertUser({ email: "nurse@formc.test", role: "provider", first_name: "Nia", last_name: "Nurse" })
      const patientId = yield* insertPatient("Pat", "Form", "M100")
      const formData = {
        background_information: { member_id: "M100", assessment_date: "2026-03-02", language: "es", flags: [true, "1", 1] },
        housing_environment: { stable: false, history: [{ moved_date: "2025-12-01" }] },
        priorities: {}
      }
      const created = yield* submit(nurse.token, patientId, { form_c_submission: { form_data: formData } })
      expect(created.status).toBe(201)
      const record = (created.body as { form_c_submission: Record<string, unknown> & { id: number } }).form_c_submission
      expect(created.body).toEqual({
        form_c_submission: {
          id: expect.any(Number), patient_id: patientId, user_id: nurse.id, form_data: formData,
          created_at: timestamp, updated_at: timestamp
        }
      })
      // Stored as jsonb exactly as sent: no coercion of "1" or 1 to booleans.
      const [stored] = yield* query<{ form_data: unknown; kind: string }>(
        `SELECT form_data, jsonb_typeof(form_data) AS kind FROM form_c_submissions WHERE id = $1`, record.id)
      expect(stored).toEqual({ form_data: formData, kind: "object" })
      const audited = yield* query<{ actor_id: number; action: string; target_type: string; target_id: number }>(
        `SELECT actor_id, action, target_type, target_id FROM audit_events WHERE action LIKE 'form_c%'`)
      expect(audited).toEqual([{ actor_id: nurse.id, action: "form_c_submission.create", target_type: "form_c_submission", target_id: record.id }])

      const client = yield* clientAs(nurse.token)
      const second = yield* client.ecmFormC.create({ urlParams: { patient_id: patientId }, payload: { form_c_submission: { form_data: { culture: { notes: "second" } } } } })
      expect(second.form_c_submission).toMatchObject({ patient_id: patientId, user_id: nurse.id, form_data: { culture: { notes: "second" } } })
      const secondId = second.form_c_submission.id
      yield* query(`UPDATE form_c_submissions SET created_at = created_at - interval '1 day' WHERE id = $1`, record.id)

      const listed = yield* request("GET", `${clinicPath}?patient_id=${patientId}`, { token: nurse.token })
      expect(errorsOf(listed)).toEqual({
        status: 200,
        body: {
          form_c_submissions: [
            { id: secondId, patient_id: patientId, user_id: nurse.id, created_at: timestamp },
            { id: record.id, patient_id: patientId, user_id: nurse.id, created_at: timestamp }
          ]
        }
      })

      const shown = yield* request("GET", `${clinicPath}/${record.id}?patient_id=${patientId}`, { token: nurse.token })
      expect(errorsOf(shown)).toEqual({
        status: 200,
        body: {
          form_c_submission: {
            id: record.id, patient_id: patientId, user_id: nurse.id, user_name: "Nia Nurse", form_data: formData,
            created_at: timestamp, updated_at: timestamp
          }
        }
      })
    }))

  it.effect("refuses missing, empty and malformed form_data with messages naming the section; nothing is stored", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const patientId = yield* insertPatient("Val", "Idate", "V1")
      const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>]> = [
        [{}, ["Form data can't be blank"]],
        [{ form_c_submission: {} }, ["Form data can't be blank"]],
        [{ form_c_submission: { form_data: null } }, ["Form data can't be blank"]],
        [{ form_c_submission: { form_data: {} } }, ["Form data can't be blank"]],
        [{ form_c_submission: { form_data: [] } }, ["Form data must be an object keyed by section name"]],
        [{ form_c_submission: { form_data: "culture" } }, ["Form data must be an object keyed by section name"]],
        [{ form_c_submission: { form_data: { hobbies: {} } } }, ["Form data section \"hobbies\" is not a Form C section"]],
        [{ form_c_submission: { form_data: { culture: "yes", safety: [], fall_risk: null, isolation: 3 } } }, [
          "Form data section culture must be an object",
          "Form data section safety must be an object",
          "Form data section fall_risk must be an object",
          "Form data section isolation must be an object"
        ]],
        [{ form_c_submission: { form_data: { medications: { list: [{ start_date: "03/02/2026" }], end_date: 20260302 }, ed_visits: { last_visit_date: "2026-02-30" } } } }, [
          "Form data medications.list[0].start_date must be a date in YYYY-MM-DD format",
          "Form data medications.end_date must be a date in YYYY-MM-DD format",
          "Form data ed_visits.last_visit_date must be a date in YYYY-MM-DD format"
        ]],
        [{ form_c_submission: { form_data: { background_information: { member_id: "OTHER" } } } }, [
          "Form data background_information.member_id does not match the patient's member id"
        ]],
        [{ form_c_submission: { form_data: { background_information: { member_id: 1 } } } }, [
          "Form data background_information.member_id must be text"
        ]],
        [{ form_c_submission: { form_data: { priorities: { notes: "x".repeat(maxFormDataBytes) } } } }, [
          `Form data is too large (maximum is ${maxFormDataBytes} bytes)`
        ]]
      ]
      for (const [body, errors] of cases) {
        const refused = yield* submit(token, patientId, body)
        expect({ sent: body, ...errorsOf(refused) }).toEqual({ sent: body, status: 422, body: { errors } })
      }
      // A body past the endpoint's limit is refused before it is parsed.
      const huge = yield* submit(token, patientId, { form_c_submission: { form_data: { priorities: { notes: "x".repeat(2 * maxFormDataBytes) } } } })
      expect(errorsOf(huge)).toEqual({ status: 413, body: { errors: ["Request body is too large"] } })
      // The member id matches with surrounding spaces; blank or null means "not given".
      for (const memberId of [" V1 ", "", null]) {
        const accepted = yield* submit(token, patientId, { form_c_submission: { form_data: { background_information: { member_id: memberId } } } })
        expect(accepted.status).toBe(201)
      }
      const [count] = yield* query<{ count: number }>(`SELECT count(*)::int AS count FROM form_c_submissions WHERE patient_id = $1`, patientId)
      expect(count!.count).toBe(3)

      // A patient without a member id accepts no member id in the document.
      const noMember = yield* insertPatient("No", "Member")
      const mismatch = yield* submit(token, noMember, { form_c_submission: { form_data: { background_information: { member_id: "V1" } } } })
      expect(errorsOf(mismatch)).toEqual({ status: 422, body: { errors: ["Form data background_information.member_id does not match the patient's member id"] } })
    }))

  it.effect("404s: unknown patient, unknown submission, another patient's submission; 422 without patient_id", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const mine = yield* insertPatient("Mine", "One")
      const other = yield* insertPatient("Other", "Two")
      const created = yield* (yield* clientAs(token)).ecmFormC.create({ urlParams: { patient_id: other }, payload: { form_c_submission: { form_data: { culture: { a: 1 } } } } })
      const otherId = created.form_c_submission.id
      const patientMissing = { status: 404, body: { errors: ["Patient not found"] } }
      const submissionMissing = { status: 404, body: { errors: ["Form C submission not found"] } }
      expect(errorsOf(yield* submit(token, 999999, { form_c_submission: { form_data: { culture: {} } } }))).toEqual(patientMissing)
      expect(errorsOf(yield* request("GET", `${clinicPath}?patient_id=999999`, { token }))).toEqual(patientMissing)
      expect(errorsOf(yield* request("GET", `${clinicPath}/${otherId}?patient_id=999999`, { token }))).toEqual(patientMissing)
      expect(errorsOf(yield* request("GET", `${clinicPath}/${otherId}?patient_id=${mine}`, { token }))).toEqual(submissionMissing)
      expect(errorsOf(yield* request("GET", `${clinicPath}/999999?patient_id=${other}`, { token }))).toEqual(submissionMissing)
      expect(errorsOf(yield* request("GET", `${adminPath}/999999`, { token }))).toEqual(submissionMissing)
      expect((yield* request("GET", `${clinicPath}?patient_id=${mine}`, { token })).body).toEqual({ form_c_submissions: [] })

      for (const url of [clinicPath, `${clinicPath}?patient_id=abc`, `${clinicPath}/1`]) {
        const refused = yield* request("GET", url, { token })
        expect(refused.status).toBe(422)
        expect((refused.body as { errors: Array<string> }).errors.some((e) => e.startsWith("Patient"))).toBe(true)
      }
    }))

  it.effect("clinic endpoints need staff (401, 403 for a parent); admin endpoints need an admin", () =>
    Effect.gen(function*() {
      const parent = yield* insertUser({ email: "parent@formc.test", role: "parent" })
      const staff = yield* insertUser({ email: "staff@formc.test", role: "support" })
      const patientId = yield* insertPatient("Acc", "Ess")
      expect((yield* request("GET", `${clinicPath}?patient_id=${patientId}`)).status).toBe(401)
      expect(errorsOf(yield* request("GET", `${clinicPath}?patient_id=${patientId}`, { token: parent.token })))
        .toEqual({ status: 403, body: { errors: ["Staff access required"] } })
      expect(errorsOf(yield* submit(parent.token, patientId, { form_c_submission: { form_data: { culture: {} } } })))
        .toEqual({ status: 403, body: { errors: ["Staff access required"] } })
      expect(errorsOf(yield* request("GET", adminPath, { token: staff.token })))
        .toEqual({ status: 403, body: { errors: ["Admin access required"] } })
      expect((yield* request("GET", `${adminPath}/1`)).status).toBe(401)
    }))

  it.effect("admin list: newest first with names and pagination, patient filter; admin detail with form_data", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      // The file's tests share one database: this one counts every submission.
      yield* query(`DELETE FROM form_c_submissions`)
      const author = yield* insertUser({ email: "author@formc.test", role: "supervisor", first_name: "Ada", last_name: "Author" })
      const first = yield* insertPatient("Fay", "First")
      const second = yield* insertPatient("Sam", "Second")
      const ids: Array<number> = []
      for (const [patientId, section] of [[first, "culture"], [second, "safety"], [first, "isolation"]] as const) {
        const created = yield* (yield* clientAs(author.token)).ecmFormC.create({
          urlParams: { patient_id: patientId }, payload: { form_c_submission: { form_data: { [section]: { n: ids.length } } } }
        })
        ids.push(created.form_c_submission.id)
      }
      // Distinct times, oldest first.
      yield* query(`UPDATE form_c_submissions SET created_at = now() - make_interval(mins => 10 - id)`)

      const listed = yield* request("GET", adminPath, { token })
      expect(errorsOf(listed)).toEqual({
        status: 200,
        body: {
          form_c_submissions: [
            { id: ids[2], patient_id: first, patient_name: "Fay First", user_id: author.id, user_name: "Ada Author", created_at: timestamp },
            { id: ids[1], patient_id: second, patient_name: "Sam Second", user_id: author.id, user_name: "Ada Author", created_at: timestamp },
            { id: ids[0], patient_id: first, patient_name: "Fay First", user_id: author.id, user_name: "Ada Author", created_at: timestamp }
          ],
          pagination: { current_page: 1, per_page: 25, total_count: 3, total_pages: 1 }
        }
      })
      const filtered = yield* request("GET", `${adminPath}?patient_id=${first}&per_page=1&page=2`, { token })
      expect(filtered.body).toEqual({
        form_c_submissions: [expect.objectContaining({ id: ids[0], patient_id: first })],
        pagination: { current_page: 2, per_page: 1, total_count: 2, total_pages: 2 }
      })
      const none = yield* request("GET", `${adminPath}?patient_id=999999`, { token })
      expect(none.body).toEqual({ form_c_submissions: [], pagination: { current_page: 1, per_page: 25, total_count: 0, total_pages: 0 } })

      const shown = yield* request("GET", `${adminPath}/${ids[1]}`, { token })
      expect(errorsOf(shown)).toEqual({
        status: 200,
        body: {
          form_c_submission: {
            id: ids[1], patient_id: second, patient_name: "Sam Second", user_id: author.id, user_name: "Ada Author",
            form_data: { safety: { n: 1 } }, created_at: timestamp, updated_at: timestamp
          }
        }
      })
      const bad = yield* request("GET", `${adminPath}?patient_id=0&page=x`, { token })
      expect(bad.status).toBe(422)
    }))

  it.effect("the latest submission date per patient (the PRTF report's assessment column)", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const a = yield* insertPatient("Lat", "Est")
      const b = yield* insertPatient("Never", "Assessed")
      for (const n of [1, 2]) yield* submit(token, a, { form_c_submission: { form_data: { culture: { n } } } })
      yield* query(`UPDATE form_c_submissions SET created_at = ('2026-01-0' || (id % 9 + 1) || 'T10:00:00Z')::timestamptz WHERE patient_id = $1`, a)
      const submissions = yield* FormCSubmissions
      const latest = yield* submissions.latestSubmittedAt([a, b])
      const [newest] = yield* query<{ created_at: Date }>(`SELECT max(created_at) AS created_at FROM form_c_submissions WHERE patient_id = $1`, a)
      expect([...latest]).toEqual([[a, newest!.created_at]])
    }))
})
