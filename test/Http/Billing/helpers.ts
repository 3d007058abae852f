/** Providers with NPIs, patients with addresses, completed appointments, plans and coverage for the claim tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CreateClaimRequest } from "../../../src/Api/Billing/Claims.js"
import type { CreateInsurancePlanRequest } from "../../../src/Api/Billing/Insurance.js"
import type { AppointmentId, InsurancePlanId, PatientId, ProviderId } from "../../../src/Domain/Ids.js"
import { npiCheckDigit } from "../../../src/Domain/Providers/Npi.js"
import type { BillingSettings } from "../../../src/Services/AppConfig.js"
import type { AppointmentStatus } from "../../../src/Domain/Scheduling/Scheduling.js"
import { clientAs, request } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { makeProvider } from "../Providers/helpers.js"

export { adminToken, insertUser } from "../Providers/helpers.js"
export { password } from "../Providers/helpers.js"

/** The billing settings of `npm start` (the defaults of src/Layers/Config.ts), with changes. */
export const billingSettings = (changes: Partial<BillingSettings> = {}): BillingSettings => ({
  npi: "1234567893", taxId: "123456789", name: "Care Coordination Clinic", address: "100 Main St", city: "Sacramento", state: "CA",
  zip: "958140000", taxonomy: "101YM0800X", submitterId: "CCAPI", contactName: "Billing Office", contactPhone: "9165550100",
  receiverId: "CLEARINGHOUSE", receiverName: "Clearinghouse", usage: "T", extraCptCodes: [], maxDocumentBytes: 10 * 1024 * 1024,
  ...changes
})

let counter = 0
const dayMs = 86_400_000

/** A provider profile with a valid NPI (unique per call); ids. */
export const providerWithNpi = (token: string, name: { first_name?: string; last_name?: string } = {}) =>
  Effect.gen(function*() {
    const provider = yield* makeProvider(token, "provider", name)
    const nine = String(100_000_000 + provider.id * 7919 + ++counter).slice(0, 9)
    const npi = `${nine}${npiCheckDigit(nine)}`
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE providers SET npi = ${npi} WHERE id = ${provider.id}`.pipe(Effect.orDie)
    return { ...provider, npi }
  })

/** A patient with what an 837P needs (date of birth, address), linked to `userId` when given. */
export const insertPatient = (options: { userId?: number | null; first?: string; last?: string; dateOfBirth?: string; address?: boolean } = {}) => {
  const withAddress = options.address ?? true
  return fixtures.insertPatient({
    first_name: options.first ?? "Pat",
    last_name: options.last ?? `Claimant${++counter}`,
    date_of_birth: options.dateOfBirth ?? "1990-02-03",
    gender: "female",
    address: withAddress ? "12 Oak Ave" : null,
    city: withAddress ? "Davis" : null,
    state: withAddress ? "CA" : null,
    zip: withAddress ? "95616" : null,
    user_id: options.userId ?? null
  })
}

/**
 * An appointment `daysAgo` days back at noon UTC (a day in Los Angeles too), completed unless
 * told otherwise; its id and its day (YYYY-MM-DD).
 */
export const insertAppointment = (patientId: number, providerId: number, options: { daysAgo?: number; status?: AppointmentStatus } = {}) => {
  const base = Math.floor(Date.now() / dayMs) * dayMs - (options.daysAgo ?? 3) * dayMs
  // Distinct hours so one provider's appointments never overlap.
  const scheduledAt = new Date(base + 17 * 3_600_000 + (++counter % 50) * 60_000 * 5)
  return fixtures.insertAppointment({ patientId, providerId, scheduledAt, status: options.status ?? "completed" })
}

/** An insurance plan made through the typed client (commercial, a unique name and payer id); its id. */
export const createPlan = (token: string, plan: Partial<CreateInsurancePlanRequest["insurance_plan"]> = {}) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const created = yield* client.insurancePlans.create({
      payload: { insurance_plan: { name: `Plan ${++counter}`, payer_id: `P${counter}`, claim_filing_indicator: "CI", ...plan } }
    })
    return created.insurance_plan.id
  }).pipe(Effect.orDie)

export const setCoverage = (token: string, patientId: number, coverage: Record<string, unknown>) =>
  request("PUT", `/v1/clinic/patients/${patientId}/coverage`, { token, body: { coverage } })

export const claimsPath = "/v1/admin/clinic/claims"

export const createClaim = (token: string, claim: Record<string, unknown>) => request("POST", claimsPath, { token, body: { claim } })

export interface ClaimSetup {
  readonly patientId: PatientId
  readonly providerId: ProviderId
  readonly appointmentId: AppointmentId
  readonly day: string
  readonly planId: InsurancePlanId
}

/** A patient with coverage, a provider with an NPI and a completed appointment between them. */
export const setup = (token: string, options: { planId?: InsurancePlanId; guardian?: boolean; userId?: number | null } = {}) =>
  Effect.gen(function*() {
    const provider = yield* providerWithNpi(token)
    const patientId = yield* insertPatient({ userId: options.userId ?? null, ...(options.guardian === true ? { dateOfBirth: "2015-06-01" } : {}) })
    const planId = options.planId ?? (yield* createPlan(token))
    const coverage = options.guardian === true
      ? { insurance_plan_id: planId, member_id: `M${patientId}`, relationship: "child", subscriber: { first_name: "Morgan", last_name: "Guardian", date_of_birth: "1985-09-09", gender: "F" } }
      : { insurance_plan_id: planId, member_id: `M${patientId}`, group_number: "G-1" }
    const covered = yield* setCoverage(token, patientId, coverage)
    if (covered.status !== 200) return yield* Effect.dieMessage(`coverage: ${covered.status} ${JSON.stringify(covered.body)}`)
    const appointment = yield* insertAppointment(patientId, provider.id)
    return { patientId, providerId: provider.id, appointmentId: appointment.id, day: appointment.day, planId } satisfies ClaimSetup
  })

export type NewClaim = CreateClaimRequest["claim"]

/** The claim of a setup for the typed client: 90837, F32.9, 150 unless `extra` says otherwise. */
export const claimOf = (s: ClaimSetup, extra: Partial<NewClaim> = {}): NewClaim => ({
  patient_id: s.patientId,
  provider_id: s.providerId,
  appointment_id: s.appointmentId,
  cpt_code: "90837",
  diagnosis_codes: ["F32.9"],
  service_date: s.day,
  amount: 150,
  ...extra
})

/** The same claim as a raw request body, for pinning exact answers and sending what the type refuses. */
export const claimBody = (s: ClaimSetup, extra: Record<string, unknown> = {}) => ({ ...claimOf(s), ...extra })

/** A draft claim made through the typed client. */
export const newClaim = (token: string, s: ClaimSetup, extra: Partial<NewClaim> = {}) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    return (yield* client.claims.create({ payload: { claim: claimOf(s, extra) } })).claim
  }).pipe(Effect.orDie)

/** A claim in `ready`; its id. */
export const readyClaim = (token: string, s: ClaimSetup, extra: Partial<NewClaim> = {}) =>
  Effect.gen(function*() {
    const { id } = yield* newClaim(token, s, extra)
    const client = yield* clientAs(token)
    yield* client.claims.update({ path: { id }, payload: { claim: { status: "ready" } } })
    return id
  }).pipe(Effect.orDie)
