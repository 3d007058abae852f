/** A patient's medication history (general §4.2): grouped by medication, newest first, with dosage and status changes. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertAppointment } from "../Billing/helpers.js"
import { adminToken, insertPatient, medicationId, prescriber, prescriptionFor, put, signedIn, written } from "./helpers.js"

interface HistoryBody {
  patient_id: number
  medications: Array<{
    medication: { id: number; name: string }
    first_prescribed: string
    last_prescribed: string
    prescriptions: Array<{ id: number; status: string; dosage: string; history: Array<Record<string, unknown>> }>
  }>
  pagination: Record<string, number>
}

layer(TestApp())("medication history", (it) => {
  it.effect("groups by medication, newest first, with the history of dosage and status changes; pages by medication", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const parent = yield* signedIn("parent")
      const otherParent = yield* signedIn("parent")
      const patientId = yield* insertPatient({ userId: parent.id, providerId: doctor.id })
      // The doctor's appointment with the patient: the care relationship under which a provider reads the history.
      yield* insertAppointment(patientId, doctor.id)
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const guanfacine = yield* medicationId("Guanfacine ER 1 mg tablet")
      const first = yield* written(doctor.token, prescriptionFor(patientId, sertraline, { prescription_date: "2025-06-01" }))
      yield* put(doctor.token, first, { dosage: "75 mg" })
      yield* put(doctor.token, first, { status: "discontinued" })
      const second = yield* written(doctor.token, prescriptionFor(patientId, sertraline, { prescription_date: "2025-09-01", dosage: "100 mg" }))
      const third = yield* written(doctor.token, prescriptionFor(patientId, guanfacine, { prescription_date: "2025-12-01", dosage: "1 mg", frequency: "at bedtime" }))
      yield* put(doctor.token, third, { status: "on_hold" })

      const path = `/v1/clinic/patients/${patientId}/medication_history`
      const response = yield* request("GET", path, { token: parent.token })
      expect(response.status).toBe(200)
      const history = response.body as HistoryBody
      expect(history.patient_id).toBe(patientId)
      expect(history.pagination).toEqual({ current_page: 1, total_pages: 1, total_count: 2, per_page: 25 })
      expect(history.medications.map((m) => [m.medication.id, m.first_prescribed, m.last_prescribed])).toEqual([
        [guanfacine, "2025-12-01", "2025-12-01"],
        [sertraline, "2025-06-01", "2025-09-01"]
      ])
      const [guanfacineGroup, sertralineGroup] = history.medications
      expect(Object.keys(guanfacineGroup!).sort()).toEqual(["first_prescribed", "last_prescribed", "medication", "prescriptions"])
      expect(sertralineGroup!.prescriptions.map((p) => [p.id, p.status, p.dosage])).toEqual([[second, "active", "100 mg"], [first, "discontinued", "75 mg"]])
      const firstHistory = sertralineGroup!.prescriptions[1]!.history
      expect(firstHistory.map((h) => [h.event, h.from_status, h.status, h.dosage])).toEqual([
        ["created", null, "active", "50 mg"],
        ["changed", null, "active", "75 mg"],
        ["status_changed", "active", "discontinued", "75 mg"]
      ])
      expect(Object.keys(firstHistory[0]!).sort()).toEqual([
        "dosage", "end_date", "event", "frequency", "from_status", "quantity", "recorded_at", "refills_remaining", "start_date", "status"
      ])
      expect(guanfacineGroup!.prescriptions[0]).toMatchObject({
        id: third, status: "on_hold", prescription_date: "2025-12-01", frequency: "at bedtime", provider: { id: doctor.id }
      })
      // Paged by medication.
      const page2 = yield* (yield* clientAs(admin)).medicationHistory.show({ path: { id: patientId }, urlParams: { page: 2, page_size: 1 } })
      expect(page2.medications.map((m) => m.medication.id)).toEqual([sertraline])
      expect(page2.pagination).toEqual({ current_page: 2, total_pages: 2, total_count: 2, per_page: 1 })
      // Staff see it; another family's parent and unknown patients get 404.
      expect((yield* request("GET", path, { token: doctor.token })).status).toBe(200)
      expect(yield* request("GET", path, { token: otherParent.token })).toMatchObject({ status: 404, body: { errors: "Patient not found" } })
      expect(yield* request("GET", "/v1/clinic/patients/999999/medication_history", { token: admin })).toMatchObject({
        status: 404, body: { errors: "Patient not found" }
      })
      // A patient without prescriptions has an empty history.
      const empty = yield* insertPatient()
      expect((yield* request("GET", `/v1/clinic/patients/${empty}/medication_history`, { token: admin })).body).toEqual({
        patient_id: empty, medications: [], pagination: { current_page: 1, total_pages: 0, total_count: 0, per_page: 25 }
      })
    }))
})
