/** Batches for the 837P tests and the bench: a billing provider, payers, patients and claims. */
import { type Batch, type EdiClaim } from "../../../src/Domain/Billing/Edi/Claim837.js"
import { npiCheckDigit } from "../../../src/Domain/Providers/Npi.js"

/** A valid NPI from nine digits. */
export const npiOf = (nine: string) => `${nine}${npiCheckDigit(nine)}`

export const billingNpi = npiOf("123456789")
export const renderingNpi = npiOf("987654321")

const address = { line1: "100 Main St", city: "Sacramento", state: "CA", zip: "95814-1234" }

export const adultClaim = (overrides: Partial<EdiClaim> = {}): EdiClaim => ({
  claimNumber: "CLM00000001",
  amountCents: 15000,
  placeOfService: "11",
  diagnosisCodes: ["F329"],
  cptCode: "90837",
  modifiers: [],
  serviceDate: "2026-01-05",
  patient: { firstName: "Ana", lastName: "López", dateOfBirth: "1990-02-03", gender: "female", address },
  coverage: {
    payerName: "Blue Shield of California", payerId: "94036", claimFilingIndicator: "BL",
    memberId: "XYZ123456", groupNumber: "GRP-01", relationship: "self", subscriber: null
  },
  renderingProvider: { npi: renderingNpi, firstName: "Avery", lastName: "Quinn" },
  ...overrides
})

export const childClaim = (overrides: Partial<EdiClaim> = {}): EdiClaim => ({
  ...adultClaim(),
  claimNumber: "CLM00000002",
  diagnosisCodes: ["F900", "F411", "Z6372", "F4310", "F5101", "F840", "F8181", "F952", "F430", "F4322", "F341", "R69"],
  cptCode: "90847",
  modifiers: ["HO", "95"],
  placeOfService: "10",
  amountCents: 20050,
  patient: { firstName: "Robin", lastName: "Vale", dateOfBirth: "2015-06-01", gender: "M", address },
  coverage: {
    payerName: "Medi-Cal", payerId: "610442", claimFilingIndicator: "MC", memberId: "91234567A", groupNumber: null,
    relationship: "child",
    subscriber: { firstName: "Morgan", lastName: "Vale", dateOfBirth: "1985-09-09", gender: "F", address }
  },
  ...overrides
})

export const batchOf = (claims: ReadonlyArray<EdiClaim>, controlNumber = 42): Batch => ({
  parties: { senderId: "CLINIC01", receiverId: "CLEARHOUSE", usage: "T" },
  controlNumber,
  reference: `EDI${String(controlNumber).padStart(9, "0")}`,
  createdAt: new Date("2026-02-01T17:30:00.000Z"),
  submitter: { id: "CLINIC01", name: "Care Coordination Clinic", contactName: "Billing Office", contactPhone: "(916) 555-0100" },
  receiver: { id: "CLEARHOUSE", name: "Clearinghouse" },
  billingProvider: { npi: billingNpi, taxId: "12-3456789", name: "Care Coordination Clinic", address, taxonomy: "101YM0800X" },
  claims
})

/** `n` claims over a mix of adult subscribers and children with guardian subscribers. */
export const manyClaims = (n: number): Array<EdiClaim> =>
  Array.from({ length: n }, (_, i) => {
    const base = i % 3 === 0 ? childClaim() : adultClaim()
    const family = Math.floor(i / 2)
    return {
      ...base,
      claimNumber: `CLM${String(i + 1).padStart(8, "0")}`,
      amountCents: 10000 + (i % 97) * 25,
      patient: { ...base.patient, lastName: `${base.patient.lastName}${family}` },
      coverage: {
        ...base.coverage,
        memberId: `M${family}`,
        subscriber: base.coverage.subscriber === null ? null : { ...base.coverage.subscriber, lastName: `Vale${family}` }
      }
    }
  })
