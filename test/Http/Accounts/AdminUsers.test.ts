import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { UserId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertUser as insertFixtureUser, type NewUser, password } from "../../support/fixtures.js"
import { insertPatient } from "../Scheduling/helpers.js"

interface NewTestUser extends NewUser {
  readonly email: string
  readonly created_at?: string
}

/** A confirmed user who can sign in with `password` (created at `created_at` when given); the id. */
const insertUser = (user: NewTestUser) =>
  Effect.gen(function*() {
    const { created_at, ...fields } = user
    const id = yield* insertFixtureUser({ last_name: "User", ...fields })
    if (created_at !== undefined) {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE users SET created_at = ${new Date(created_at)} WHERE id = ${id}`.pipe(Effect.orDie)
    }
    return id
  })

interface Listed {
  readonly users: ReadonlyArray<Record<string, unknown> & { id: number; email: string; status: string }>
  readonly pagination: { current_page: number; total_pages: number; total_count: number; per_page: number }
}
const listed = (body: unknown) => body as Listed
const emails = (body: unknown) => listed(body).users.map((u) => u.email)
const userOf = (body: unknown) => (body as { user: Record<string, unknown> & { id: number; status: string } }).user

const q = (params: Record<string, string>) => new URLSearchParams(params).toString()

const adminUserKeys = [
  "active", "clinical", "confirmed", "created_at", "date_of_birth", "email", "first_name", "id", "language",
  "last_login", "last_name", "patient", "phone", "role", "status", "updated_at"
]

const auditActions = (targetId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ action: string }>`SELECT action FROM audit_events
      WHERE target_type = 'user' AND target_id = ${targetId} ORDER BY id`
    return rows.map((r) => r.action)
  }).pipe(Effect.orDie)

layer(TestApp())("admin users", (it) => {
  it.effect("requires a token (401) and the admin role (403)", () =>
    Effect.gen(function*() {
      yield* insertUser({ email: "parent@access.test" })
      const parent = yield* signIn("parent@access.test", password)
      for (const [method, url] of [["GET", "/v1/admin/clinic/users"], ["GET", "/v1/admin/users/dashboard"], ["DELETE", "/v1/admin/clinic/users/1"]] as const) {
        const anonymous = yield* request(method, url)
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toEqual({ errors: "You are not authorized to perform this action." })
        const refused = yield* request(method, url, { token: parent })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ errors: "Admin access required" })
      }
    }))

  it.effect("lists live users in the admin view, newest first, 50 a page by default", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const older = yield* insertUser({ email: "older@shape.test", created_at: "2024-01-01T10:00:00.000Z" })
      const newer = yield* insertUser({ email: "newer@shape.test", created_at: "2024-02-01T10:00:00.000Z", role: "provider", clinical: true })
      yield* insertUser({ email: "gone@shape.test", status: "archived" })
      const response = yield* request("GET", `/v1/admin/clinic/users?${q({ search: "shape.test" })}`, { token })
      expect(response.status).toBe(200)
      const body = listed(response.body)
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 2, per_page: 50 })
      expect(body.users.map((u) => u.id)).toEqual([newer, older])
      expect(Object.keys(body.users[0]!).sort()).toEqual(adminUserKeys)
      expect(body.users[0]).toMatchObject({
        email: "newer@shape.test", role: "provider", clinical: true, active: true, status: "active",
        last_login: null, patient: null, created_at: "2024-02-01T10:00:00.000Z"
      })
    }))

  it.effect("rejects unknown sort columns and directions, including SQL in them", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      for (const sortBy of ["password_hash", "id;DROP TABLE users", "id DESC, (SELECT 1)"]) {
        const response = yield* request("GET", `/v1/admin/clinic/users?${q({ sort_by: sortBy })}`, { token })
        expect(response.status).toBe(422)
        expect(response.body).toEqual({ errors: { sort_by: ["is not included in the list"] } })
      }
      for (const sortDir of ["sideways", "ASC; DROP TABLE users --"]) {
        const response = yield* request("GET", `/v1/admin/clinic/users?${q({ sort_dir: sortDir })}`, { token })
        expect(response.status).toBe(422)
        expect(response.body).toEqual({ errors: { sort_dir: ["is not included in the list"] } })
      }
      const filtered = yield* request("POST", "/v1/admin/clinic/users/filter_users", { token, body: { sort_by: "id;DROP TABLE users" } })
      expect(filtered.status).toBe(422)
      expect(filtered.body).toEqual({ errors: { sort_by: ["is not included in the list"] } })
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql`SELECT count(*)::int AS n FROM users`)[0]?.n).toBeGreaterThan(0)
    }))

  it.effect("sorts by an allowed column in either direction", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* insertUser({ email: "b@sort.test", last_name: "beta" })
      yield* insertUser({ email: "a@sort.test", last_name: "Alpha" })
      yield* insertUser({ email: "c@sort.test", last_name: "Gamma" })
      const asc = yield* (yield* clientAs(token)).adminUsers.list({ urlParams: { search: "sort.test", sort_by: "last_name" } })
      expect(asc.users.map((u) => u.email)).toEqual(["a@sort.test", "b@sort.test", "c@sort.test"])
      // Raw: the direction in lower case, as a browser's query string has it (the typed client sends "DESC").
      const desc = yield* request("GET", `/v1/admin/clinic/users?${q({ search: "sort.test", sort_by: "email", sort_dir: "desc" })}`, { token })
      expect(emails(desc.body)).toEqual(["c@sort.test", "b@sort.test", "a@sort.test"])
    }))

  it.effect("search matches email, first name, last name and full name, case-insensitively, as literal text", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* insertUser({ email: "maria.lopez@search.test", first_name: "Maria", last_name: "Lopez" })
      yield* insertUser({ email: "jo@search.test", first_name: "Jo", last_name: "Under_score" })
      yield* insertUser({ email: "pct@search.test", first_name: "Hundred", last_name: "100%" })
      const client = yield* clientAs(token)
      const search = (text: string) =>
        Effect.map(client.adminUsers.list({ urlParams: { search: text, sort_by: "email" } }), (r) => r.users.map((u) => u.email))
      expect(yield* search("MARIA.LOPEZ@")).toEqual(["maria.lopez@search.test"])
      expect(yield* search("maria")).toEqual(["maria.lopez@search.test"])
      expect(yield* search("lopez")).toEqual(["maria.lopez@search.test"])
      expect(yield* search("maria lopez")).toEqual(["maria.lopez@search.test"])
      expect(yield* search("  Maria Lopez  ")).toEqual(["maria.lopez@search.test"])
      expect(yield* search("_")).toEqual(["jo@search.test"])
      expect(yield* search("%")).toEqual(["pct@search.test"])
      expect(yield* search("\\")).toEqual([])
      const injection = yield* request("GET", `/v1/admin/clinic/users?${q({ search: "%' OR 1=1 --" })}`, { token })
      expect(injection.status).toBe(200)
      expect(listed(injection.body)).toEqual({ users: [], pagination: { current_page: 1, total_pages: 0, total_count: 0, per_page: 50 } })
      const dropping = yield* request("GET", `/v1/admin/clinic/users?${q({ search: "x'; DROP TABLE users; --" })}`, { token })
      expect(listed(dropping.body).pagination.total_count).toBe(0)
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE email LIKE '%@search.test'`)[0]?.n).toBe(3)
    }))

  it.effect("paginates: page_size is clamped to 100, total_pages counts every match", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      for (let i = 1; i <= 5; i++) {
        yield* insertUser({ email: `p${i}@page.test`, created_at: `2024-03-0${i}T00:00:00.000Z` })
      }
      const client = yield* clientAs(token)
      const first = yield* client.adminUsers.list({ urlParams: { search: "page.test", page_size: 2 } })
      expect(first.pagination).toEqual({ current_page: 1, total_pages: 3, total_count: 5, per_page: 2 })
      expect(first.users.map((u) => u.email)).toEqual(["p5@page.test", "p4@page.test"])
      const last = yield* client.adminUsers.list({ urlParams: { search: "page.test", page_size: 2, page: 3 } })
      expect(last.users.map((u) => u.email)).toEqual(["p1@page.test"])
      const beyond = yield* client.adminUsers.list({ urlParams: { search: "page.test", page_size: 2, page: 9 } })
      expect(beyond).toEqual({ users: [], pagination: { current_page: 9, total_pages: 3, total_count: 5, per_page: 2 } })
      const clamped = yield* client.adminUsers.list({ urlParams: { page_size: 1000 } })
      expect(clamped.pagination.per_page).toBe(100)
      const bad = yield* request("GET", `/v1/admin/clinic/users?${q({ page: "0", page_size: "x" })}`, { token })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({ errors: { page: ["must be greater than 0"], page_size: ["is not a number"] } })
    }))

  it.effect("filter_users: active, roles, date range, patient name and paging in the body", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* insertUser({ email: "a@filter.test", role: "provider", created_at: "2023-05-01T00:00:00.000Z" })
      yield* insertUser({ email: "b@filter.test", role: "billing", status: "inactive", created_at: "2023-05-31T23:59:59.999Z" })
      yield* insertUser({ email: "c@filter.test", role: "parent", status: "suspended", created_at: "2023-06-01T00:00:00.000Z" })
      yield* insertUser({ email: "d@filter.test", role: "provider", status: "archived", created_at: "2023-05-10T00:00:00.000Z" })
      const client = yield* clientAs(token)
      type Filters = Parameters<typeof client.adminUsers.filter>[0]["payload"]["filters"]
      const filter = (filters?: Filters) =>
        Effect.map(
          client.adminUsers.filter({ payload: { search: "filter.test", sort_by: "email", ...(filters === undefined ? {} : { filters }) } }),
          (r) => r.users.map((u) => u.email)
        )
      expect(yield* filter()).toEqual(["a@filter.test", "b@filter.test", "c@filter.test"])
      expect(yield* filter({ active: true })).toEqual(["a@filter.test"])
      expect(yield* filter({ active: false })).toEqual(["b@filter.test", "c@filter.test"])
      expect(yield* filter({ active: null, roles: [] })).toEqual(["a@filter.test", "b@filter.test", "c@filter.test"])
      expect(yield* filter({ roles: ["provider", "billing"] })).toEqual(["a@filter.test", "b@filter.test"])
      expect(yield* filter({ date: { start_date: "2023-05-01", end_date: "2023-05-31" } })).toEqual(["a@filter.test", "b@filter.test"])
      expect(yield* filter({ date: { start_date: "2023-05-31", end_date: "2023-05-31" } })).toEqual(["b@filter.test"])
      expect(yield* filter({ date: { start_date: "2023-06-01" } })).toEqual(["c@filter.test"])
      expect(yield* filter({ date: { end_date: "2023-05-30" } })).toEqual(["a@filter.test"])
      expect(yield* filter({ patient_name: "Anyone" })).toEqual([])
      expect(yield* filter({ patient_name: "  " })).toEqual(["a@filter.test", "b@filter.test", "c@filter.test"])

      const paged = yield* client.adminUsers.filter({
        payload: { search: "filter.test", sort_by: "email", sort_dir: "DESC", page: 2, page_size: 2 }
      })
      expect(paged.users.map((u) => u.email)).toEqual(["a@filter.test"])
      expect(paged.pagination).toEqual({ current_page: 2, total_pages: 2, total_count: 3, per_page: 2 })

      const badRange = yield* request("POST", "/v1/admin/clinic/users/filter_users", {
        token,
        body: { filters: { date: { start_date: "2023-06-02", end_date: "2023-06-01" } } }
      })
      expect(badRange.status).toBe(422)
      expect(badRange.body).toEqual({ errors: { date: ["start_date must not be after end_date"] } })
      // Bad values are decoding failures. The exact body also carries noise from the optional
      // wrappers (`filters`, `roles` "is invalid"): pinned only on the fields that matter here.
      const badRole = yield* request("POST", "/v1/admin/clinic/users/filter_users", { token, body: { filters: { roles: ["wizard"] } } })
      expect(badRole.status).toBe(422)
      expect(badRole.body).toMatchObject({ errors: { "roles[0]": ["is not included in the list"] } })
      const badDate = yield* request("POST", "/v1/admin/clinic/users/filter_users", { token, body: { filters: { date: { start_date: "2023-02-30" } } } })
      expect(badDate.status).toBe(422)
      expect(badDate.body).toMatchObject({ errors: { "date.start_date": ["is invalid"] } })
    }))

  it.effect("the admin view carries the linked patient {id, active}: of several, the first by id", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const sql = yield* SqlClient.SqlClient
      const guardian = yield* insertUser({ email: "guardian@linked.test" })
      const alone = yield* insertUser({ email: "alone@linked.test" })
      const first = yield* insertPatient(guardian, { first: "Ada", last: "Linked" })
      yield* insertPatient(guardian, { first: "Bea", last: "Linked" })
      yield* sql`UPDATE patients SET active = false WHERE id = ${first}`
      const client = yield* clientAs(token)

      const shown = yield* client.adminUsers.show({ path: { id: guardian } })
      expect(shown.user.patient).toEqual({ id: first, active: false })
      const list = yield* client.adminUsers.list({ urlParams: { search: "linked.test" } })
      const patientOf = (id: number) => list.users.find((u) => u.id === id)?.patient
      expect(patientOf(guardian)).toEqual({ id: first, active: false })
      expect(patientOf(alone)).toBeNull()
      const updated = yield* client.adminUsers.update({ path: { id: guardian }, payload: { user: { first_name: "Gina" } } })
      expect(updated.user.patient).toEqual({ id: first, active: false })
      const archived = yield* client.adminUsers.archive({ path: { id: guardian } })
      expect(archived.user.patient).toEqual({ id: first, active: false })
    }))

  it.effect("filter_users: patient_name finds the accounts linked to patients of that name", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const guardian = yield* insertUser({ email: "guardian@pname.test", first_name: "Gale", last_name: "Guard" })
      const self = yield* insertUser({ email: "self@pname.test", first_name: "Zoe", last_name: "Quill" })
      yield* insertUser({ email: "none@pname.test", first_name: "Noor", last_name: "Quill" })
      yield* insertPatient(guardian, { first: "Milo", last: "Quill" })
      yield* insertPatient(self, { first: "Zoe", last: "Quill" })
      yield* insertPatient(null, { first: "Unlinked", last: "Quill" })
      const client = yield* clientAs(token)
      const filter = (patientName: string) =>
        Effect.map(
          client.adminUsers.filter({ payload: { search: "pname.test", sort_by: "email", filters: { patient_name: patientName } } }),
          (r) => ({ emails: r.users.map((u) => u.email), total: r.pagination.total_count })
        )
      expect(yield* filter("quill")).toEqual({ emails: ["guardian@pname.test", "self@pname.test"], total: 2 })
      expect(yield* filter("Milo Q")).toEqual({ emails: ["guardian@pname.test"], total: 1 })
      expect(yield* filter("Gale")).toEqual({ emails: [], total: 0 })
      expect(yield* filter("100%")).toEqual({ emails: [], total: 0 })
    }))

  it.effect("archived lists only archived users; filters lists the options", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const sql = yield* SqlClient.SqlClient
      const client = yield* clientAs(token)
      const before = (yield* client.adminUsers.archived({ urlParams: {} })).pagination.total_count
      const archivedId = yield* insertUser({ email: "x@archived.test", status: "archived" })
      yield* insertUser({ email: "y@archived.test", status: "inactive" })
      const body = yield* client.adminUsers.archived({ urlParams: { page_size: 100 } })
      expect(body.pagination.total_count).toBe(before + 1)
      expect(body.users.every((u) => u.status === "archived")).toBe(true)
      expect(body.users.map((u) => u.id)).toContain(archivedId)

      const filters = yield* request("GET", "/v1/admin/clinic/users/filters", { token })
      expect(filters.status).toBe(200)
      const range = (yield* sql<{ min: string; max: string }>`SELECT to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS min,
        to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS max FROM users WHERE deleted_at IS NULL`)[0]
      expect(filters.body).toEqual({
        roles: ["parent", "provider", "supervisor", "admin", "support", "billing"],
        statuses: ["active", "inactive", "archived", "pending", "suspended"],
        sort_by: ["id", "email", "first_name", "last_name", "role", "status", "created_at", "updated_at", "last_login"],
        date: { min: range?.min, max: range?.max }
      })
    }))

  it.effect("show: the admin view, 404 for an unknown id, 422 for a malformed one", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const id = yield* insertUser({ email: "show@show.test", first_name: "Sho", status: "pending" })
      const response = yield* request("GET", `/v1/admin/clinic/users/${id}`, { token })
      expect(response.status).toBe(200)
      expect(Object.keys(userOf(response.body)).sort()).toEqual(adminUserKeys)
      expect(userOf(response.body)).toMatchObject({ id, email: "show@show.test", first_name: "Sho", status: "pending", active: false, patient: null })
      const missing = yield* request("GET", "/v1/admin/clinic/users/999999", { token })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ errors: "User not found" })
      const malformed = yield* request("GET", "/v1/admin/clinic/users/abc", { token })
      expect(malformed.status).toBe(422)
    }))

  it.effect("update changes the fields, records the audit trail and revokes sessions on deactivation", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const id = yield* insertUser({ email: "before@update.test" })
      const theirs = yield* signIn("before@update.test", password)
      const sql = yield* SqlClient.SqlClient
      const [{ updated_at: before }] = (yield* sql<{ updated_at: Date }>`SELECT updated_at FROM users WHERE id = ${id}`) as [{ updated_at: Date }]
      // The server stamps `updated_at` from its clock (this file's TestClock, set when the layer
      // started); the row above was stamped by the database since: bring the clock to the present.
      yield* TestClock.setTime(Date.now())

      const client = yield* clientAs(token)
      const { user } = yield* client.adminUsers.update({
        path: { id },
        payload: { user: { first_name: "New", last_name: "Name", email: "After@Update.test", phone: "(415) 555-2671", role: "provider", active: false, clinical: true } }
      })
      expect(user).toMatchObject({
        id, first_name: "New", last_name: "Name", email: "after@update.test", phone: "+14155552671",
        role: "provider", active: false, status: "inactive", clinical: true
      })
      expect(user.updated_at.getTime()).toBeGreaterThan(before.getTime())
      expect(yield* auditActions(id)).toEqual(expect.arrayContaining(["user.update", "user.role_change", "user.active_change"]))
      expect((yield* request("GET", "/v1/admin/clinic/users/1", { token: theirs })).status).toBe(401)
      expect((yield* sql`SELECT 1 FROM user_tokens WHERE user_id = ${id}`).length).toBe(0)

      // Only what is sent changes; a plain update records only user.update.
      const countBefore = (yield* auditActions(id)).length
      const partial = yield* client.adminUsers.update({ path: { id }, payload: { user: { last_name: "Other" } } })
      expect(partial.user).toMatchObject({ first_name: "New", last_name: "Other", role: "provider", status: "inactive" })
      expect((yield* auditActions(id)).slice(countBefore)).toEqual(["user.update"])

      const reactivated = yield* client.adminUsers.update({ path: { id }, payload: { user: { active: true, phone: " " } } })
      expect(reactivated.user).toMatchObject({ active: true, status: "active", phone: null })
      expect((yield* auditActions(id)).slice(countBefore + 1)).toEqual(["user.update", "user.active_change"])

      const badPhone = yield* request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { phone: "12" } } })
      expect(badPhone.status).toBe(422)
      expect(badPhone.body).toEqual({ errors: { phone: ["is invalid"] } })

      const missing = yield* request("PUT", "/v1/admin/clinic/users/999999", { token, body: { user: { first_name: "X" } } })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ errors: "User not found" })
      const invalid = yield* request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { email: "nope", role: "wizard", first_name: " " } } })
      expect(invalid.status).toBe(422)
      expect(invalid.body).toEqual({ errors: { email: ["is invalid"], role: ["is not included in the list"], first_name: ["can't be blank"] } })
    }))

  it.effect("update refuses an email already taken, whatever its case", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* insertUser({ email: "taken@email.test" })
      const id = yield* insertUser({ email: "mine@email.test" })
      const response = yield* request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { email: "TAKEN@email.test" } } })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({ errors: { email: ["has already been taken"] } })
      const same = yield* (yield* clientAs(token)).adminUsers.update({ path: { id }, payload: { user: { email: "MINE@email.test" } } })
      // Emails are stored trimmed and lower-cased (docs/spec-decisions.md).
      expect(same.user.email).toBe("mine@email.test")

      // A racing transaction takes the address after the pre-check passed: the unique index decides
      // and the violation becomes the same 422.
      const sql = yield* SqlClient.SqlClient
      const other = yield* insertUser({ email: "other@email.test" })
      const raced = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE users SET email = 'raced@email.test' WHERE id = ${other}`
        const pending = yield* Effect.fork(
          request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { email: "raced@email.test" } } })
        )
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
        return pending
      })).pipe(Effect.flatMap(Fiber.join))
      expect(raced.status).toBe(422)
      expect(raced.body).toEqual({ errors: { email: ["has already been taken"] } })
    }))

  it.effect("an admin cannot change their own role, deactivate, archive or delete themselves", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const client = yield* clientAs(token)
      const me = (yield* client.adminUsers.show({ path: { id: UserId.make(1) } })).user
      expect(me.role).toBe("admin")
      const cases = [
        ["PUT", { user: { role: "parent" } }, { role: ["cannot be changed on your own account"] }],
        ["PUT", { user: { active: false } }, { active: ["cannot be changed on your own account"] }]
      ] as const
      for (const [method, body, errors] of cases) {
        const response = yield* request(method, `/v1/admin/clinic/users/${me.id}`, { token, body })
        expect(response.status).toBe(422)
        expect(response.body).toEqual({ errors })
      }
      const archive = yield* request("POST", `/v1/admin/clinic/users/${me.id}/archive`, { token })
      expect(archive.status).toBe(422)
      expect(archive.body).toEqual({ errors: { id: ["cannot archive your own account"] } })
      const erase = yield* request("DELETE", `/v1/admin/clinic/users/${me.id}`, { token })
      expect(erase.status).toBe(422)
      expect(erase.body).toEqual({ errors: { id: ["cannot delete your own account"] } })
      // Harmless self-updates are allowed.
      const ok = yield* client.adminUsers.update({ path: { id: me.id }, payload: { user: { role: "admin", active: true, first_name: "Boss" } } })
      expect(ok.user).toMatchObject({ role: "admin", active: true, first_name: "Boss" })
      expect((yield* request("GET", "/v1/admin/clinic/users", { token })).status).toBe(200)
    }))

  it.effect("archive revokes sessions and blocks sign-in; unarchive restores the previous status", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const id = yield* insertUser({ email: "arch@archive.test", role: "provider" })
      const theirs = yield* signIn("arch@archive.test", password)
      expect((yield* request("GET", `/v1/admin/clinic/users/${id}`, { token: theirs })).status).toBe(403)

      const client = yield* clientAs(token)
      const archived = yield* client.adminUsers.archive({ path: { id } })
      expect(archived.user).toMatchObject({ id, status: "archived", active: false })
      expect((yield* request("GET", `/v1/admin/clinic/users/${id}`, { token: theirs })).status).toBe(401)
      const signInAttempt = yield* request("POST", "/v1/users/sign_in", { body: { user: { email: "arch@archive.test", password } } })
      expect(signInAttempt).toMatchObject({ status: 403, body: { errors: "This account has been archived" } })

      // Gone from the main list, present in the archived list; archiving again changes nothing.
      expect((yield* client.adminUsers.list({ urlParams: { search: "archive.test" } })).users).toEqual([])
      expect((yield* client.adminUsers.archived({ urlParams: { page_size: 100 } })).users.map((u) => u.email)).toContain("arch@archive.test")
      const again = yield* client.adminUsers.archive({ path: { id } })
      expect(again.user.status).toBe("archived")

      const restored = yield* client.adminUsers.unarchive({ path: { id } })
      expect(restored.user).toMatchObject({ id, status: "active", active: true })
      expect((yield* request("POST", "/v1/users/sign_in", { body: { user: { email: "arch@archive.test", password } } })).status).toBe(200)
      expect(yield* auditActions(id)).toEqual(expect.arrayContaining(["user.archive", "user.unarchive"]))
      expect((yield* auditActions(id)).filter((a) => a === "user.archive")).toHaveLength(1)

      const notArchived = yield* request("POST", `/v1/admin/clinic/users/${id}/unarchive`, { token })
      expect(notArchived.status).toBe(422)
      expect(notArchived.body).toEqual({ errors: { status: ["is not archived"] } })

      const suspended = yield* insertUser({ email: "susp@archive.test", status: "suspended" })
      yield* client.adminUsers.archive({ path: { id: suspended } })
      const back = yield* client.adminUsers.unarchive({ path: { id: suspended } })
      expect(back.user.status).toBe("suspended")

      for (const action of ["archive", "unarchive"]) {
        const missing = yield* request("POST", `/v1/admin/clinic/users/999999/${action}`, { token })
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ errors: "User not found" })
      }
    }))

  it.effect("update cannot activate an archived user", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const id = yield* insertUser({ email: "a@archived-update.test", status: "archived" })
      const response = yield* request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { active: true } } })
      expect(response.status).toBe(422)
      expect(response.body).toEqual({ errors: { active: ["cannot be changed while the user is archived"] } })
    }))

  it.effect("delete erases personal data, records it, and hides the user everywhere", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const sql = yield* SqlClient.SqlClient
      const id = yield* insertUser({ email: "erase.me@delete.test", first_name: "Erin", last_name: "Rase" })
      const theirs = yield* signIn("erase.me@delete.test", password)
      const response = yield* request("DELETE", `/v1/admin/clinic/users/${id}`, { token })
      expect(response.status).toBe(204)
      expect(response.body).toBeUndefined()
      const [row] = yield* sql<{ first_name: string; last_name: string; email: string; deleted_at: Date | null }>`
        SELECT first_name, last_name, email, deleted_at FROM users WHERE id = ${id}`
      expect(row).toMatchObject({ first_name: "Deleted", last_name: "user" })
      expect(row?.email).not.toContain("erase.me")
      expect(row?.deleted_at).not.toBeNull()
      expect(yield* auditActions(id)).toContain("user.delete")
      expect((yield* request("GET", "/v1/admin/clinic/users/1", { token: theirs })).status).toBe(401)

      for (const [method, url] of [
        ["GET", `/v1/admin/clinic/users/${id}`],
        ["DELETE", `/v1/admin/clinic/users/${id}`],
        ["POST", `/v1/admin/clinic/users/${id}/archive`],
        ["POST", `/v1/admin/clinic/users/${id}/unarchive`]
      ] as const) {
        const gone = yield* request(method, url, { token })
        expect(gone.status).toBe(404)
        expect(gone.body).toEqual({ errors: "User not found" })
      }
      const gone = yield* request("PUT", `/v1/admin/clinic/users/${id}`, { token, body: { user: { first_name: "Back" } } })
      expect(gone.status).toBe(404)
      const client = yield* clientAs(token)
      const all = yield* client.adminUsers.list({ urlParams: { search: "deleted", page_size: 100 } })
      expect(all.users.map((u) => u.id)).not.toContain(id)
      const filtered = yield* client.adminUsers.filter({ payload: { page_size: 100, filters: { active: false } } })
      expect(filtered.users.map((u) => u.id)).not.toContain(id)
    }))
})

describe("admin dashboard", () => {
  layer(TestApp())((it) => {
    it.effect("counts live users and shows recent activity newest first", () =>
      Effect.gen(function*() {
        // "Now" is mid-May 2030; the month starts on 1 May at 00:00Z.
        yield* TestClock.setTime(Date.parse("2030-05-15T12:00:00.000Z"))
        const token = yield* signIn()
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE users SET created_at = '2030-01-01T00:00:00Z'`
        yield* insertUser({ email: "p1@dash.test", role: "provider", clinical: true, created_at: "2030-05-01T00:00:00.000Z" })
        yield* insertUser({ email: "p2@dash.test", role: "provider", status: "inactive", created_at: "2030-04-30T23:59:59.999Z" })
        const archivedId = yield* insertUser({ email: "c@dash.test", clinical: true, created_at: "2030-05-10T00:00:00.000Z" })
        const deletedId = yield* insertUser({ email: "d@dash.test", role: "provider", clinical: true, created_at: "2030-05-11T00:00:00.000Z" })

        expect((yield* request("DELETE", `/v1/admin/clinic/users/${deletedId}`, { token })).status).toBe(204)
        expect((yield* request("POST", `/v1/admin/clinic/users/${archivedId}/archive`, { token })).status).toBe(200)
        expect((yield* request("POST", `/v1/admin/clinic/users/${archivedId}/unarchive`, { token })).status).toBe(200)
        expect((yield* request("POST", `/v1/admin/clinic/users/${archivedId}/archive`, { token })).status).toBe(200)

        const body = yield* (yield* clientAs(token)).adminUsers.dashboard()
        expect(body).toMatchObject({
          total_users: 4, // admin, p1, p2, c (archived still counts; deleted does not)
          active_users: 2, // admin, p1
          new_users_this_month: 2, // p1, c
          clinical_users: 2, // p1, c
          provider_users: 2 // p1, p2
        })
        expect(body.recent_activity.slice(0, 4).map((a) => a.action)).toEqual(["user.archive", "user.unarchive", "user.archive", "user.delete"])
        expect(body.recent_activity[0]).toEqual({ user_id: 1, action: "user.archive", timestamp: new Date("2030-05-15T12:00:00.000Z") })
        expect(body.recent_activity.length).toBeLessThanOrEqual(20)

        // The month boundary follows the clock.
        // Two weeks on, the session has idled out: sign in again.
        yield* TestClock.setTime(Date.parse("2030-06-01T00:00:00.000Z"))
        const june = yield* (yield* clientAs(yield* signIn())).adminUsers.dashboard()
        expect(june.new_users_this_month).toBe(0)
      }))
  })
})
