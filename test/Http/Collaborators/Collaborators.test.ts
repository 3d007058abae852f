import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CollaboratorId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertAppointment } from "../Billing/helpers.js"
import { signedIn } from "../Patients/helpers.js"
import { auditActions, cast, collaboratorBody, createCollaborator, forbiddenBody, insertPatient, issueToken } from "./helpers.js"

const path = "/v1/collaborators"
type Body = { collaborator: Record<string, unknown> & { id: number } }
const fields = ["created_at", "email", "first_name", "id", "last_name", "organization", "patient_ids", "phone", "specialization", "status", "title", "type", "updated_at"]

layer(TestApp())("collaborators", (it) => {
  it.effect("create, show, update, list and soft delete, in the spec's shape", () =>
    Effect.gen(function*() {
      const { ownerParent, patientId } = yield* cast
      const token = ownerParent.token
      const created = yield* request("POST", path, {
        token,
        body: { collaborator: collaboratorBody({ email: " J.Rivera@School.test ", phone: "(415) 555-0132", title: "Teacher", specialization: "general_education", patient_ids: [patientId, patientId] }) }
      })
      expect(created.status).toBe(201)
      const collaborator = (created.body as Body).collaborator
      expect(Object.keys(collaborator).sort()).toEqual(fields)
      expect(collaborator).toMatchObject({
        first_name: "Jordan", last_name: "Rivera", email: "j.rivera@school.test", phone: "+14155550132", organization: "Lincoln Elementary",
        title: "Teacher", type: "school", specialization: "general_education", status: "pending", patient_ids: [patientId]
      })
      expect((yield* request("GET", `${path}/${collaborator.id}`, { token })).body).toEqual({ collaborator })

      const client = yield* clientAs(token)
      const id = CollaboratorId.make(collaborator.id)
      const updated = yield* client.collaborators.update({ path: { id }, payload: { collaborator: { title: "Lead teacher", phone: null, status: "active" } } })
      expect(updated.collaborator).toMatchObject({ title: "Lead teacher", phone: null, status: "active", email: "j.rivera@school.test" })

      const listed = yield* request("GET", `${path}?type=school&status=active&organization=lincoln&patient_id=${patientId}`, { token })
      const changed = { ...collaborator, title: "Lead teacher", phone: null, status: "active", updated_at: updated.collaborator.updated_at.toISOString() }
      expect(listed.body).toEqual({ collaborators: [changed], pagination: { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 } })
      const filtered = yield* client.collaborators.list({ urlParams: { type: "school", status: "active", organization: "lincoln", patient_id: patientId } })
      expect(filtered.collaborators.map((c) => c.id)).toEqual([id])
      expect((yield* request("GET", `${path}?type=physician`, { token })).body).toMatchObject({ collaborators: [], pagination: { total_count: 0 } })
      expect((yield* request("GET", `${path}?organization=%25`, { token })).body).toMatchObject({ collaborators: [] })

      expect((yield* request("DELETE", `${path}/${collaborator.id}`, { token })).status).toBe(204)
      expect(yield* request("GET", `${path}/${collaborator.id}`, { token })).toMatchObject({ status: 404, body: { errors: "Collaborator not found" } })
      expect(yield* request("PUT", `${path}/${collaborator.id}`, { token, body: { collaborator: {} } })).toMatchObject({ status: 404 })
      expect(yield* request("DELETE", `${path}/${collaborator.id}`, { token })).toMatchObject({ status: 404 })
      expect(yield* auditActions("collaborator", collaborator.id)).toEqual(["collaborator.create", "collaborator.update", "collaborator.status", "collaborator.delete"])
      // The address is free again once deleted.
      expect((yield* request("POST", path, { token, body: { collaborator: collaboratorBody({ email: "j.rivera@school.test" }) } })).status).toBe(201)
    }))

  it.effect("422 with nothing saved: enumerations, blanks, email format, phone, duplicates, patients", () =>
    Effect.gen(function*() {
      const { ownerParent, otherParent, patientId } = yield* cast
      const token = ownerParent.token
      const bad = yield* request("POST", path, {
        token, body: { collaborator: { first_name: " ", email: "nope", organization: "", type: "teacher", specialization: "x" } }
      })
      expect(bad).toMatchObject({
        status: 422,
        body: { errors: {
          first_name: ["can't be blank"], last_name: ["can't be blank"], email: ["invalid format"], organization: ["can't be blank"],
          type: ["is not included in the list"], specialization: ["is not included in the list"]
        } }
      })
      const foreignPatient = yield* insertPatient({ userId: otherParent.id })
      const refused = yield* request("POST", path, { token, body: { collaborator: collaboratorBody({ phone: "123", patient_ids: [patientId, foreignPatient] }) } })
      expect(refused).toEqual({ status: 422, body: { errors: { phone: ["is invalid"], patient_ids: ["must exist"] } }, headers: refused.headers })
      const unknown = yield* request("POST", path, { token, body: { collaborator: collaboratorBody({ patient_ids: [2_000_000_000] }) } })
      expect(unknown.body).toEqual({ errors: { patient_ids: ["must exist"] } })
      expect((yield* request("GET", path, { token })).body).toMatchObject({ pagination: { total_count: 0 } })

      const first = yield* createCollaborator(token, { email: "same@school.test" })
      const twice = yield* request("POST", path, { token, body: { collaborator: collaboratorBody({ email: "SAME@school.test" }) } })
      expect(twice).toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
      // Another owner may add the same person.
      expect((yield* request("POST", path, { token: otherParent.token, body: { collaborator: collaboratorBody({ email: "same@school.test" }) } })).status).toBe(201)
      const other = yield* createCollaborator(token)
      const clash = yield* request("PUT", `${path}/${other.id}`, { token, body: { collaborator: { email: "same@school.test" } } })
      expect(clash).toMatchObject({ status: 422, body: { errors: { email: ["has already been taken"] } } })
      expect((yield* request("GET", `${path}/${first.id}`, { token })).status).toBe(200)
    }))

  it.effect("access: owner parent, other parent, owner staff, primary provider, other provider, admin", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, otherParent, primary, otherProvider, staffOwner, patientId } = yield* cast
      const byParent = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const byStaff = yield* createCollaborator(staffOwner.token)
      const status = (token: string, method: "GET" | "PUT" | "DELETE", id: number) =>
        Effect.map(request(method, `${path}/${id}`, { token, ...(method === "PUT" ? { body: { collaborator: { title: "Changed" } } } : {}) }), (r) => r.status)

      // Reads: owner, admin, a provider with a care relationship to the linked patient (here its primary provider).
      for (const token of [ownerParent.token, admin, primary.token]) expect(yield* status(token, "GET", byParent.id)).toBe(200)
      for (const token of [otherParent.token, otherProvider.token, staffOwner.token]) {
        expect(yield* request("GET", `${path}/${byParent.id}`, { token })).toMatchObject({ status: 403, body: forbiddenBody })
      }
      // Edits and deletes: owner and admin only.
      expect(yield* request("PUT", `${path}/${byParent.id}`, { token: primary.token, body: { collaborator: { title: "X" } } })).toMatchObject({ status: 403, body: forbiddenBody })
      expect(yield* status(otherParent.token, "DELETE", byParent.id)).toBe(403)
      expect(yield* status(ownerParent.token, "PUT", byParent.id)).toBe(200)
      expect(yield* status(admin, "PUT", byParent.id)).toBe(200)
      expect(yield* status(staffOwner.token, "PUT", byStaff.id)).toBe(200)
      expect(yield* status(ownerParent.token, "GET", byStaff.id)).toBe(403)

      // Lists: the readable ones.
      const ids = (token: string) =>
        Effect.flatMap(clientAs(token), (client) => client.collaborators.list({ urlParams: {} })).pipe(Effect.map((list) => list.collaborators.map((c) => c.id)))
      expect(yield* ids(ownerParent.token)).toEqual([byParent.id])
      expect(yield* ids(primary.token)).toEqual([byParent.id])
      expect(yield* ids(staffOwner.token)).toEqual([byStaff.id])
      expect(yield* ids(otherParent.token)).toEqual([])
      expect(yield* ids(otherProvider.token)).toEqual([])
      expect(yield* ids(admin)).toEqual(expect.arrayContaining([byParent.id, byStaff.id]))
      // Another family's patient as a filter: 404, as if it did not exist.
      expect(yield* request("GET", `${path}?patient_id=${patientId}`, { token: otherParent.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      // Tokens: owner, admin, primary provider.
      for (const token of [ownerParent.token, admin, primary.token]) yield* issueToken(token, byParent.id, patientId, "social_skills")
      const tokenPath = `/v1/collaborator_assessments/token?collaborator_id=${byParent.id}&patient_id=${patientId}&assessment_type=social_skills`
      // Other providers: the patient is not theirs (404) until an appointment makes a care relationship; then they read and assess.
      expect(yield* request("GET", tokenPath, { token: otherProvider.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      for (const provider of [otherProvider, staffOwner]) yield* insertAppointment(patientId, provider.providerId!)
      for (const token of [otherProvider.token, staffOwner.token]) {
        expect(yield* status(token, "GET", byParent.id)).toBe(200)
        yield* issueToken(token, byParent.id, patientId, "social_skills")
      }
      // Assessment links are clinical content: front desk gets the answer of an unknown patient;
      // the collaborator itself they may not read (the collaborator's rule).
      const frontDesk = yield* signedIn("support")
      expect(yield* request("GET", tokenPath, { token: frontDesk.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* request("GET", `${path}/${byParent.id}`, { token: frontDesk.token })).toMatchObject({ status: 403, body: forbiddenBody })
      expect(yield* status(otherParent.token, "DELETE", byParent.id)).toBe(403)
      expect(yield* status(ownerParent.token, "DELETE", byParent.id)).toBe(204)
    }))

  it.effect("linked patients: a parent sees and replaces only their own; admins link any", () =>
    Effect.gen(function*() {
      const { admin, ownerParent, otherParent, patientId } = yield* cast
      const second = yield* insertPatient({ userId: ownerParent.id })
      const foreign = yield* insertPatient({ userId: otherParent.id })
      const collaborator = yield* createCollaborator(ownerParent.token, { patient_ids: [patientId] })
      const asAdmin = yield* clientAs(admin)
      const byAdmin = yield* asAdmin.collaborators.update({ path: { id: collaborator.id }, payload: { collaborator: { patient_ids: [patientId, foreign] } } })
      expect(byAdmin.collaborator.patient_ids).toEqual([patientId, foreign].sort((a, b) => a - b))
      const mine = yield* (yield* clientAs(ownerParent.token)).collaborators.update({ path: { id: collaborator.id }, payload: { collaborator: { patient_ids: [second] } } })
      expect(mine.collaborator.patient_ids).toEqual([second])
      const all = yield* asAdmin.collaborators.show({ path: { id: collaborator.id } })
      expect(all.collaborator.patient_ids).toEqual([second, foreign].sort((a, b) => a - b))
    }))

  it.effect("status machine: pending → active | declined; active ⇄ inactive; suspended and back by admins only", () =>
    Effect.gen(function*() {
      const { admin, ownerParent } = yield* cast
      const token = ownerParent.token
      const move = (id: number, status: string, as = token) => request("PUT", `${path}/${id}`, { token: as, body: { collaborator: { status } } })
      const a = yield* createCollaborator(token)
      expect((yield* move(a.id, "inactive")).body).toEqual({ errors: { status: ["cannot change from pending to inactive"] } })
      expect((yield* move(a.id, "active")).status).toBe(200)
      expect((yield* move(a.id, "inactive")).status).toBe(200)
      expect((yield* move(a.id, "active")).status).toBe(200)
      expect((yield* move(a.id, "pending")).body).toEqual({ errors: { status: ["cannot change from active to pending"] } })
      expect((yield* move(a.id, "suspended")).body).toEqual({ errors: { status: ["cannot change from active to suspended"] } })
      expect((yield* move(a.id, "suspended", admin)).status).toBe(200)
      expect((yield* move(a.id, "active")).body).toEqual({ errors: { status: ["cannot change from suspended to active"] } })
      expect((yield* move(a.id, "active", admin)).status).toBe(200)
      const b = yield* createCollaborator(token)
      expect((yield* move(b.id, "declined")).status).toBe(200)
      expect(yield* move(b.id, "active")).toMatchObject({ status: 422, body: { errors: { status: ["cannot change from declined to active"] } } })
      expect((yield* move(b.id, "bogus")).body).toEqual({ errors: { status: ["is not included in the list"] } })
    }))
})
