/** Lead care managers: list and counts, assign / update / remove, a patient's managers, bulk assign. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { LeadCareManagers } from "../../../src/Services/Ecm/LeadCareManagers.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const base = "/v1/admin/clinic/ecm/lead_care_managers"

const insertPatient = (first: string, last: string) => fixtures.insertPatient({ first_name: first, last_name: last, date_of_birth: null })

const statusAndBody = (response: { readonly status: number; readonly body: unknown }) => ({ status: response.status, body: response.body })

const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

interface Listed {
  readonly lead_care_managers: ReadonlyArray<{ readonly id: number }>
}
/** The list through the typed client: the decoded page. */
const list = (token: string, urlParams: { per_page?: number; page?: number; role?: "olcm" | "ilcm"; search?: string } = {}) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmLeadCareManagers.list({ urlParams }))
const entryOf = (listed: Listed, id: number) => listed.lead_care_managers.find((m) => m.id === id)

const changes = (patientId: number) =>
  query<{ role: string; from_user_id: number | null; to_user_id: number | null; actor_id: number; via: string }>(
    `SELECT role, from_user_id, to_user_id, actor_id, via FROM case_load_changes WHERE patient_id = $1 ORDER BY id`, patientId)

layer(TestApp())("lead care managers", (it) => {
  it.effect("assign answers the case load; update replaces one role; remove takes one off; all recorded and audited", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const [adminRow] = yield* query<{ id: number }>(`SELECT id FROM users WHERE email = 'admin@example.test'`)
      const olive = yield* insertUser({ email: "olive@lcm.test", role: "provider", first_name: "Olive", last_name: "Outreach" })
      const ivan = yield* insertUser({ email: "ivan@lcm.test", role: "supervisor", first_name: "Ivan", last_name: "Intense" })
      const patientId = yield* insertPatient("Casey", "Load")

      const assigned = yield* request("POST", `${base}/assign`, { token, body: { patient_id: patientId, olcm_user_id: olive.id } })
      expect(statusAndBody(assigned)).toEqual({
        status: 200,
        body: {
          message: "Lead care managers assigned successfully",
          case_load: {
            id: expect.any(Number), patient_id: patientId, patient_name: "Casey Load", provider_id: null, provider_name: null,
            olcm_user_id: olive.id, olcm_name: "Olive Outreach", ilcm_user_id: null, ilcm_name: null,
            created_at: timestamp, updated_at: timestamp
          }
        }
      })
      const client = yield* clientAs(token)
      const caseLoadId = (yield* client.ecmLeadCareManagers.forPatient({ path: { patient_id: patientId } })).case_load?.id

      // Update: same body, same answer; the role not given is kept; one person may hold both.
      const updated = yield* client.ecmLeadCareManagers.update({ payload: { patient_id: patientId, ilcm_user_id: olive.id } })
      expect(updated).toMatchObject({
        message: "Lead care managers updated successfully",
        case_load: { id: caseLoadId, olcm_user_id: olive.id, olcm_name: "Olive Outreach", ilcm_user_id: olive.id, ilcm_name: "Olive Outreach" }
      })
      const replaced = yield* client.ecmLeadCareManagers.update({ payload: { patient_id: patientId, ilcm_user_id: ivan.id, olcm_user_id: olive.id } })
      expect(replaced.case_load).toMatchObject({ olcm_user_id: olive.id, ilcm_user_id: ivan.id, ilcm_name: "Ivan Intense" })

      const shown = yield* request("GET", `/v1/admin/clinic/ecm/patients/${patientId}/lead_care_managers`, { token })
      expect(statusAndBody(shown)).toEqual({
        status: 200,
        body: {
          patient_id: patientId,
          patient_name: "Casey Load",
          case_load: {
            id: caseLoadId, provider_id: null, provider_name: null,
            olcm: { user_id: olive.id, name: "Olive Outreach", email: "olive@lcm.test", assigned_at: timestamp },
            ilcm: { user_id: ivan.id, name: "Ivan Intense", email: "ivan@lcm.test", assigned_at: timestamp }
          }
        }
      })

      const removed = yield* request("DELETE", `${base}/assign`, { token, body: { patient_id: patientId, role: "olcm" } })
      expect(statusAndBody(removed)).toEqual({ status: 200, body: { message: "Lead care manager removed successfully" } })
      // Removing a role nobody holds changes nothing.
      const again = yield* request("DELETE", `${base}/assign`, { token, body: { patient_id: patientId, role: "olcm" } })
      expect(statusAndBody(again)).toEqual({ status: 200, body: { message: "Lead care manager removed successfully" } })
      const after = yield* request("GET", `/v1/admin/clinic/ecm/patients/${patientId}/lead_care_managers`, { token })
      expect(after.body).toMatchObject({ case_load: { olcm: null, ilcm: { user_id: ivan.id } } })
      // Inbound SMS and calls route to the assignees.
      const managers = yield* LeadCareManagers
      expect(yield* managers.assigneesOf(patientId)).toEqual({ olcm: null, ilcm: ivan.id })
      expect(yield* managers.assigneesOf(999999)).toEqual({ olcm: null, ilcm: null })

      const admin = adminRow!.id
      expect(yield* changes(patientId)).toEqual([
        { role: "olcm", from_user_id: null, to_user_id: olive.id, actor_id: admin, via: "assign" },
        { role: "ilcm", from_user_id: null, to_user_id: olive.id, actor_id: admin, via: "update" },
        { role: "ilcm", from_user_id: olive.id, to_user_id: ivan.id, actor_id: admin, via: "update" },
        { role: "olcm", from_user_id: olive.id, to_user_id: null, actor_id: admin, via: "remove" }
      ])
      const audited = yield* query<{ action: string; actor_id: number; target_id: number }>(
        `SELECT action, actor_id, target_id FROM audit_events WHERE target_type = 'case_load' AND target_id = $1 ORDER BY id`, caseLoadId)
      expect(audited).toEqual([
        { action: "case_load.olcm.assign", actor_id: admin, target_id: caseLoadId },
        { action: "case_load.ilcm.assign", actor_id: admin, target_id: caseLoadId },
        { action: "case_load.ilcm.assign", actor_id: admin, target_id: caseLoadId },
        { action: "case_load.olcm.remove", actor_id: admin, target_id: caseLoadId }
      ])
    }))

  it.effect("refuses parents, archived, deleted and unknown users naming the role, neither id, unknown patients; nothing changes", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const parent = yield* insertUser({ email: "parent@lcm.test", role: "parent" })
      const archived = yield* insertUser({ email: "archived@lcm.test", role: "provider" })
      yield* query(`UPDATE users SET status = 'archived' WHERE id = $1`, archived.id)
      const deleted = yield* insertUser({ email: "deleted@lcm.test", role: "provider" })
      yield* query(`UPDATE users SET deleted_at = now() WHERE id = $1`, deleted.id)
      const staff = yield* insertUser({ email: "fine@lcm.test", role: "support" })
      const patientId = yield* insertPatient("Rule", "Check")

      const refused = (body: unknown, errors: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          for (const method of ["POST", "PUT"] as const) {
            const response = yield* request(method, `${base}/assign`, { token, body })
            expect({ method, sent: body, ...statusAndBody(response) }).toEqual({ method, sent: body, status: 422, body: { errors } })
          }
        })
      yield* refused({ patient_id: patientId, olcm_user_id: parent.id }, ["Olcm user must be an active staff user"])
      yield* refused({ patient_id: patientId, ilcm_user_id: archived.id }, ["Ilcm user must be an active staff user"])
      yield* refused({ patient_id: patientId, olcm_user_id: staff.id, ilcm_user_id: deleted.id }, ["Ilcm user must be an active staff user"])
      yield* refused({ patient_id: patientId, olcm_user_id: 999999 }, ["Olcm user not found"])
      yield* refused({ patient_id: patientId }, ["Either olcm_user_id or ilcm_user_id is required"])
      const missing = yield* request("POST", `${base}/assign`, { token, body: { olcm_user_id: "x" } })
      expect(missing.status).toBe(422)
      expect((missing.body as { errors: Array<string> }).errors).toEqual(expect.arrayContaining([expect.stringMatching(/^Patient/), expect.stringMatching(/^Olcm user/)]))

      for (const [method, body] of [
        ["POST", { patient_id: 999999, olcm_user_id: staff.id }],
        ["PUT", { patient_id: 999999, olcm_user_id: parent.id }],
        ["DELETE", { patient_id: 999999, role: "ilcm" }]
      ] as const) {
        expect(statusAndBody(yield* request(method, `${base}/assign`, { token, body }))).toEqual({ status: 404, body: { errors: ["Patient not found"] } })
      }
      expect(statusAndBody(yield* request("GET", "/v1/admin/clinic/ecm/patients/999999/lead_care_managers", { token })))
        .toEqual({ status: 404, body: { errors: ["Patient not found"] } })
      const badRole = yield* request("DELETE", `${base}/assign`, { token, body: { patient_id: patientId, role: "boss" } })
      expect(badRole.status).toBe(422)

      const [rows] = yield* query<{ case_loads: number; changes: number }>(
        `SELECT (SELECT count(*)::int FROM case_loads WHERE patient_id = $1) AS case_loads,
          (SELECT count(*)::int FROM case_load_changes WHERE patient_id = $1) AS changes`, patientId)
      expect(rows).toEqual({ case_loads: 0, changes: 0 })
      // A patient without a case load: null until assigned.
      const shown = yield* request("GET", `/v1/admin/clinic/ecm/patients/${patientId}/lead_care_managers`, { token })
      expect(shown.body).toEqual({ patient_id: patientId, patient_name: "Rule Check", case_load: null })

      const staffOnly = yield* request("GET", base, { token: staff.token })
      expect(statusAndBody(staffOnly)).toEqual({ status: 403, body: { errors: ["Admin access required"] } })
    }))

  it.effect("the list: eligible staff and holders, roles and counts that follow assign and remove; search, role, pages", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      // The file's tests share one database: this one counts every assignment.
      yield* query(`DELETE FROM case_loads`)
      const anna = yield* insertUser({ email: "anna@list.test", role: "provider", first_name: "Anna", last_name: "Zeta" })
      const bob = yield* insertUser({ email: "bob@list.test", role: "support", first_name: "Bob", last_name: "Ypsilon" })
      const parent = yield* insertUser({ email: "kid@list.test", role: "parent", first_name: "Pa", last_name: "Rent" })
      const p1 = yield* insertPatient("One", "Patient")
      const p2 = yield* insertPatient("Two", "Patient")

      // The exact entry as served (the typed list below drops fields the contract does not name).
      const raw = yield* request("GET", `${base}?per_page=100`, { token })
      expect(raw.status).toBe(200)
      let listed = yield* list(token, { per_page: 100 })
      expect(entryOf(raw.body as Listed, anna.id)).toEqual({
        id: anna.id, name: "Anna Zeta", email: "anna@list.test", roles: [],
        assigned_patients_count: 0, olcm_assignments_count: 0, ilcm_assignments_count: 0
      })
      expect(entryOf(listed, parent.id)).toBeUndefined()

      yield* request("POST", `${base}/assign`, { token, body: { patient_id: p1, olcm_user_id: anna.id, ilcm_user_id: anna.id } })
      yield* request("POST", `${base}/assign`, { token, body: { patient_id: p2, olcm_user_id: anna.id, ilcm_user_id: bob.id } })
      listed = yield* list(token, { per_page: 100 })
      expect(entryOf(listed, anna.id)).toMatchObject({ roles: ["olcm", "ilcm"], assigned_patients_count: 2, olcm_assignments_count: 2, ilcm_assignments_count: 1 })
      expect(entryOf(listed, bob.id)).toMatchObject({ roles: ["ilcm"], assigned_patients_count: 1, olcm_assignments_count: 0, ilcm_assignments_count: 1 })

      const olcms = yield* list(token, { role: "olcm" })
      expect(olcms.lead_care_managers.map((m) => m.id)).toEqual([anna.id])
      const ilcms = yield* list(token, { role: "ilcm" })
      expect(ilcms.lead_care_managers.map((m) => m.id)).toEqual([bob.id, anna.id])
      expect(ilcms.pagination).toEqual({ current_page: 1, per_page: 25, total_count: 2, total_pages: 1 })
      const page2 = yield* list(token, { role: "ilcm", per_page: 1, page: 2 })
      expect({ ids: page2.lead_care_managers.map((m) => m.id), pagination: page2.pagination })
        .toEqual({ ids: [anna.id], pagination: { current_page: 2, per_page: 1, total_count: 2, total_pages: 2 } })
      expect((yield* list(token, { search: "anna z" })).lead_care_managers.map((m) => m.id)).toEqual([anna.id])
      expect((yield* list(token, { search: "%" })).lead_care_managers).toEqual([])

      yield* request("DELETE", `${base}/assign`, { token, body: { patient_id: p1, role: "olcm" } })
      // An archived holder stays listed (so an admin can replace them), with their counts.
      yield* query(`UPDATE users SET status = 'archived' WHERE id = $1`, bob.id)
      listed = yield* list(token, { per_page: 100 })
      expect(entryOf(listed, anna.id)).toMatchObject({ roles: ["olcm", "ilcm"], assigned_patients_count: 2, olcm_assignments_count: 1, ilcm_assignments_count: 1 })
      expect(entryOf(listed, bob.id)).toMatchObject({ roles: ["ilcm"], assigned_patients_count: 1 })
      yield* request("DELETE", `${base}/assign`, { token, body: { patient_id: p2, role: "ilcm" } })
      listed = yield* list(token, { per_page: 100 })
      expect(entryOf(listed, bob.id)).toBeUndefined()

      const bad = yield* request("GET", `${base}?role=boss&page=0`, { token })
      expect(bad.status).toBe(422)
    }))

  it.effect("bulk assign: each entry on its own, results in order, failures with their errors", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const lead = yield* insertUser({ email: "lead@bulk.test", role: "provider", first_name: "Lee", last_name: "Bulk" })
      const parent = yield* insertUser({ email: "parent@bulk.test", role: "parent" })
      const a = yield* insertPatient("Bulk", "A")
      const b = yield* insertPatient("Bulk", "B")
      const response = yield* request("POST", `${base}/bulk_assign`, {
        token,
        body: {
          assignments: [
            { patient_id: a, olcm_user_id: lead.id },
            { patient_id: 999999, olcm_user_id: lead.id },
            { patient_id: b, ilcm_user_id: parent.id },
            { patient_id: b, olcm_user_id: lead.id, ilcm_user_id: lead.id },
            { patient_id: a, ilcm_user_id: lead.id },
            { patient_id: b }
          ]
        }
      })
      expect(statusAndBody(response)).toEqual({
        status: 200,
        body: {
          message: "Bulk assignment completed: 2 succeeded, 4 failed",
          successful_count: 2,
          failed_count: 4,
          results: [
            { patient_id: a, status: "success" },
            { patient_id: 999999, status: "failed", errors: ["Patient not found"] },
            { patient_id: b, status: "failed", errors: ["Ilcm user must be an active staff user"] },
            { patient_id: b, status: "success" },
            { patient_id: a, status: "failed", errors: ["Patient is listed more than once in assignments"] },
            { patient_id: b, status: "failed", errors: ["Patient is listed more than once in assignments", "Either olcm_user_id or ilcm_user_id is required"] }
          ]
        }
      })
      const rows = yield* query<{ patient_id: number; olcm_user_id: number | null; ilcm_user_id: number | null }>(
        `SELECT patient_id, olcm_user_id, ilcm_user_id FROM case_loads WHERE patient_id IN ($1, $2) ORDER BY patient_id`, a, b)
      expect(rows).toEqual([
        { patient_id: a, olcm_user_id: lead.id, ilcm_user_id: null },
        { patient_id: b, olcm_user_id: lead.id, ilcm_user_id: lead.id }
      ])
      expect((yield* changes(b)).map((c) => c.via)).toEqual(["bulk_assign", "bulk_assign"])

      // Assigning what is already held succeeds and records nothing.
      const same = yield* request("POST", `${base}/bulk_assign`, { token, body: { assignments: [{ patient_id: a, olcm_user_id: lead.id }] } })
      expect(same.body).toMatchObject({ successful_count: 1, failed_count: 0 })
      expect(yield* changes(a)).toHaveLength(1)

      for (const body of [{ assignments: [] }, {}, { assignments: Array.from({ length: 1001 }, () => ({ patient_id: a, olcm_user_id: lead.id })) }]) {
        expect((yield* request("POST", `${base}/bulk_assign`, { token, body })).status).toBe(422)
      }
    }))

  it.effect("concurrent bulk requests over the same patients in opposite orders all succeed (no deadlock)", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const x = yield* insertUser({ email: "x@race.test", role: "provider" })
      const y = yield* insertUser({ email: "y@race.test", role: "provider" })
      const ids: Array<number> = []
      for (let i = 0; i < 20; i++) ids.push(yield* insertPatient("Race", `P${i}`))
      const bodies = Array.from({ length: 8 }, (_, n) => {
        const order = n % 2 === 0 ? ids : [...ids].reverse()
        const [olcm, ilcm] = n % 4 < 2 ? [x.id, y.id] : [y.id, x.id]
        return { assignments: order.map((id) => ({ patient_id: id, olcm_user_id: olcm, ilcm_user_id: ilcm })) }
      })
      const responses = yield* Effect.forEach(bodies, (body) => request("POST", `${base}/bulk_assign`, { token, body }), { concurrency: "unbounded" })
      expect(responses.map((r) => [r.status, (r.body as { successful_count: number }).successful_count])).toEqual(bodies.map(() => [200, 20]))
      // The history chains: each change starts from where the previous one of its role ended.
      const history = yield* query<{ patient_id: number; role: string; from_user_id: number | null; to_user_id: number }>(
        `SELECT patient_id, role, from_user_id, to_user_id FROM case_load_changes WHERE patient_id = ANY($1::int[]) ORDER BY id`, ids)
      const last = new Map<string, number | null>()
      for (const change of history) {
        const key = `${change.patient_id}/${change.role}`
        expect(change.from_user_id).toBe(last.get(key) ?? null)
        last.set(key, change.to_user_id)
      }
      const final = yield* query<{ patient_id: number; olcm_user_id: number; ilcm_user_id: number }>(
        `SELECT patient_id, olcm_user_id, ilcm_user_id FROM case_loads WHERE patient_id = ANY($1::int[])`, ids)
      for (const row of final) {
        expect(last.get(`${row.patient_id}/olcm`)).toBe(row.olcm_user_id)
        expect(last.get(`${row.patient_id}/ilcm`)).toBe(row.ilcm_user_id)
      }
    }))
})
