import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { adminToken, auditActions, insertUser, makeProvider, password, providerIdOf, providerOf, put } from "./helpers.js"

const providerKeys = [
  "active", "created_at", "department", "email", "first_name", "has_supervisor", "id", "last_name", "license_number", "npi", "roles",
  "specialty", "supervisor_id", "updated_at", "user_id"
]
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

layer(TestApp())("admin providers", (it) => {
  it.effect("require a token (401) and the admin role (403)", () =>
    Effect.gen(function*() {
      yield* insertUser({ email: "staff@access.providers.test", role: "support" })
      const staff = yield* signIn("staff@access.providers.test", password)
      for (const [method, url] of [
        ["GET", "/v1/admin/clinic/providers"], ["GET", "/v1/admin/clinic/providers/1"], ["PUT", "/v1/admin/clinic/providers/1"],
        ["POST", "/v1/admin/clinic/providers/filter_providers"], ["GET", "/v1/admin/clinic/supervisors"],
        ["POST", "/v1/admin/clinic/providers/invites"]
      ] as const) {
        const anonymous = yield* request(method, url, { body: method === "GET" ? undefined : {} })
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toEqual({ errors: "You are not authorized to perform this action." })
        const refused = yield* request(method, url, { token: staff, body: method === "GET" ? undefined : {} })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ errors: "Admin access required" })
      }
    }))

  it.effect("a role given by an admin creates the profile; taken away keeps it inactive; given back reactivates it", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const userId = yield* insertUser({ email: "dana.role@providers.test", first_name: "Dana", last_name: "Role" })
      expect(yield* providerIdOf(userId)).toBeUndefined()
      yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role: "provider" } } })
      const id = (yield* providerIdOf(userId))!
      const shown = yield* request("GET", `/v1/admin/clinic/providers/${id}`, { token })
      expect(shown.status).toBe(200)
      const provider = providerOf(shown.body)
      expect(Object.keys(provider).sort()).toEqual(providerKeys)
      expect(provider).toEqual({
        id, user_id: userId, first_name: "Dana", last_name: "Role", email: "dana.role@providers.test", roles: ["provider"],
        specialty: null, license_number: null, npi: null, department: null, has_supervisor: false, supervisor_id: null, active: true,
        created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
      })
      // Through the self-service endpoint an admin changes roles too: the profile follows.
      yield* request("PUT", `/v1/users/${userId}`, { token, body: { user: { role: "supervisor" } } })
      const client = yield* clientAs(token)
      const profile = client.providers.show({ path: { id: ProviderId.make(id) } }).pipe(Effect.map((r) => r.provider))
      expect(yield* profile).toMatchObject({ roles: ["provider", "supervisor"], active: true })
      yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role: "billing" } } })
      expect(yield* profile).toMatchObject({ active: false })
      yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role: "provider" } } })
      expect(yield* providerIdOf(userId)).toBe(id)
      expect(yield* profile).toMatchObject({ roles: ["provider", "supervisor"], active: true })
      // Repeating the same role changes nothing and audits nothing more.
      yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role: "provider", first_name: "Dana" } } })
      expect(yield* auditActions("provider", id)).toEqual(["provider.create", "provider.update", "provider.deactivate", "provider.reactivate"])
      // A deleted user's profile is kept inactive and hidden like the user.
      expect((yield* request("DELETE", `/v1/admin/clinic/users/${userId}`, { token })).status).toBe(204)
      const gone = yield* request("GET", `/v1/admin/clinic/providers/${id}`, { token })
      expect(gone.status).toBe(404)
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ active: boolean }>`SELECT active FROM providers WHERE id = ${id}`)[0]?.active).toBe(false)
    }))

  it.effect("unknown provider: 404 in the general shape; malformed id: 422", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      for (const method of ["GET", "PUT"] as const) {
        const missing = yield* request(method, "/v1/admin/clinic/providers/999999", { token, body: method === "PUT" ? { provider: {} } : undefined })
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ errors: "Provider not found" })
      }
      const malformed = yield* request("GET", "/v1/admin/clinic/providers/1e0", { token })
      expect(malformed.status).toBe(422)
      expect(malformed.body).toEqual({ errors: { id: ["is invalid"] } })
    }))

  it.effect("lists 25 a page by name; searches names, email, specialty, license and NPI; filter_providers honours only search", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const made = []
      for (let i = 0; i < 27; i++) {
        made.push(yield* makeProvider(token, "provider", { first_name: "Lister", last_name: `Zz${String(i).padStart(2, "0")}`, email: `lister${i}@list.providers.test` }))
      }
      const client = yield* clientAs(token)
      yield* client.providers.update({
        path: { id: made[3]!.id }, payload: { provider: { specialty: "marriage_family_therapy", license_number: "LIC-QX-77", npi: "1234567893" } }
      })
      const [body, page] = yield* client.providers.list({ urlParams: { search: "list.providers.test" }, withResponse: true })
      expect(page.status).toBe(200)
      expect(body.pagination).toEqual({ current_page: 1, total_pages: 2, total_count: 27, per_page: 25 })
      expect(body.providers.map((p) => p.last_name).slice(0, 3)).toEqual(["Zz00", "Zz01", "Zz02"])
      for (const search of ["family_ther", "lic-qx", "456789", "Zz03", "lister3@"]) {
        const found = yield* client.providers.list({ urlParams: { search } })
        expect(found.providers.map((p) => p.id), search).toEqual([made[3]!.id])
      }
      // Lower-case sort_dir, as a query string may spell it.
      const sorted = yield* request("GET", "/v1/admin/clinic/providers?search=list.providers&sort_by=last_name&sort_dir=desc&page_size=2", { token })
      expect(sorted.body).toMatchObject({ providers: [{ last_name: "Zz26" }, { last_name: "Zz25" }] })
      const badSort = yield* request("GET", "/v1/admin/clinic/providers?sort_by=password_hash", { token })
      expect(badSort.status).toBe(422)
      expect(badSort.body).toEqual({ errors: { sort_by: ["is not included in the list"] } })
      const filtered = yield* request("POST", "/v1/admin/clinic/providers/filter_providers", {
        token, body: { filters: { search: "LIC-QX", active: false, roles: ["nope"] }, page_size: 5 }
      })
      expect(filtered.status).toBe(200)
      expect(filtered.body).toMatchObject({ providers: [{ id: made[3]!.id }], pagination: { total_count: 1, per_page: 5 } })
      const topLevel = yield* client.providers.filter({ payload: { search: "Zz26", filters: { search: "Zz25" } } })
      expect(topLevel.providers.map((p) => p.last_name)).toEqual(["Zz26"])
    }))

  it.effect("updates roles, specialty, license and NPI; refuses bad roles, NPIs and taken NPIs with nothing changed", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const { id } = yield* makeProvider(token)
      const other = yield* makeProvider(token)
      const ok = yield* put(token, id, { roles: ["provider", "trainee", "trainee"], specialty: " counseling ", license_number: "L-1", npi: "9876543213" })
      expect(ok.status).toBe(200)
      expect(providerOf(ok.body)).toMatchObject({ roles: ["provider", "trainee"], specialty: "counseling", license_number: "L-1", npi: "9876543213" })
      const badRoles = yield* put(token, id, { roles: ["provider", "janitor"] })
      expect(badRoles.status).toBe(422)
      expect(badRoles.body).toEqual({ errors: { roles: ["is not included in the list"] } })
      expect((yield* put(token, id, { roles: [] })).body).toEqual({ errors: { roles: ["can't be blank"] } })
      const badNpi = yield* put(token, id, { npi: "9876543210", specialty: "other" })
      expect(badNpi.status).toBe(422)
      expect(badNpi.body).toEqual({ errors: { npi: ["is invalid"] } })
      const taken = yield* put(token, other.id, { npi: "9876543213" })
      expect(taken.status).toBe(422)
      expect(taken.body).toEqual({ errors: { npi: ["has already been taken"] } })
      const after = providerOf((yield* request("GET", `/v1/admin/clinic/providers/${id}`, { token })).body)
      expect(after).toMatchObject({ roles: ["provider", "trainee"], specialty: "counseling", npi: "9876543213" })
      expect(providerOf((yield* put(token, id, { npi: "", specialty: null })).body)).toMatchObject({ npi: null, specialty: null })
      expect(yield* auditActions("provider", id)).toEqual(["provider.create", "provider.update", "provider.update"])
    }))

  it.effect("a clinical provider cannot be left without a license number", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const { id } = yield* makeProvider(token, "provider", { clinical: true })
      const untouched = yield* put(token, id, { specialty: "counseling" })
      expect(untouched.status).toBe(422)
      expect(untouched.body).toEqual({ errors: { license_number: ["can't be blank"] } })
      expect((yield* put(token, id, { license_number: "  " })).body).toEqual({ errors: { license_number: ["can't be blank"] } })
      expect((yield* put(token, id, { license_number: "PSY-9" })).status).toBe(200)
      expect((yield* put(token, id, { license_number: null })).body).toEqual({ errors: { license_number: ["can't be blank"] } })
    }))

  it.effect("an inactive profile of a user without the role cannot be made active", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const { id, userId } = yield* makeProvider(token)
      yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role: "support" } } })
      const refused = yield* put(token, id, { active: true })
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({ errors: { active: ["can't be true while the user's role is not provider or supervisor"] } })
      const { id: other } = yield* makeProvider(token)
      const client = yield* clientAs(token)
      const setActive = (active: boolean) => client.providers.update({ path: { id: other }, payload: { provider: { active } } })
      expect((yield* setActive(false)).provider).toMatchObject({ active: false })
      expect((yield* setActive(true)).provider).toMatchObject({ active: true })
    }))

  it.effect("supervisor rules: must exist, hold the role, be active, not be the provider, not close a cycle; has_supervisor", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const a = yield* makeProvider(token, "supervisor")
      const b = yield* makeProvider(token, "supervisor")
      const c = yield* makeProvider(token, "supervisor")
      const plain = yield* makeProvider(token, "provider")
      const field = (response: { body: unknown }) => (response.body as { errors: { supervisor_id: Array<string> } }).errors.supervisor_id
      expect(field(yield* put(token, plain.id, { supervisor_id: 999999 }))).toEqual(["must exist"])
      const notSupervisor = yield* makeProvider(token, "provider")
      expect(field(yield* put(token, plain.id, { supervisor_id: notSupervisor.id }))).toEqual(["must exist"])
      expect(field(yield* put(token, a.id, { supervisor_id: a.id }))).toEqual(["can't be the provider themself"])
      expect(field(yield* put(token, plain.id, { has_supervisor: true }))).toEqual(["can't be blank"])
      expect(field(yield* put(token, plain.id, { has_supervisor: false, supervisor_id: a.id }))).toEqual(["must be blank when has_supervisor is false"])
      // c <- b <- a: a supervises b, b supervises c; c supervising a would close the cycle.
      expect(providerOf((yield* put(token, b.id, { supervisor_id: a.id, has_supervisor: true })).body))
        .toMatchObject({ supervisor_id: a.id, has_supervisor: true })
      expect((yield* put(token, c.id, { supervisor_id: b.id })).status).toBe(200)
      const cycle = yield* put(token, a.id, { supervisor_id: c.id })
      expect(cycle.status).toBe(422)
      expect(cycle.body).toEqual({ errors: { supervisor_id: ["would create a supervision cycle"] } })
      expect(field(yield* put(token, a.id, { supervisor_id: b.id }))).toEqual(["would create a supervision cycle"])
      expect(providerOf((yield* request("GET", `/v1/admin/clinic/providers/${a.id}`, { token })).body)).toMatchObject({ supervisor_id: null })
      // An inactive supervisor is refused for new links; existing links stay and are not re-checked.
      expect((yield* put(token, plain.id, { supervisor_id: a.id })).status).toBe(200)
      expect((yield* put(token, a.id, { active: false })).status).toBe(200)
      const other = yield* makeProvider(token)
      expect(field(yield* put(token, other.id, { supervisor_id: a.id }))).toEqual(["must be an active supervisor"])
      expect((yield* put(token, plain.id, { specialty: "counseling", has_supervisor: true })).status).toBe(200)
      // has_supervisor false removes the supervisor.
      expect(providerOf((yield* put(token, plain.id, { has_supervisor: false })).body)).toMatchObject({ supervisor_id: null, has_supervisor: false })
      expect(yield* auditActions("provider", plain.id)).toEqual([
        "provider.create", "provider.update", "provider.supervisor_change", "provider.update", "provider.update", "provider.supervisor_change"
      ])
    }))

  it.effect("concurrent updates cannot close a supervision cycle: of A→B and B→A at once exactly one wins", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      for (let round = 0; round < 5; round++) {
        const a = yield* makeProvider(token, "supervisor")
        const b = yield* makeProvider(token, "supervisor")
        const c = yield* makeProvider(token, "supervisor")
        // Three-way as well: a→b, b→c, c→a sent at once.
        const responses = yield* Effect.all([
          put(token, a.id, { supervisor_id: b.id }),
          put(token, b.id, { supervisor_id: c.id }),
          put(token, c.id, { supervisor_id: a.id })
        ], { concurrency: "unbounded" })
        expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 422])
        expect(responses.find((r) => r.status === 422)?.body).toEqual({ errors: { supervisor_id: ["would create a supervision cycle"] } })
        const pair = yield* Effect.all([put(token, a.id, { has_supervisor: false }), put(token, b.id, { has_supervisor: false })])
        expect(pair.map((r) => r.status)).toEqual([200, 200])
        const two = yield* Effect.all([put(token, a.id, { supervisor_id: b.id }), put(token, b.id, { supervisor_id: a.id })], { concurrency: "unbounded" })
        expect(two.map((r) => r.status).sort()).toEqual([200, 422])
      }
      const sql = yield* SqlClient.SqlClient
      // No provider reaches itself by following supervisors.
      const cycles = yield* sql`WITH RECURSIVE walk (start, id, depth) AS (
          SELECT id, supervisor_id, 1 FROM providers WHERE supervisor_id IS NOT NULL
          UNION ALL SELECT w.start, p.supervisor_id, w.depth + 1 FROM walk w JOIN providers p ON p.id = w.id
          WHERE p.supervisor_id IS NOT NULL AND w.depth < 50
        ) SELECT 1 FROM walk WHERE start = id`
      expect(cycles).toHaveLength(0)
    }))

  it.effect("lists supervisors with their supervisees; filters by active and specialty", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const boss = yield* makeProvider(token, "supervisor", { first_name: "Sue", last_name: "Aaboss", email: "sue@sup.providers.test" })
      const idle = yield* makeProvider(token, "supervisor", { first_name: "Ida", last_name: "Aaidle" })
      const ann = yield* makeProvider(token, "provider", { first_name: "Ann", last_name: "Bee" })
      const bob = yield* makeProvider(token, "provider", { first_name: "Bob", last_name: "Ace" })
      yield* put(token, boss.id, { specialty: "child_psychiatry", license_number: "CP-1" })
      yield* put(token, ann.id, { supervisor_id: boss.id })
      yield* put(token, bob.id, { supervisor_id: boss.id })
      yield* put(token, idle.id, { active: false })
      const listed = yield* request("GET", "/v1/admin/clinic/supervisors?specialty=child_psychiatry", { token })
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({
        supervisors: [{
          id: boss.id, user_id: boss.userId, first_name: "Sue", last_name: "Aaboss", email: "sue@sup.providers.test",
          specialty: "child_psychiatry", license_number: "CP-1", active: true,
          supervisees: [{ id: bob.id, first_name: "Bob", last_name: "Ace" }, { id: ann.id, first_name: "Ann", last_name: "Bee" }],
          created_at: expect.stringMatching(iso), updated_at: expect.stringMatching(iso)
        }],
        pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 }
      })
      const inactive = yield* request("GET", "/v1/admin/clinic/supervisors?active=false", { token })
      expect((inactive.body as { supervisors: Array<{ id: number }> }).supervisors.map((s) => s.id)).toContain(idle.id)
      expect((inactive.body as { supervisors: Array<{ id: number; active: boolean }> }).supervisors.every((s) => !s.active)).toBe(true)
      const active = yield* request("GET", "/v1/admin/clinic/supervisors?active=true&page_size=100", { token })
      const ids = (active.body as { supervisors: Array<{ id: number }> }).supervisors.map((s) => s.id)
      expect(ids).toContain(boss.id)
      expect(ids).not.toContain(idle.id)
      expect(ids).not.toContain(ann.id)
      const bad = yield* request("GET", "/v1/admin/clinic/supervisors?active=maybe", { token })
      expect(bad.status).toBe(422)
      expect(bad.body).toEqual({ errors: { active: ["is not included in the list"] } })
    }))
})
