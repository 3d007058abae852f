/** Claims (general §2.6): representations, the status machine and money in cents. */
import { Schema } from "effect"
import { AppointmentId, ClaimDocumentId, ClaimId, InsurancePlanId, PatientId, ProviderId } from "../Ids.js"
import { PersonName } from "../Scheduling/Scheduling.js"
import { IsoTimestamp } from "../Time.js"

export const ClaimStatus = Schema.Literal(
  "draft", "ready", "submitted", "pending", "approved", "paid", "denied", "rejected"
).annotations({ message: () => "is not included in the list" })
export type ClaimStatus = typeof ClaimStatus.Type
export const claimStatuses: ReadonlyArray<ClaimStatus> = ClaimStatus.literals

/**
 * The claim status machine (general §2.6 lists the states; the moves are ours,
 * docs/spec-decisions.md): draft ⇄ ready → submitted (only by EDI generation) → pending →
 * approved → paid; submitted or pending → denied or rejected; rejected → ready after a fix.
 * paid and denied are final.
 */
const moves: Readonly<Record<ClaimStatus, ReadonlyArray<ClaimStatus>>> = {
  draft: ["ready"],
  ready: ["draft", "submitted"],
  submitted: ["pending", "denied", "rejected"],
  pending: ["approved", "denied", "rejected"],
  approved: ["paid"],
  paid: [],
  denied: [],
  rejected: ["ready"]
}

export const canMove = (from: ClaimStatus, to: ClaimStatus): boolean => from === to || moves[from].includes(to)

/** Only EDI generation submits a claim. */
export const setByEdiOnly: ReadonlyArray<ClaimStatus> = ["submitted"]

/** Claims whose billing fields may change. */
export const editableStatuses: ReadonlyArray<ClaimStatus> = ["draft", "ready", "rejected"]
export const isEditable = (status: ClaimStatus): boolean => editableStatuses.includes(status)

/** Claims an appointment may have only one of at a time (a denied claim frees it for a corrected one). */
export const activeStatuses: ReadonlyArray<ClaimStatus> = claimStatuses.filter((s) => s !== "denied")

/** The largest `numeric(10,2)`. */
export const maxAmountCents = 99_999_999_99

/** `numeric(10,2)` as PostgreSQL sends it ("150.00") → cents, without floating point. */
export const centsOfDecimal = (text: string): number => {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (match === null) throw new Error("not a numeric(10,2) value")
  const cents = Number(match[2]) * 100 + Number((match[3] ?? "0").padEnd(2, "0"))
  return match[1] === "-" ? -cents : cents
}

/** Cents → the decimal text PostgreSQL reads exactly ("150.00"). */
export const decimalOfCents = (cents: number): string => {
  const sign = cents < 0 ? "-" : ""
  const abs = Math.abs(cents)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`
}

/** A JSON number with at most two decimals (150.5 for 150.50: JSON has no trailing zeros). */
export const amountOfCents = (cents: number): number => Number(decimalOfCents(cents))

/** A request amount (a JSON number) → cents, or undefined when it has more than two decimals. */
export const centsOfAmount = (amount: number): number | undefined => {
  const cents = Math.round(amount * 100)
  return Math.abs(cents - amount * 100) < 1e-6 ? cents : undefined
}

export class Claim extends Schema.Class<Claim>("Claim")({
  id: ClaimId,
  patient_id: PatientId,
  provider_id: ProviderId,
  appointment_id: AppointmentId,
  claim_number: Schema.String,
  cpt_code: Schema.String,
  modifiers: Schema.Array(Schema.String),
  place_of_service: Schema.String,
  diagnosis_codes: Schema.Array(Schema.String).annotations({ description: "ICD-10-CM codes as sent, upper case (`F32.9`); the 837P writes them without the dot" }),
  service_date: Schema.String.annotations({ description: "YYYY-MM-DD" }),
  amount: Schema.Number.annotations({ description: "Dollars, two decimals at most" }),
  status: ClaimStatus,
  submission_date: Schema.NullOr(Schema.String.annotations({ description: "YYYY-MM-DD: the day the claim went out in an 837P batch" })),
  payment_amount: Schema.NullOr(Schema.Number),
  payment_date: Schema.NullOr(Schema.String),
  denial_reason: Schema.NullOr(Schema.String),
  insurance_plan_id: Schema.NullOr(InsurancePlanId).annotations({ description: "The plan billed: the patient's coverage when the claim was last saved or submitted" }),
  edi_batch_id: Schema.NullOr(Schema.String).annotations({ description: "The 837P batch that submitted it" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  patient: PersonName,
  provider: PersonName
}) {}

export const DocumentKind = Schema.Literal("superbill", "eob", "clinical_note", "other").annotations({
  message: () => "is not included in the list"
})
export type DocumentKind = typeof DocumentKind.Type

export class ClaimDocument extends Schema.Class<ClaimDocument>("ClaimDocument")({
  id: ClaimDocumentId,
  claim_id: ClaimId,
  name: Schema.String,
  content_type: Schema.String,
  size: Schema.Int.annotations({ description: "Bytes" }),
  kind: DocumentKind,
  url: Schema.String.annotations({ description: "Signed download link, valid 30 minutes" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}
