/** Medications and prescriptions (general §2.8): representations, the status machine and the common values. */
import { Schema } from "effect"
import { MedicationId, PatientId, PrescriptionId, ProviderId } from "../Ids.js"
import { PersonName } from "../Scheduling/Scheduling.js"
import { IsoTimestamp } from "../Time.js"

export const PrescriptionStatus = Schema.Literal("active", "completed", "discontinued", "expired", "on_hold", "cancelled").annotations({
  message: () => "is not included in the list"
})
export type PrescriptionStatus = typeof PrescriptionStatus.Type
export const prescriptionStatuses: ReadonlyArray<PrescriptionStatus> = PrescriptionStatus.literals

/**
 * The status machine (general §2.8 lists the states; the moves are ours, docs/spec-decisions.md):
 * active → completed | discontinued | expired | on_hold | cancelled; on_hold → active. completed,
 * discontinued, expired and cancelled are final.
 */
const moves: Readonly<Record<PrescriptionStatus, ReadonlyArray<PrescriptionStatus>>> = {
  active: ["completed", "discontinued", "expired", "on_hold", "cancelled"],
  on_hold: ["active"],
  completed: [],
  discontinued: [],
  expired: [],
  cancelled: []
}

/** Whether `from` may become `to` (staying put is always allowed). */
export const canMove = (from: PrescriptionStatus, to: PrescriptionStatus): boolean => from === to || moves[from].includes(to)

export const isFinal = (status: PrescriptionStatus): boolean => moves[status].length === 0

/** Only the daily job expires a prescription (its end date passed). */
export const setByJobOnly: ReadonlyArray<PrescriptionStatus> = ["expired"]

/** Common frequencies and instructions (general §2.8); free text up to the limits is accepted too. */
export const commonFrequencies = [
  "once daily", "twice daily", "three times daily", "four times daily", "every other day", "weekly", "as needed", "at bedtime"
] as const
export const commonInstructions = [
  "Take with food", "Take on empty stomach", "Take at bedtime", "Take in the morning", "Do not crush or chew", "Dissolve under tongue"
] as const

/** A common frequency in its canonical spelling when `text` is one (any case and spacing), else the trimmed text. */
export const canonicalFrequency = (text: string): string => {
  const squeezed = text.trim().replace(/\s+/g, " ")
  return commonFrequencies.find((f) => f === squeezed.toLowerCase()) ?? squeezed
}

export const minRefills = 0
export const maxRefills = 11

export class MedicationSummary extends Schema.Class<MedicationSummary>("MedicationSummary")({
  id: MedicationId,
  name: Schema.String,
  generic_name: Schema.String,
  brand_names: Schema.Array(Schema.String),
  strength: Schema.String,
  dosage_form: Schema.String
}) {}

export class Medication extends Schema.Class<Medication>("Medication")({
  id: MedicationId,
  name: Schema.String,
  generic_name: Schema.String,
  brand_names: Schema.Array(Schema.String),
  strength: Schema.String,
  dosage_form: Schema.String,
  rxnorm_cui: Schema.NullOr(Schema.String).annotations({ description: "NLM RxNorm concept id of the ingredient, when known" }),
  active: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class Prescription extends Schema.Class<Prescription>("Prescription")({
  id: PrescriptionId,
  patient_id: PatientId,
  provider_id: ProviderId,
  medication_id: MedicationId,
  dosage: Schema.String,
  frequency: Schema.String,
  quantity: Schema.Int,
  refills: Schema.Int,
  refills_remaining: Schema.Int,
  instructions: Schema.NullOr(Schema.String),
  prescription_date: Schema.String.annotations({ description: "YYYY-MM-DD" }),
  status: PrescriptionStatus,
  start_date: Schema.NullOr(Schema.String.annotations({ description: "YYYY-MM-DD" })),
  end_date: Schema.NullOr(Schema.String.annotations({ description: "YYYY-MM-DD" })),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  medication: MedicationSummary,
  patient: PersonName,
  provider: PersonName
}) {}

export const HistoryEvent = Schema.Literal("created", "changed", "status_changed", "refilled")
export type HistoryEvent = typeof HistoryEvent.Type

/** One row of the append-only history: what the prescription said after the event. */
export class PrescriptionHistoryEntry extends Schema.Class<PrescriptionHistoryEntry>("PrescriptionHistoryEntry")({
  event: HistoryEvent,
  from_status: Schema.NullOr(PrescriptionStatus),
  status: PrescriptionStatus,
  dosage: Schema.String,
  frequency: Schema.String,
  quantity: Schema.Int,
  refills_remaining: Schema.Int,
  start_date: Schema.NullOr(Schema.String),
  end_date: Schema.NullOr(Schema.String),
  recorded_at: IsoTimestamp
}) {}

export class HistoryPrescription extends Schema.Class<HistoryPrescription>("HistoryPrescription")({
  id: PrescriptionId,
  provider: PersonName,
  prescription_date: Schema.String,
  start_date: Schema.NullOr(Schema.String),
  end_date: Schema.NullOr(Schema.String),
  status: PrescriptionStatus,
  dosage: Schema.String,
  frequency: Schema.String,
  history: Schema.Array(PrescriptionHistoryEntry).annotations({ description: "Oldest first" })
}) {}

export class MedicationHistoryGroup extends Schema.Class<MedicationHistoryGroup>("MedicationHistoryGroup")({
  medication: MedicationSummary,
  first_prescribed: Schema.String.annotations({ description: "Earliest prescription_date of this medication (YYYY-MM-DD)" }),
  last_prescribed: Schema.String.annotations({ description: "Latest prescription_date of this medication (YYYY-MM-DD)" }),
  prescriptions: Schema.Array(HistoryPrescription).annotations({ description: "Newest first" })
}) {}
