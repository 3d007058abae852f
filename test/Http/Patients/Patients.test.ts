import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertManyPatients } from "../../support/fixtures.js"
import { importMif, membersCsv, dataUri } from "../Ecm/support.js"
import { auditActions } from "../Providers/helpers.js"
import {
  adminToken, createPatient, iso, namesOf, newPatient, patientNotFound, patientOf, provider, signedIn, staffRequired
} from "./helpers.js"

const patientKeys = [
  "active", "address", "city", "created_at", "date_of_birth", "email", "first_name", "gender", "id", "language", "last_name",
  "member_id", "phone", "provider", "provider_id", "state", "updated_at", "user_id", "zip"
]

layer(TestApp())("clinic patients", (it) => {
  it.effect("staff create a patient: every field in the representation, phone in E.164, provider named", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const staff = yield* signedIn("support")
      const parent = yield* signedIn("parent")
      const providerId = yield* provider(admin, "Rosa", "Rivera")
      const created = yield* createPatient(staff.token, {
        first_name: " Mia ", last_name: "Lopez", date_of_birth: "2015-06-01", gender: "female", phone: "(415) 555-0134",
        email: "guardian@example.org", address: "1 Main St", city: "Oakland", state: "CA", zip: "94607", language: "es",
        member_id: "91234567A", user_id: parent.id, provider_id: providerId
      })
      expect(created.status).toBe(201)
      const patient = patientOf(created.body)
      expect(Object.keys(patient).sort()).toEqual(patientKeys)
      expect(patient).toEqual({
        id: expect.any(Number), first_name: "Mia", last_name: "Lopez", date_of_birth: "2015-06-01", gender: "female",
        phone: "+14155550134", email: "guardian@example.org", address: "1 Main St", city: "Oakland", state: "CA", zip: "94607",
        language: "es", member_id: "91234567A", active: true, user_id: parent.id, provider_id: providerId,
        provider: { id: providerId, first_name: "Rosa", last_name: "Rivera" },
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      expect(yield* auditActions("patient", patient.id as number)).toEqual(["patient.create"])
      // Only the three required fields: the rest null, language en, no provider.
      const minimal = yield* createPatient(staff.token, { first_name: "Ana", last_name: "Diaz", date_of_birth: "2012-01-31" })
      expect(patientOf(minimal.body)).toMatchObject({
        gender: null, phone: null, email: null, member_id: null, language: "en", user_id: null, provider_id: null, provider: null, active: true
      })
    }))

  it.effect("create refuses bad input with 422 naming every field, and a parent with 403", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const staff = yield* signedIn("provider")
      const notParent = yield* signedIn("billing")
      const blank = yield* request("POST", "/v1/clinic/patients", { token: staff.token, body: { patient: {} } })
      expect(blank.status).toBe(422)
      expect(blank.body).toEqual({ errors: { first_name: ["can't be blank"], last_name: ["can't be blank"], date_of_birth: ["can't be blank"] } })
      const unknown = yield* createPatient(staff.token, { first_name: "A", last_name: "B", user_id: 999999, provider_id: 999999, phone: "12" })
      expect(unknown.status).toBe(422)
      expect(unknown.body).toEqual({ errors: { user_id: ["must exist"], provider_id: ["must exist"], phone: ["is invalid"] } })
      const wrongRole = yield* createPatient(staff.token, { first_name: "A", last_name: "B", user_id: notParent.id })
      expect(wrongRole.body).toEqual({ errors: { user_id: ["must be a parent account"] } })
      const badDate = yield* createPatient(staff.token, { first_name: "A", last_name: "B", date_of_birth: "2015-02-30", language: "english" })
      expect(badDate.body).toEqual({ errors: { date_of_birth: ["is invalid"], language: ["is invalid"] } })
      yield* newPatient(admin, { member_id: "DUP1" })
      const taken = yield* createPatient(staff.token, { first_name: "A", last_name: "B", member_id: "DUP1" })
      expect(taken.status).toBe(422)
      expect(taken.body).toEqual({ errors: { member_id: ["has already been taken"] } })
      const parent = yield* signedIn("parent")
      const refused = yield* createPatient(parent.token, { first_name: "A", last_name: "B" })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual(staffRequired)
    }))

  it.effect("update changes only the fields given; parents get 404 for others' patients and 403 for their own", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const staff = yield* signedIn("support")
      const parent = yield* signedIn("parent")
      const providerId = yield* provider(admin, "Ivo", "Kern")
      const id = yield* newPatient(staff.token, { first_name: "Lia", last_name: "Moss", phone: "4155550100", user_id: parent.id })
      const updated = yield* request("PUT", `/v1/clinic/patients/${id}`, {
        token: staff.token, body: { patient: { phone: "+1 415-555-0199", provider_id: providerId, gender: "", active: false } }
      })
      expect(updated.status).toBe(200)
      expect(patientOf(updated.body)).toMatchObject({
        first_name: "Lia", last_name: "Moss", phone: "+14155550199", gender: null, active: false, user_id: parent.id,
        provider: { id: providerId, first_name: "Ivo", last_name: "Kern" }
      })
      const cleared = yield* request("PUT", `/v1/clinic/patients/${id}`, { token: staff.token, body: { patient: { provider_id: null, user_id: null } } })
      expect(patientOf(cleared.body)).toMatchObject({ provider_id: null, provider: null, user_id: null })
      expect(yield* auditActions("patient", id)).toEqual(["patient.create", "patient.update", "patient.update"])

      const own = yield* newPatient(staff.token, { user_id: parent.id })
      const ownRefused = yield* request("PUT", `/v1/clinic/patients/${own}`, { token: parent.token, body: { patient: { first_name: "X" } } })
      expect(ownRefused.status).toBe(403)
      expect(ownRefused.body).toEqual(staffRequired)
      const foreign = yield* request("PUT", `/v1/clinic/patients/${id}`, { token: parent.token, body: { patient: { first_name: "X" } } })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual(patientNotFound)
      const missing = yield* request("PUT", "/v1/clinic/patients/999999", { token: staff.token, body: { patient: {} } })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual(patientNotFound)
      const invalidField = yield* request("PUT", `/v1/clinic/patients/${id}`, { token: staff.token, body: { patient: { first_name: " " } } })
      expect(invalidField.body).toEqual({ errors: { first_name: ["can't be blank"] } })
    }))

  it.effect("show: staff see any patient, a parent only theirs; unknown and others' are 404 Patient not found", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("billing")
      const parent = yield* signedIn("parent")
      const other = yield* signedIn("parent")
      const own = yield* newPatient(staff.token, { user_id: parent.id })
      const theirs = yield* newPatient(staff.token, { user_id: other.id })
      expect((yield* request("GET", `/v1/clinic/patients/${theirs}`, { token: staff.token })).status).toBe(200)
      const mine = yield* request("GET", `/v1/clinic/patients/${own}`, { token: parent.token })
      expect(mine.status).toBe(200)
      expect(patientOf(mine.body).id).toBe(own)
      for (const id of [theirs, 999999]) {
        const refused = yield* request("GET", `/v1/clinic/patients/${id}`, { token: parent.token })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual(patientNotFound)
      }
      const malformed = yield* request("GET", "/v1/clinic/patients/01", { token: staff.token })
      expect(malformed.status).toBe(422)
      expect(malformed.body).toEqual({ errors: { id: ["is invalid"] } })
      const anonymous = yield* request("GET", `/v1/clinic/patients/${own}`)
      expect(anonymous.status).toBe(401)
    }))
})

layer(TestApp())("clinic patient list", (it) => {
  it.effect("pagination defaults, sort fields and directions, search over names, member id and phone digits", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("support")
      yield* newPatient(staff.token, { first_name: "Zoe", last_name: "Adams", date_of_birth: "2010-01-01", member_id: "MEM-777", phone: "(415) 555-0134" })
      yield* newPatient(staff.token, { first_name: "Ann", last_name: "Young", date_of_birth: "2012-05-05" })
      yield* newPatient(staff.token, { first_name: "bob", last_name: "baker", date_of_birth: "2011-03-03" })
      for (let i = 0; i < 24; i++) yield* newPatient(staff.token, { first_name: `Filler${String(i).padStart(2, "0")}`, last_name: "Zz" })

      const patients = (yield* clientAs(staff.token)).clinicPatients
      const names = (list: { readonly patients: ReadonlyArray<{ readonly first_name: string; readonly last_name: string }> }) =>
        list.patients.map((p) => `${p.first_name} ${p.last_name}`)
      const [body, first] = yield* patients.list({ urlParams: {}, withResponse: true })
      expect(first.status).toBe(200)
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 27, per_page: 25 })
      expect(body.patients).toHaveLength(25)
      // Default order: last name, then first name, any case.
      expect(names(body).slice(0, 3)).toEqual(["Zoe Adams", "bob baker", "Ann Young"])
      const second = yield* patients.list({ urlParams: { page: 2, page_size: 25 } })
      expect(second.patients).toHaveLength(2)
      const clamped = yield* request("GET", "/v1/clinic/patients?page_size=1000", { token: staff.token })
      expect(clamped.body).toMatchObject({ pagination: { per_page: 100 } })

      const byBirth = yield* request("GET", "/v1/clinic/patients?sort_by=date_of_birth&sort_dir=desc&page_size=3", { token: staff.token })
      // Equal dates: the id breaks the tie, in the same direction.
      expect(namesOf(byBirth.body)).toEqual(["Filler23 Zz", "Filler22 Zz", "Filler21 Zz"])
      const oldest = yield* request("GET", "/v1/clinic/patients?sort_by=date_of_birth&sort_dir=ASC&page_size=3", { token: staff.token })
      expect(namesOf(oldest.body)).toEqual(["Zoe Adams", "bob baker", "Ann Young"])
      const byFirst = yield* request("GET", "/v1/clinic/patients?sort_by=first_name&page_size=2", { token: staff.token })
      expect(namesOf(byFirst.body)).toEqual(["Ann Young", "bob baker"])
      const byId = yield* request("GET", "/v1/clinic/patients?sort_by=id&sort_dir=DESC&page_size=1", { token: staff.token })
      expect(namesOf(byId.body)).toEqual(["Filler23 Zz"])
      const byCreated = yield* request("GET", "/v1/clinic/patients?sort_by=created_at&page_size=1", { token: staff.token })
      expect(namesOf(byCreated.body)).toEqual(["Zoe Adams"])
      const byLast = yield* request("GET", "/v1/clinic/patients?sort_by=last_name&sort_dir=DESC&page_size=1&search=a", { token: staff.token })
      expect(namesOf(byLast.body)).toEqual(["Ann Young"])

      const badSort = yield* request("GET", "/v1/clinic/patients?sort_by=email", { token: staff.token })
      expect(badSort.status).toBe(422)
      expect(badSort.body).toEqual({ errors: { sort_by: ["is not included in the list"] } })
      const badDir = yield* request("GET", "/v1/clinic/patients?sort_dir=up", { token: staff.token })
      expect(badDir.status).toBe(422)

      for (const [search, expected] of [
        ["ADAMS", ["Zoe Adams"]], ["zoe ad", ["Zoe Adams"]], ["mem-777", ["Zoe Adams"]], ["555-0134", ["Zoe Adams"]],
        ["(415) 555", ["Zoe Adams"]], ["4155550134", ["Zoe Adams"]], ["baker", ["bob baker"]], ["%", []], ["nobody", []]
      ] as const) {
        const found = yield* patients.list({ urlParams: { search } })
        expect(names(found), search).toEqual(expected)
        expect(found.pagination.total_count).toBe(expected.length)
      }
    }))

  it.effect("filter_patients: the same list from a body, narrowed by provider name, provider id and status", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const staff = yield* signedIn("support")
      const rivera = yield* provider(admin, "Rosa", "Rivera")
      const kern = yield* provider(admin, "Ivo", "Kern")
      yield* newPatient(staff.token, { first_name: "Ana", last_name: "Rfilter", provider_id: rivera })
      yield* newPatient(staff.token, { first_name: "Ben", last_name: "Rfilter", provider_id: kern, active: false })
      yield* newPatient(staff.token, { first_name: "Cy", last_name: "Rfilter" })
      const filter = (body: Record<string, unknown>) => request("POST", "/v1/clinic/patients/filter_patients", { token: staff.token, body })
      expect(namesOf((yield* filter({ search: "rfilter" })).body)).toEqual(["Ana Rfilter", "Ben Rfilter", "Cy Rfilter"])
      const [byName, byNameResponse] = yield* (yield* clientAs(staff.token)).clinicPatients.filter({
        payload: { search: "rfilter", filters: { provider_name: "rosa riv" } }, withResponse: true
      })
      expect(byNameResponse.status).toBe(200)
      expect(byName.patients.map((p) => `${p.first_name} ${p.last_name}`)).toEqual(["Ana Rfilter"])
      expect(byName.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 1, per_page: 25 })
      expect(namesOf((yield* filter({ filters: { provider_name: "Kern" } })).body)).toEqual(["Ben Rfilter"])
      expect(namesOf((yield* filter({ filters: { provider_id: rivera } })).body)).toEqual(["Ana Rfilter"])
      expect(namesOf((yield* filter({ search: "rfilter", filters: { status: "inactive" } })).body)).toEqual(["Ben Rfilter"])
      expect(namesOf((yield* filter({ search: "rfilter", sort_by: "first_name", sort_dir: "desc", page: 1, page_size: 2 })).body))
        .toEqual(["Cy Rfilter", "Ben Rfilter"])
      const bad = yield* filter({ sort_by: "password", page: 0 })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({ errors: { sort_by: ["is not included in the list"], page: ["must be greater than 0"] } })

      const options = yield* request("GET", "/v1/clinic/patients/filters", { token: staff.token })
      expect(options.status).toBe(200)
      expect(options.body).toEqual({
        providers: expect.arrayContaining([{ id: kern, name: "Ivo Kern" }, { id: rivera, name: "Rosa Rivera" }]),
        sort_fields: ["id", "first_name", "last_name", "date_of_birth", "created_at"],
        sort_directions: ["ASC", "DESC"],
        statuses: ["active", "inactive"]
      })
    }))

  it.effect("a parent's list holds only their own patients, whatever the search or filter", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("support")
      const parent = yield* signedIn("parent")
      const other = yield* signedIn("parent")
      yield* newPatient(staff.token, { first_name: "Own", last_name: "Child", user_id: parent.id })
      yield* newPatient(staff.token, { first_name: "Other", last_name: "Child", user_id: other.id })
      yield* newPatient(staff.token, { first_name: "Nobodys", last_name: "Child" })
      const listed = yield* request("GET", "/v1/clinic/patients?search=child", { token: parent.token })
      expect(namesOf(listed.body)).toEqual(["Own Child"])
      const filtered = yield* request("POST", "/v1/clinic/patients/filter_patients", { token: parent.token, body: { search: "Other" } })
      expect(namesOf(filtered.body)).toEqual([])
      expect((yield* request("GET", "/v1/clinic/patients", { token: other.token })).body).toMatchObject({ pagination: { total_count: 1 } })
    }))

  it.effect("a search matching thousands counts and pages them all (past the few-matches plan), sorted the same", () =>
    Effect.gen(function*() {
      const staff = yield* signedIn("support")
      yield* insertManyPatients(5003, "Manyrows")
      const last = yield* request("GET", "/v1/clinic/patients?search=manyrows&sort_by=first_name&sort_dir=DESC&page=2&page_size=2", { token: staff.token })
      expect(last.body).toMatchObject({ pagination: { total_count: 5003, total_pages: 2502, current_page: 2, per_page: 2 } })
      expect(namesOf(last.body)).toEqual(["Bulk05001 Manyrows", "Bulk05000 Manyrows"])
      const few = yield* request("GET", "/v1/clinic/patients?search=bulk050&sort_by=date_of_birth&page=1", { token: staff.token })
      expect(namesOf(few.body)).toEqual(["Bulk05000 Manyrows", "Bulk05001 Manyrows", "Bulk05002 Manyrows", "Bulk05003 Manyrows"])
      const beyond = yield* request("GET", "/v1/clinic/patients?search=bulk050&page=3", { token: staff.token })
      expect(beyond.body).toEqual({ patients: [], pagination: { current_page: 3, total_pages: 1, total_count: 4, per_page: 25 } })
    }))

  it.effect("members imported from a MIF file appear in the clinic list", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const imported = yield* importMif(admin, {
        file: dataUri("csv", membersCsv([{ member_id: "MIF900", first_name: "Imported", last_name: "Member", dob: "03-04-2011", phone: "(510) 555-0177" }]))
      })
      expect(imported.status).toBe(200)
      const listed = yield* request("GET", "/v1/clinic/patients?search=MIF900", { token: admin })
      expect(listed.body).toMatchObject({
        patients: [{ first_name: "Imported", last_name: "Member", member_id: "MIF900", date_of_birth: "2011-03-04", phone: "+15105550177" }],
        pagination: { total_count: 1 }
      })
      expect(namesOf((yield* request("GET", "/v1/clinic/patients?search=510-555-0177", { token: admin })).body)).toEqual(["Imported Member"])
    }))
})
