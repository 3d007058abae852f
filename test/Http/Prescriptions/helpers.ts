/** Prescribers, supervisors, parents and patients for the prescription tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CreatePrescriptionRequest } from "../../../src/Api/Prescriptions/Prescriptions.js"
import { MedicationId, type PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn } from "../../support/app.js"
import { insertPatient as insertBillingPatient } from "../Billing/helpers.js"
import { insertUser, makeProvider, password } from "../Providers/helpers.js"

export { adminToken, auditActions } from "../Providers/helpers.js"
/**
 * A patient; `providerId` makes that provider its primary provider (a care relationship: a
 * prescriber writes only for patients they may see).
 */
export const insertPatient = (options: Parameters<typeof insertBillingPatient>[0] & { providerId?: number } = {}) =>
  Effect.gen(function*() {
    const { providerId, ...rest } = options
    const id = yield* insertBillingPatient(rest)
    if (providerId !== undefined) {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE patients SET provider_id = ${providerId} WHERE id = ${id}`.pipe(Effect.orDie)
    }
    return id
  })

export const prescriptionsPath = "/v1/prescriptions"
let counter = 0

/** A provider (or supervisor) with a license number, signed in; ids and token. */
export const prescriber = (adminToken: string, options: { role?: "provider" | "supervisor"; license?: string | null; supervisorId?: number } = {}) =>
  Effect.gen(function*() {
    const email = `prescriber${++counter}.${Date.now()}@rx.test`
    const profile = yield* makeProvider(adminToken, options.role ?? "provider", { email, first_name: "Riley", last_name: `Prescriber${counter}` })
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE providers SET license_number = ${options.license === undefined ? `LIC-${counter}` : options.license},
      supervisor_id = ${options.supervisorId ?? null} WHERE id = ${profile.id}`.pipe(Effect.orDie)
    const token = yield* signIn(email, password)
    return { id: profile.id, userId: profile.userId, token }
  })

/** A signed-in user of any role; id and token. */
export const signedIn = (role: "parent" | "support" | "billing") =>
  Effect.gen(function*() {
    const email = `${role}${++counter}.${Date.now()}@rx.test`
    const id = yield* insertUser({ email, role })
    return { id, token: yield* signIn(email, password) }
  })

export const medicationId = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`SELECT id FROM medications WHERE name = ${name}`.pipe(Effect.orDie)
    if (row === undefined) return yield* Effect.dieMessage(`no medication ${name}`)
    return MedicationId.make(row.id)
  })

export type NewPrescription = CreatePrescriptionRequest["prescription"]

/** A valid prescription for the typed client: once daily, 30 of them, dated 2026-01-05 unless `extra` says otherwise. */
export const prescriptionFor = (patientId: PatientId, medication: MedicationId, extra: Partial<NewPrescription> = {}): NewPrescription => ({
  patient_id: patientId,
  medication_id: medication,
  dosage: "50 mg",
  frequency: "once daily",
  quantity: 30,
  prescription_date: "2026-01-05",
  ...extra
})

/** The same as a raw body, which `extra` may make invalid. */
export const body = (patientId: PatientId, medication: MedicationId, extra: Record<string, unknown> = {}) => ({
  ...prescriptionFor(patientId, medication),
  ...extra
})

export const create = (token: string, prescription: Record<string, unknown>) => request("POST", prescriptionsPath, { token, body: { prescription } })
export const put = (token: string, id: number, prescription: Record<string, unknown>) =>
  request("PUT", `${prescriptionsPath}/${id}`, { token, body: { prescription } })

export type PrescriptionBody = { prescription: Record<string, unknown> & { id: number; status: string; refills_remaining: number } }

/** A prescription written by `token` through the typed client; its id. */
export const written = (token: string, prescription: NewPrescription) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const created = yield* client.prescriptions.create({ payload: { prescription } })
    return created.prescription.id
  }).pipe(Effect.orDie)

export const historyRows = (prescriptionId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ event: string; status: string; dosage: string }>`SELECT event, status, dosage FROM prescription_history
      WHERE prescription_id = ${prescriptionId} ORDER BY id`.pipe(Effect.orDie)
  })
