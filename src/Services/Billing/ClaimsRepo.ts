/** SQL shared by the billing services: claim rows with the people's names, and their representation. */
import { amountOfCents, centsOfDecimal, Claim, type ClaimStatus } from "../../Domain/Billing/Claim.js"
import type { AppointmentId, ClaimId, InsurancePlanId, PatientId, ProviderId } from "../../Domain/Ids.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"

export interface ClaimRow {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number
  readonly appointment_id: number
  readonly claim_number: string
  readonly cpt_code: string
  readonly modifiers: ReadonlyArray<string>
  readonly place_of_service: string
  readonly diagnosis_codes: ReadonlyArray<string>
  readonly service_date: string
  readonly amount: string
  readonly status: ClaimStatus
  readonly submission_date: string | null
  readonly payment_amount: string | null
  readonly payment_date: string | null
  readonly denial_reason: string | null
  readonly insurance_plan_id: number | null
  readonly edi_batch_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly provider_first_name: string
  readonly provider_last_name: string
}

/** Dates as `YYYY-MM-DD` and amounts as exact decimal text (never through a float). */
export const claimColumns = `c.id, c.patient_id, c.provider_id, c.appointment_id, c.claim_number, c.cpt_code, c.modifiers,
  c.place_of_service, c.diagnosis_codes, to_char(c.service_date, 'YYYY-MM-DD') AS service_date, c.amount::text AS amount,
  c.status, to_char(c.submission_date, 'YYYY-MM-DD') AS submission_date, c.payment_amount::text AS payment_amount,
  to_char(c.payment_date, 'YYYY-MM-DD') AS payment_date, c.denial_reason, c.insurance_plan_id, b.batch_id AS edi_batch_id,
  c.created_at, c.updated_at, pa.first_name AS patient_first_name, pa.last_name AS patient_last_name,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name`

export const claimFrom = `claims c JOIN patients pa ON pa.id = c.patient_id JOIN providers p ON p.id = c.provider_id
  JOIN users pu ON pu.id = p.user_id JOIN appointments ap ON ap.id = c.appointment_id
  LEFT JOIN edi_batches b ON b.id = c.edi_batch_id`

export const toClaim = (row: ClaimRow): Claim =>
  Claim.make({
    id: row.id as ClaimId,
    patient_id: row.patient_id as PatientId,
    provider_id: row.provider_id as ProviderId,
    appointment_id: row.appointment_id as AppointmentId,
    claim_number: row.claim_number,
    cpt_code: row.cpt_code,
    modifiers: row.modifiers,
    place_of_service: row.place_of_service,
    diagnosis_codes: row.diagnosis_codes,
    service_date: row.service_date,
    amount: amountOfCents(centsOfDecimal(row.amount)),
    status: row.status,
    submission_date: row.submission_date,
    payment_amount: row.payment_amount === null ? null : amountOfCents(centsOfDecimal(row.payment_amount)),
    payment_date: row.payment_date,
    denial_reason: row.denial_reason,
    insurance_plan_id: row.insurance_plan_id as InsurancePlanId | null,
    edi_batch_id: row.edi_batch_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)
