/** SQL shared by the prescription services: rows with the medication and the people's names, and their representations. */
import type { MedicationId, PatientId, PrescriptionId, ProviderId } from "../../Domain/Ids.js"
import { Medication, MedicationSummary, Prescription, type PrescriptionStatus } from "../../Domain/Prescriptions/Prescription.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"

export interface MedicationRow {
  readonly id: number
  readonly name: string
  readonly generic_name: string
  readonly brand_names: ReadonlyArray<string>
  readonly strength: string
  readonly dosage_form: string
  readonly rxnorm_cui: string | null
  readonly active: boolean
  readonly created_at: Date
  readonly updated_at: Date
}

export const medicationColumns = "m.id, m.name, m.generic_name, m.brand_names, m.strength, m.dosage_form, m.rxnorm_cui, m.active, m.created_at, m.updated_at"

export const toMedication = (row: MedicationRow): Medication =>
  Medication.make({ ...row, id: row.id as MedicationId }, true)

export const toMedicationSummary = (row: {
  readonly medication_id: number
  readonly medication_name: string
  readonly generic_name: string
  readonly brand_names: ReadonlyArray<string>
  readonly strength: string
  readonly dosage_form: string
}): MedicationSummary =>
  MedicationSummary.make({
    id: row.medication_id as MedicationId,
    name: row.medication_name,
    generic_name: row.generic_name,
    brand_names: row.brand_names,
    strength: row.strength,
    dosage_form: row.dosage_form
  }, true)

export interface PrescriptionRow {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number
  readonly medication_id: number
  readonly dosage: string
  readonly frequency: string
  readonly quantity: number
  readonly refills: number
  readonly refills_remaining: number
  readonly instructions: string | null
  readonly prescription_date: string
  readonly status: PrescriptionStatus
  readonly start_date: string | null
  readonly end_date: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly medication_name: string
  readonly generic_name: string
  readonly brand_names: ReadonlyArray<string>
  readonly strength: string
  readonly dosage_form: string
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly patient_user_id: number | null
  readonly provider_first_name: string
  readonly provider_last_name: string
  readonly provider_supervisor_id: number | null
}

/** Dates as `YYYY-MM-DD`. */
export const prescriptionColumns = `r.id, r.patient_id, r.provider_id, r.medication_id, r.dosage, r.frequency, r.quantity, r.refills,
  r.refills_remaining, r.instructions, to_char(r.prescription_date, 'YYYY-MM-DD') AS prescription_date, r.status,
  to_char(r.start_date, 'YYYY-MM-DD') AS start_date, to_char(r.end_date, 'YYYY-MM-DD') AS end_date, r.created_at, r.updated_at,
  m.name AS medication_name, m.generic_name, m.brand_names, m.strength, m.dosage_form,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name, pa.user_id AS patient_user_id,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.supervisor_id AS provider_supervisor_id`

export const prescriptionFrom = `prescriptions r JOIN medications m ON m.id = r.medication_id JOIN patients pa ON pa.id = r.patient_id
  JOIN providers p ON p.id = r.provider_id JOIN users pu ON pu.id = p.user_id`

export const toPrescription = (row: PrescriptionRow): Prescription =>
  Prescription.make({
    id: row.id as PrescriptionId,
    patient_id: row.patient_id as PatientId,
    provider_id: row.provider_id as ProviderId,
    medication_id: row.medication_id as MedicationId,
    dosage: row.dosage,
    frequency: row.frequency,
    quantity: row.quantity,
    refills: row.refills,
    refills_remaining: row.refills_remaining,
    instructions: row.instructions,
    prescription_date: row.prescription_date,
    status: row.status,
    start_date: row.start_date,
    end_date: row.end_date,
    created_at: row.created_at,
    updated_at: row.updated_at,
    medication: toMedicationSummary(row),
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** Appends one history row per prescription id, copying what the prescription says now (SQL text; ids and actor bound by the caller). */
export const historyInsert = `INSERT INTO prescription_history (prescription_id, patient_id, medication_id, event, from_status, status, dosage,
    frequency, quantity, refills_remaining, start_date, end_date, actor_id)`
