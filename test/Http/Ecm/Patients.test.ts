/** Admin ECM patients: the list (search, status, provider, pages) and the detail. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertPatient, insertProviderProfile } from "../../support/fixtures.js"
import { dataUri, importMif, membersCsv, query } from "./support.js"
import { insertUser } from "./users.js"

interface Listed {
  readonly patients: ReadonlyArray<Record<string, unknown> & { id: number; name: string }>
  readonly pagination: Record<string, number>
}
const list = (token: string, params: Record<string, string> = {}) =>
  Effect.map(request("GET", `/v1/admin/clinic/ecm/patients?${new URLSearchParams(params)}`, { token }), (r) => {
    expect(r.status).toBe(200)
    return r.body as Listed
  })
const names = (listed: Listed) => listed.patients.map((p) => p.name)

layer(TestApp())("admin ECM patients", (it) => {
  it.effect("requires a token (401) and the admin role (403)", () =>
    Effect.gen(function*() {
      const staff = yield* insertUser({ email: "staff@patients.test", role: "supervisor" })
      for (const url of ["/v1/admin/clinic/ecm/patients", "/v1/admin/clinic/ecm/patients/1"]) {
        expect((yield* request("GET", url)).status).toBe(401)
        const refused = yield* request("GET", url, { token: staff.token })
        expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Admin access required"] } })
      }
    }))

  it.effect("lists members with their latest eligibility record and case load, by last then first name", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* importMif(token, { file: dataUri("csv", membersCsv([
        { member_id: "L1", first_name: "Zoe", last_name: "Alpha", dob: "01-01-1980" },
        { member_id: "L2", first_name: "Abe", last_name: "Beta", dob: "02-02-1981", npi: "1111111111", provider: "First Care" }
      ])) })
      // A later file changes L2's provider: the list shows the latest record.
      yield* importMif(token, { file: dataUri("csv", membersCsv([
        { member_id: "L2", first_name: "Abe", last_name: "Beta", dob: "02-02-1981", npi: "2222222222", provider: "Second Care" }
      ])) })
      // A clinic patient without eligibility records is not an ECM patient.
      yield* insertPatient({ first_name: "Clinic", last_name: "Only", date_of_birth: null })
      const olcm = yield* insertUser({ email: "olcm@patients.test", role: "provider", first_name: "Olive", last_name: "Lead" })
      // Case loads name a provider profile (foreign key since the providers migration): provider 77.
      yield* insertProviderProfile(olcm.id, { id: 77 })
      yield* query(`UPDATE case_loads SET olcm_user_id = $1, provider_id = 77 WHERE patient_id = (SELECT id FROM patients WHERE member_id = 'L1')`, olcm.id)

      const listed = yield* list(token)
      expect(listed.pagination).toEqual({ current_page: 1, per_page: 25, total_count: 2, total_pages: 1 })
      expect(names(listed)).toEqual(["Zoe Alpha", "Abe Beta"])
      expect(listed.patients[0]).toEqual({
        id: expect.any(Number),
        name: "Zoe Alpha",
        date_of_birth: "1980-01-01",
        ecm_eligibility_information: {
          id: expect.any(Number), member_id: "L1", cin: "CL1", ecm_service_auth_id: "AUTH1", ecm_provider_name: "Good Care",
          ecm_benefit_auth_eff_date: "2026-01-01", ecm_benefit_auth_end_date: "2026-12-31", acuity_level: "High",
          member_record_status: "new_member"
        },
        case_load: {
          provider_id: 77, provider_name: "Good Care", olcm_user_id: olcm.id, olcm_name: "Olive Lead", ilcm_user_id: null, ilcm_name: null
        }
      })
      expect(listed.patients[1]).toMatchObject({
        ecm_eligibility_information: { ecm_provider_name: "Second Care", member_record_status: "existing_member" },
        case_load: { provider_name: "Second Care", provider_id: null }
      })

      expect(names(yield* list(token, { search: "alp" }))).toEqual(["Zoe Alpha"])
      expect(names(yield* list(token, { search: "abe BETA" }))).toEqual(["Abe Beta"])
      expect(names(yield* list(token, { search: "L2" }))).toEqual(["Abe Beta"])
      expect(names(yield* list(token, { search: "%" }))).toEqual([])
      // The ECM search covers names and member id, not the phone the shared search index also holds.
      yield* query(`UPDATE patients SET phone = '+14155550123' WHERE member_id = 'L1'`)
      expect(names(yield* list(token, { search: "4155550123" }))).toEqual([])
      expect(names(yield* list(token, { search: "zoe alpha L1" }))).toEqual(["Zoe Alpha"])
      expect(names(yield* list(token, { status: "existing_member" }))).toEqual(["Abe Beta"])
      expect(names(yield* list(token, { status: "new_member" }))).toEqual(["Zoe Alpha"])
      expect(names(yield* list(token, { provider_id: "77" }))).toEqual(["Zoe Alpha"])
      expect(names(yield* list(token, { provider_id: "78" }))).toEqual([])
      const paged = yield* list(token, { per_page: "1", page: "2" })
      expect({ names: names(paged), pagination: paged.pagination }).toEqual({
        names: ["Abe Beta"], pagination: { current_page: 2, per_page: 1, total_count: 2, total_pages: 2 }
      })
      const bad = yield* request("GET", "/v1/admin/clinic/ecm/patients?provider_id=abc&page=0", { token })
      expect(bad.status).toBe(422)
      expect((bad.body as { errors: Array<string> }).errors).toEqual(["Page must be greater than 0", "Provider is invalid"])
    }))

  it.effect("shows one member: demographics, eligibility history newest first, case load, engagement status", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* importMif(token, { file: dataUri("csv", membersCsv([{ member_id: "S9", first_name: "Sia", last_name: "Show", dob: "09-09-1999", zip: "00909" }])) })
      yield* importMif(token, { file: dataUri("csv", membersCsv([{ member_id: "S9", first_name: "Sia", last_name: "Show", dob: "09-09-1999", city: "Fresno" }])) })
      const [row] = yield* query<{ id: number }>(`SELECT id FROM patients WHERE member_id = 'S9'`)
      const shown = yield* request("GET", `/v1/admin/clinic/ecm/patients/${row!.id}`, { token })
      expect(shown.status).toBe(200)
      const patient = (shown.body as { patient: Record<string, unknown> & { eligibility_informations: Array<Record<string, unknown>> } }).patient
      expect(patient).toMatchObject({
        id: row!.id, name: "Sia Show", first_name: "Sia", last_name: "Show", date_of_birth: "1999-09-09", gender: "F",
        phone: "+15105550100", email: null, address: "1 Main St", city: "Fresno", state: "CA", zip: "94612",
        language: "en", active: true, member_id: "S9", cin: "CS9",
        case_load: { provider_id: null, provider_name: "Good Care", olcm_user_id: null, olcm_name: null, ilcm_user_id: null, ilcm_name: null },
        engagement_status: { status: "new_member", source: "mif", reason: "Created by MIF import", actor_id: expect.any(Number) }
      })
      // The typed client a frontend derives decodes the same member.
      const typed = yield* (yield* clientAs(token)).ecmPatients.show({ path: { id: row!.id } })
      expect(typed.patient).toMatchObject({ id: row!.id, name: "Sia Show", member_id: "S9", cin: "CS9", city: "Fresno" })
      expect(typed.patient.eligibility_informations.map((e) => e.member_record_status)).toEqual(["existing_member", "new_member"])
      expect(Object.keys(patient.eligibility_informations[0]!).sort()).toEqual([
        "acuity_level", "cin", "created_at", "ecm_benefit_auth_eff_date", "ecm_benefit_auth_end_date", "ecm_npi",
        "ecm_provider_name", "ecm_service_auth_id", "id", "member_id", "member_record_status", "mif_file_id"
      ])
      expect(patient.status_histories).toHaveLength(1)

      const clinicOnly = yield* insertPatient({ first_name: "No", last_name: "Ecm", date_of_birth: null })
      for (const id of [clinicOnly, 999999]) {
        const missing = yield* request("GET", `/v1/admin/clinic/ecm/patients/${id}`, { token })
        expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: ["Patient not found"] } })
      }
    }))
})
