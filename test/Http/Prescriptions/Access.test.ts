/** Record-level access to prescriptions (general §5.4): parent, other provider, supervisor, support, admin. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import {
  adminToken, body, create, insertPatient, medicationId, prescriber, prescriptionFor, prescriptionsPath, put, signedIn, written
} from "./helpers.js"

const refusal = { errors: "You are not authorized to perform this action." }

layer(TestApp())("prescription access", (it) => {
  it.effect("the access matrix: parent, other provider, supervisor, support and billing, admin", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const supervisor = yield* prescriber(admin, { role: "supervisor" })
      const writer = yield* prescriber(admin, { supervisorId: supervisor.id })
      const other = yield* prescriber(admin)
      const parent = yield* signedIn("parent")
      const otherParent = yield* signedIn("parent")
      const support = yield* signedIn("support")
      const billing = yield* signedIn("billing")
      const child = yield* insertPatient({ userId: parent.id, providerId: writer.id })
      const stranger = yield* insertPatient({ userId: otherParent.id, providerId: other.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const id = yield* written(writer.token, prescriptionFor(child, sertraline))
      const strangersId = yield* written(other.token, prescriptionFor(stranger, sertraline))
      const show = (token: string, target = id) => request("GET", `${prescriptionsPath}/${target}`, { token })
      const listIds = (token: string, urlParams: { patient_id?: PatientId } = {}) =>
        Effect.gen(function*() {
          const client = yield* clientAs(token)
          const list = yield* client.prescriptions.list({ urlParams })
          return list.prescriptions.map((p) => p.id)
        })

      // Reading.
      expect((yield* show(admin)).status).toBe(200)
      expect((yield* show(writer.token)).status).toBe(200)
      expect((yield* show(supervisor.token)).status).toBe(200)
      expect((yield* show(parent.token)).status).toBe(200)
      // Whoever does not see the patient's clinical content gets the answer of an unknown id.
      const unknown = { status: 404, body: { errors: "Prescription not found" } }
      expect(yield* show(other.token)).toMatchObject(unknown)
      expect(yield* show(support.token)).toMatchObject(unknown)
      expect(yield* show(billing.token)).toMatchObject(unknown)
      expect(yield* show(supervisor.token, strangersId)).toMatchObject(unknown)
      // A parent never learns that another family's prescription exists.
      expect(yield* show(parent.token, strangersId)).toMatchObject({ status: 404, body: { errors: "Prescription not found" } })

      // Lists hold only what the caller may read.
      expect(yield* listIds(admin, { patient_id: child })).toEqual([id])
      expect(yield* listIds(writer.token)).toEqual([id])
      expect(yield* listIds(supervisor.token)).toEqual([id])
      expect(yield* listIds(other.token)).toEqual([strangersId])
      expect(yield* listIds(parent.token)).toEqual([id])
      expect(yield* listIds(otherParent.token)).toEqual([strangersId])
      expect(yield* request("GET", prescriptionsPath, { token: support.token })).toMatchObject({ status: 403, body: refusal })
      expect(yield* request("GET", `${prescriptionsPath}?patient_id=${stranger}`, { token: parent.token })).toMatchObject({
        status: 404, body: { errors: "Patient not found" }
      })

      // Writing: only the prescriber (and admins); a parent gets 404 for another family, 403 for their own.
      expect((yield* put(writer.token, id, { dosage: "75 mg" })).status).toBe(200)
      expect((yield* put(admin, id, { dosage: "100 mg" })).status).toBe(200)
      for (const [token, answer] of [[other.token, unknown], [support.token, unknown], [supervisor.token, { status: 403, body: refusal }], [parent.token, { status: 403, body: refusal }]] as const) {
        expect(yield* put(token, id, { dosage: "1 mg" })).toMatchObject(answer)
        expect(yield* request("DELETE", `${prescriptionsPath}/${id}`, { token })).toMatchObject(answer)
        expect(yield* request("POST", `${prescriptionsPath}/${id}/refill`, { token })).toMatchObject(answer)
      }
      expect(yield* put(parent.token, id, { patient_id: stranger })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* put(parent.token, strangersId, { dosage: "1 mg" })).toMatchObject({ status: 404, body: { errors: "Prescription not found" } })
      expect(yield* create(parent.token, body(child, sertraline))).toMatchObject({ status: 403, body: refusal })
      expect(yield* create(parent.token, body(stranger, sertraline))).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* create(support.token, body(child, sertraline))).toMatchObject({ status: 403, body: refusal })
      expect(yield* put(writer.token, id, { provider_id: other.id })).toMatchObject({
        status: 422, body: { errors: { provider_id: ["can only be changed by an admin"] } }
      })
      const moved = yield* (yield* clientAs(admin)).prescriptions.update({ path: { id }, payload: { prescription: { provider_id: other.id } } })
      expect(moved.prescription.provider_id).toBe(other.id)
      // Now the other provider writes it and the first one no longer reads it.
      expect((yield* put(other.token, id, { dosage: "25 mg" })).status).toBe(200)
      expect(yield* show(writer.token)).toMatchObject({ status: 403, body: refusal })
      // Nothing the refusals touched changed.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ dosage: string; status: string }>`SELECT dosage, status FROM prescriptions WHERE id = ${id}`
      expect(row).toEqual({ dosage: "25 mg", status: "active" })
    }))
})
