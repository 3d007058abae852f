/** The daily expiry job: through the job queue, active prescriptions past their end date become expired, once. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { jobTasks } from "../../../src/Layers/Main.js"
import { calendarDayIn } from "../../../src/Domain/Time.js"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { Jobs } from "../../../src/Services/Jobs.js"
import { expirePrescriptions } from "../../../src/Services/Prescriptions/PrescriptionTasks.js"
import type { PrescriptionId } from "../../../src/Domain/Ids.js"
import { clientAs, TestApp } from "../../support/app.js"
import { insertEndedPrescriptions } from "../../support/fixtures.js"
import { adminToken, auditActions, historyRows, insertPatient, medicationId, prescriber, prescriptionFor, put, written } from "./helpers.js"

const dayMs = 86_400_000

const statusOf = (token: string, id: PrescriptionId) =>
  Effect.flatMap(clientAs(token), (client) => client.prescriptions.show({ path: { id } })).pipe(Effect.map((r) => r.prescription.status))

layer(TestApp())("prescription expiry job", (it) => {
  it.effect("expires active prescriptions whose end date has passed (clinic day), through the queue, and only once", () =>
    Effect.gen(function*() {
      expect(jobTasks).toContain(expirePrescriptions)
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      const now = yield* Clock.currentTimeMillis
      const zone = (yield* AppConfig).clinicTimeZone
      const today = calendarDayIn(now, zone)
      const yesterday = calendarDayIn(now - dayMs, zone)
      const make = (end: string) => written(doctor.token, prescriptionFor(patientId, sertraline, { start_date: "2025-01-01", end_date: end, prescription_date: "2025-01-01" }))
      const past = yield* make(yesterday)
      const endsToday = yield* make(today)
      const future = yield* make("2999-01-01")
      const held = yield* make("2025-02-01")
      yield* (yield* clientAs(doctor.token)).prescriptions.update({ path: { id: held }, payload: { prescription: { status: "on_hold" } } })
      const noEnd = yield* written(doctor.token, prescriptionFor(patientId, sertraline))

      const jobs = yield* Jobs
      yield* jobs.enqueue(expirePrescriptions, {})
      yield* runDueJobs([expirePrescriptions])
      expect(yield* statusOf(doctor.token, past)).toBe("expired")
      for (const id of [endsToday, future, noEnd]) expect(yield* statusOf(doctor.token, id)).toBe("active")
      expect(yield* statusOf(doctor.token, held)).toBe("on_hold")
      expect((yield* historyRows(past)).map((r) => `${r.event}:${r.status}`)).toEqual(["created:active", "status_changed:expired"])
      expect(yield* auditActions("prescription", past)).toEqual(["prescription.create", "prescription.expired"])
      const sql = yield* SqlClient.SqlClient
      const [actor] = yield* sql<{ actor_id: number | null; from_status: string }>`SELECT actor_id, from_status FROM prescription_history
        WHERE prescription_id = ${past} AND event = 'status_changed'`
      expect(actor).toEqual({ actor_id: null, from_status: "active" })

      // A second run (a retry, or tomorrow's) expires nothing twice; expired is final.
      yield* jobs.enqueue(expirePrescriptions, {})
      yield* runDueJobs([expirePrescriptions])
      expect(yield* historyRows(past)).toHaveLength(2)
      expect(yield* put(doctor.token, past, { status: "active" })).toMatchObject({
        status: 422, body: { errors: { status: ["can't change from expired to active"] } }
      })
    }))

  it.effect("expires more than one batch in a run", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const doctor = yield* prescriber(admin)
      const patientId = yield* insertPatient({ providerId: doctor.id })
      const sertraline = yield* medicationId("Sertraline 50 mg tablet")
      yield* insertEndedPrescriptions({ patientId, providerId: doctor.id, medicationId: sertraline, count: 1203 })
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Jobs
      yield* jobs.enqueue(expirePrescriptions, {})
      yield* runDueJobs([expirePrescriptions])
      const [counts] = yield* sql<{ expired: number; active: number; history: number }>`SELECT
          count(*) FILTER (WHERE status = 'expired')::int AS expired, count(*) FILTER (WHERE status = 'active')::int AS active,
          (SELECT count(*)::int FROM prescription_history h JOIN prescriptions r ON r.id = h.prescription_id WHERE r.patient_id = ${patientId}) AS history
        FROM prescriptions WHERE patient_id = ${patientId}`
      expect(counts).toEqual({ expired: 1203, active: 0, history: 1203 })
    }))
})
