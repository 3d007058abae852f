/** Families, staff and patients for the clinic patient tests, made the way the clinic makes them. */
import { Effect } from "effect"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import { PatientId } from "../../../src/Domain/Ids.js"
import { request, signIn } from "../../support/app.js"
import { insertUser, makeProvider, password } from "../Providers/helpers.js"

let counter = 0

/** A signed-in user of the role: id and token. */
export const signedIn = (role: Role, names: { first_name?: string; last_name?: string } = {}) =>
  Effect.gen(function*() {
    const email = `${role}${++counter}.${Date.now()}@patients.test`
    const id = yield* insertUser({ email, role, ...names })
    return { id, token: yield* signIn(email, password) }
  })

export const adminToken = signIn()

/** A provider profile named as given: its id. */
export const provider = (token: string, first_name: string, last_name: string) =>
  Effect.map(makeProvider(token, "provider", { first_name, last_name }), (p) => p.id)

export const createPatient = (token: string, patient: Record<string, unknown>) =>
  request("POST", "/v1/clinic/patients", { token, body: { patient: { date_of_birth: "2015-06-01", ...patient } } })

/** A patient created by staff: its id. */
export const newPatient = (token: string, patient: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const created = yield* createPatient(token, { first_name: "Pat", last_name: `Ient${++counter}`, ...patient })
    if (created.status !== 201) return yield* Effect.dieMessage(`patient create failed: ${created.status} ${JSON.stringify(created.body)}`)
    return PatientId.make((created.body as { patient: { id: number } }).patient.id)
  })

export const patientOf = (body: unknown) => (body as { patient: Record<string, unknown> }).patient
export const namesOf = (body: unknown) => (body as { patients: Array<{ first_name: string; last_name: string }> }).patients.map((p) => `${p.first_name} ${p.last_name}`)

export const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
export const patientNotFound = { errors: "Patient not found" }
export const staffRequired = { errors: "Staff access required" }
