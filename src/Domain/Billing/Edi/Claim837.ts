/**
 * The 837P (005010X222A1) loops of a batch of claims, from plain values. Pure: the caller gives
 * the control number, the time and every party; the result is the interchange text.
 *
 * Layout: 1000A submitter (NM1*41, PER), 1000B receiver (NM1*40), 2000A billing provider (HL 20,
 * PRV, NM1*85 with the NPI, N3, N4, REF*EI), one 2000B per subscriber (HL 22, SBR, 2010BA NM1*IL
 * with N3/N4/DMG, 2010BB NM1*PR), and for a dependant a 2000C (HL 23, PAT, NM1*QC, N3, N4, DMG);
 * under the patient's level each claim's 2300 (CLM, HI), 2310B rendering provider when it is not
 * the billing provider, and 2400 (LX, SV1, DTP*472).
 */
import { Data } from "effect"
import { isValidNpi } from "../../Providers/Npi.js"
import { isIcd10, maxDiagnosisCodes, x12Icd10 } from "../Codes.js"
import { type EnvelopeParties, interchange, transactionSet } from "./Envelope.js"
import { segment, type Segment, serialize } from "./Segments.js"
import { ediAmount, ediDate, ediGender, ediId, ediText, ediZip } from "./Text.js"

export interface Address {
  readonly line1: string
  readonly city: string
  readonly state: string
  readonly zip: string
}

export interface BillingProvider {
  readonly npi: string
  readonly taxId: string
  readonly name: string
  readonly address: Address
  readonly taxonomy: string
}

export interface Submitter {
  readonly id: string
  readonly name: string
  readonly contactName: string
  readonly contactPhone: string
}

export interface Receiver {
  readonly id: string
  readonly name: string
}

export interface Person {
  readonly firstName: string
  readonly lastName: string
  /** `YYYY-MM-DD`. */
  readonly dateOfBirth: string | null
  readonly gender: string | null
  readonly address: Address | null
}

/** The patient's relationship to the subscriber: PAT01 (19 child, 01 spouse, G8 other); self has no 2000C. */
export type Relationship = "self" | "child" | "spouse" | "other"
export const relationshipCodes: Readonly<Record<Exclude<Relationship, "self">, string>> = { child: "19", spouse: "01", other: "G8" }

export interface Coverage {
  readonly payerName: string
  readonly payerId: string
  /** SBR09: CI commercial, MC Medicaid, MB Medicare Part B, BL Blue Cross, HM HMO … */
  readonly claimFilingIndicator: string
  readonly memberId: string
  readonly groupNumber: string | null
  readonly relationship: Relationship
  /** The subscriber when not the patient (a guardian); ignored for `self`. */
  readonly subscriber: Person | null
}

export interface RenderingProvider {
  readonly npi: string
  readonly firstName: string
  readonly lastName: string
}

export interface EdiClaim {
  readonly claimNumber: string
  readonly amountCents: number
  readonly placeOfService: string
  /** ICD-10-CM codes as the claim stores them (with or without the dot), 1–12; the first is the principal diagnosis. */
  readonly diagnosisCodes: ReadonlyArray<string>
  readonly cptCode: string
  readonly modifiers: ReadonlyArray<string>
  /** `YYYY-MM-DD`. */
  readonly serviceDate: string
  readonly patient: Person
  readonly coverage: Coverage
  readonly renderingProvider: RenderingProvider
}

export interface Batch {
  readonly parties: EnvelopeParties
  readonly controlNumber: number
  /** BHT03: our reference of the batch. */
  readonly reference: string
  readonly createdAt: Date
  readonly submitter: Submitter
  readonly receiver: Receiver
  readonly billingProvider: BillingProvider
  readonly claims: ReadonlyArray<EdiClaim>
}

/** 5010 guidance: at most 5,000 claims (CLM) in one transaction set. */
export const maxClaimsPerTransaction = 5000
/** CLM01 holds 38 characters. */
export const maxClaimNumberLength = 38
/** SV107 holds four diagnosis pointers. */
export const maxPointersPerLine = 4

export class InvalidClaimData extends Data.TaggedError("InvalidClaimData")<{ readonly message: string }> {}

const require = (condition: boolean, message: string) => {
  if (!condition) throw new InvalidClaimData({ message })
}

const addressSegments = (address: Address): Array<Segment> => [
  segment("N3", ediText(address.line1, 55)),
  segment("N4", ediText(address.city, 30), ediText(address.state, 2), ediZip(address.zip))
]

const demographics = (person: Person): Array<Segment> =>
  person.dateOfBirth === null ? [] : [segment("DMG", "D8", ediDate(person.dateOfBirth), ediGender(person.gender))]

const personName = (qualifier: string, person: { readonly firstName: string; readonly lastName: string }, idQualifier?: string, id?: string) =>
  segment("NM1", qualifier, "1", ediText(person.lastName, 60), ediText(person.firstName, 35), "", "", "", idQualifier, id)

/** The subscriber of a claim: the patient (self) or the named guardian of the coverage. */
export const subscriberOf = (claim: EdiClaim): Person =>
  claim.coverage.relationship === "self" || claim.coverage.subscriber === null ? claim.patient : claim.coverage.subscriber

/** Which claims share a 2000B: same payer, member id and subscriber, and whether the patient is the subscriber. */
const subscriberKey = (claim: EdiClaim) => {
  const s = subscriberOf(claim)
  return JSON.stringify([
    claim.coverage.payerId, ediId(claim.coverage.memberId), claim.coverage.relationship === "self",
    ediText(s.lastName), ediText(s.firstName), s.dateOfBirth
  ])
}

const patientKey = (claim: EdiClaim) =>
  JSON.stringify([ediText(claim.patient.lastName), ediText(claim.patient.firstName), claim.patient.dateOfBirth, claim.coverage.relationship])

const checkClaim = (claim: EdiClaim, billingNpi: string) => {
  const number = ediId(claim.claimNumber, maxClaimNumberLength + 1)
  require(number.length > 0 && number.length <= maxClaimNumberLength, `claim number must be 1–${maxClaimNumberLength} characters`)
  require(Number.isInteger(claim.amountCents) && claim.amountCents > 0, "amount must be greater than 0")
  require(claim.diagnosisCodes.length >= 1 && claim.diagnosisCodes.length <= maxDiagnosisCodes, `1–${maxDiagnosisCodes} diagnosis codes`)
  require(claim.diagnosisCodes.every(isIcd10), "diagnosis codes are ICD-10-CM")
  require(isValidNpi(claim.renderingProvider.npi) || claim.renderingProvider.npi === billingNpi, "rendering provider NPI fails the check digit")
  require(claim.coverage.relationship === "self" || claim.coverage.subscriber !== null, "a dependant's coverage names its subscriber")
  require(subscriberOf(claim).dateOfBirth !== null || claim.coverage.relationship !== "self", "the patient's date of birth is required")
  // X12 text is basic Latin: a name written only in other scripts has nothing left to send.
  for (const [who, person] of [["patient", claim.patient], ["subscriber", subscriberOf(claim)], ["rendering provider", claim.renderingProvider]] as const) {
    require(ediText(person.lastName) !== "" && ediText(person.firstName) !== "", `claim ${number}: the ${who}'s name has no Latin letters an 837P can carry`)
  }
  require(ediText(claim.coverage.payerName) !== "" && ediId(claim.coverage.payerId) !== "", `claim ${number}: the payer's name or id is empty`)
  require(ediId(claim.coverage.memberId) !== "", `claim ${number}: the member id is empty`)
}

/** 2300, 2310B and 2400 of one claim. */
const claimLoops = (claim: EdiClaim, billingNpi: string): Array<Segment> => {
  const codes = claim.diagnosisCodes.map(x12Icd10)
  const pointers = codes.slice(0, maxPointersPerLine).map((_, i) => String(i + 1))
  const rendering = claim.renderingProvider.npi === billingNpi
    ? []
    : [personName("82", claim.renderingProvider, "XX", claim.renderingProvider.npi)]
  return [
    segment("CLM", ediId(claim.claimNumber, maxClaimNumberLength), ediAmount(claim.amountCents), "", "",
      [claim.placeOfService, "B", "1"], "Y", "A", "Y", "Y"),
    segment("HI", ...codes.map((code, i) => [i === 0 ? "ABK" : "ABF", code])),
    ...rendering,
    segment("LX", "1"),
    segment("SV1", ["HC", claim.cptCode, ...claim.modifiers], ediAmount(claim.amountCents), "UN", "1", "", "", pointers),
    segment("DTP", "472", "D8", ediDate(claim.serviceDate))
  ]
}

interface SubscriberGroup {
  readonly first: EdiClaim
  /** Claims whose patient is the subscriber. */
  readonly own: Array<EdiClaim>
  /** Dependants (2000C), each with their claims. */
  readonly dependants: Map<string, Array<EdiClaim>>
  count: number
}

const groupBySubscriber = (claims: ReadonlyArray<EdiClaim>): Array<SubscriberGroup> => {
  const groups = new Map<string, SubscriberGroup>()
  for (const claim of claims) {
    const key = subscriberKey(claim)
    let group = groups.get(key)
    if (group === undefined) {
      group = { first: claim, own: [], dependants: new Map(), count: 0 }
      groups.set(key, group)
    }
    group.count++
    if (claim.coverage.relationship === "self") group.own.push(claim)
    else {
      const pk = patientKey(claim)
      const list = group.dependants.get(pk)
      if (list === undefined) group.dependants.set(pk, [claim])
      else list.push(claim)
    }
  }
  return [...groups.values()]
}

/** The body of one transaction set (BHT through the last 2400). */
const transactionBody = (batch: Batch, groups: ReadonlyArray<SubscriberGroup>): Array<Segment> => {
  const { billingProvider: billing, submitter, receiver } = batch
  const out: Array<Segment> = [
    segment("BHT", "0019", "00", ediId(batch.reference, 30), ediDate(batch.createdAt.toISOString()),
      batch.createdAt.toISOString().slice(11, 16).replace(":", ""), "CH"),
    segment("NM1", "41", "2", ediText(submitter.name, 60), "", "", "", "", "46", ediId(submitter.id, 80)),
    segment("PER", "IC", ediText(submitter.contactName, 60), "TE", submitter.contactPhone.replace(/[^0-9]/g, "")),
    segment("NM1", "40", "2", ediText(receiver.name, 60), "", "", "", "", "46", ediId(receiver.id, 80)),
    segment("HL", "1", "", "20", "1"),
    segment("PRV", "BI", "PXC", ediId(billing.taxonomy, 50)),
    segment("NM1", "85", "2", ediText(billing.name, 60), "", "", "", "", "XX", billing.npi),
    ...addressSegments(billing.address),
    segment("REF", "EI", billing.taxId.replace(/[^0-9]/g, ""))
  ]
  let hl = 1
  for (const group of groups) {
    const subscriberHl = ++hl
    const coverage = group.first.coverage
    const self = coverage.relationship === "self"
    const subscriber = subscriberOf(group.first)
    out.push(
      segment("HL", String(subscriberHl), "1", "22", self ? "0" : "1"),
      segment("SBR", "P", self ? "18" : "", coverage.groupNumber === null ? "" : ediId(coverage.groupNumber, 50), "", "", "", "", "",
        coverage.claimFilingIndicator),
      personName("IL", subscriber, "MI", ediId(coverage.memberId, 80)),
      ...(subscriber.address === null ? [] : addressSegments(subscriber.address)),
      ...demographics(subscriber),
      segment("NM1", "PR", "2", ediText(coverage.payerName, 60), "", "", "", "", "PI", ediId(coverage.payerId, 80))
    )
    for (const claim of group.own) out.push(...claimLoops(claim, billing.npi))
    for (const claims of group.dependants.values()) {
      const patient = claims[0]!.patient
      out.push(
        segment("HL", String(++hl), String(subscriberHl), "23", "0"),
        segment("PAT", relationshipCodes[claims[0]!.coverage.relationship as Exclude<Relationship, "self">]),
        personName("QC", patient),
        ...(patient.address === null ? [] : addressSegments(patient.address)),
        ...demographics(patient)
      )
      for (const claim of claims) out.push(...claimLoops(claim, billing.npi))
    }
  }
  return out
}

/** Subscriber groups packed into transaction sets of at most `maxClaimsPerTransaction` claims. */
const pack = (groups: ReadonlyArray<SubscriberGroup>): Array<Array<SubscriberGroup>> => {
  const sets: Array<Array<SubscriberGroup>> = []
  let current: Array<SubscriberGroup> = []
  let count = 0
  for (const group of groups) {
    if (current.length > 0 && count + group.count > maxClaimsPerTransaction) {
      sets.push(current)
      current = []
      count = 0
    }
    current.push(group)
    count += group.count
  }
  if (current.length > 0) sets.push(current)
  return sets
}

/** The whole interchange as segments. Throws `InvalidClaimData` for data no 837P may carry. */
export const batchSegments = (batch: Batch): Array<Segment> => {
  require(batch.claims.length > 0, "a batch has at least one claim")
  require(isValidNpi(batch.billingProvider.npi), "billing provider NPI fails the check digit")
  require(/^[0-9]{9}$/.test(batch.billingProvider.taxId.replace(/[^0-9]/g, "")), "billing provider tax id is nine digits")
  for (const claim of batch.claims) checkClaim(claim, batch.billingProvider.npi)
  const sets = pack(groupBySubscriber(batch.claims))
  const transactions = sets.map((groups, i) => transactionSet(String(i + 1).padStart(4, "0"), transactionBody(batch, groups)))
  return interchange(batch.parties, batch.controlNumber, batch.createdAt, transactions)
}

/** The interchange text (segments end with `~`, no line breaks). */
export const generate837P = (batch: Batch): string => serialize(batchSegments(batch))
