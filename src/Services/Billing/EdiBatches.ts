/**
 * 837P generation (general §4.6 `generate_edi`). In one transaction: the claims are locked, every
 * one checked (ready, with coverage, an NPI, the patient's details), ISA13 taken from the
 * `edi_interchange_control_numbers` sequence (never reused, even when the transaction rolls back),
 * the file generated, checked by our structural checker, stored, the batch written and the claims
 * moved to `submitted`. Any refusal leaves every claim as it was.
 */
import { Clock, Effect } from "effect"
import { EdiBatch, fileUrlMinutes } from "../../Api/Billing/Claims.js"
import { invalid, invalidField } from "../../Api/Errors.js"
import { amountOfCents, centsOfDecimal, decimalOfCents } from "../../Domain/Billing/Claim.js"
import { checkInterchange } from "../../Domain/Billing/Edi/Check.js"
import { type Address, type Batch, type EdiClaim, generate837P, InvalidClaimData } from "../../Domain/Billing/Edi/Claim837.js"
import { controlNumberText } from "../../Domain/Billing/Edi/Envelope.js"
import { isValidNpi } from "../../Domain/Providers/Npi.js"
import { calendarDayIn } from "../../Domain/Time.js"
import { AppConfig, type BillingSettings } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { makeTransaction } from "../Repository.js"
import { type BatchClaimRow, ClaimsRepo } from "./ClaimsRepo.js"
import { EdiBatchesRepo } from "./EdiBatchesRepo.js"

const addressOf = (line1: string | null, city: string | null, state: string | null, zip: string | null): Address | null =>
  line1 === null || city === null || state === null || zip === null || [line1, city, state, zip].some((s) => s.trim() === "")
    ? null
    : { line1, city, state, zip }

/** Why a claim cannot go into an 837P; undefined when it can. */
const refusalOf = (row: BatchClaimRow): string | undefined => {
  if (row.status !== "ready") return `claim ${row.id} is ${row.status}, not ready`
  if (row.member_id === null || row.payer_id === null) return `claim ${row.id}: the patient has no insurance coverage`
  if (row.npi === null || !isValidNpi(row.npi)) return `claim ${row.id}: the provider has no valid NPI`
  if (row.date_of_birth === null) return `claim ${row.id}: the patient's date of birth is missing`
  if (addressOf(row.address, row.city, row.state, row.zip) === null) return `claim ${row.id}: the patient's address is incomplete`
  return undefined
}

export const toEdiClaim = (row: BatchClaimRow): EdiClaim => {
  const patientAddress = addressOf(row.address, row.city, row.state, row.zip)
  const relationship = row.relationship ?? "self"
  return {
    claimNumber: row.claim_number,
    amountCents: centsOfDecimal(row.amount),
    placeOfService: row.place_of_service,
    diagnosisCodes: row.diagnosis_codes,
    cptCode: row.cpt_code,
    modifiers: row.modifiers,
    serviceDate: row.service_date,
    patient: { firstName: row.first_name, lastName: row.last_name, dateOfBirth: row.date_of_birth, gender: row.gender, address: patientAddress },
    coverage: {
      payerName: row.plan_name ?? "",
      payerId: row.payer_id ?? "",
      claimFilingIndicator: row.claim_filing_indicator ?? "CI",
      memberId: row.member_id ?? "",
      groupNumber: row.group_number,
      relationship,
      subscriber: relationship === "self" ? null : {
        firstName: row.subscriber_first_name ?? "",
        lastName: row.subscriber_last_name ?? "",
        dateOfBirth: row.subscriber_date_of_birth,
        gender: row.subscriber_gender,
        // A guardian without an address of their own is taken to live at the patient's.
        address: addressOf(row.subscriber_address, row.subscriber_city, row.subscriber_state, row.subscriber_zip) ?? patientAddress
      }
    },
    renderingProvider: { npi: row.npi ?? "", firstName: row.provider_first_name, lastName: row.provider_last_name }
  }
}

/** The batch as the generator takes it, from the billing settings. */
export const batchOf = (billing: BillingSettings, controlNumber: number, reference: string, createdAt: Date, claims: ReadonlyArray<EdiClaim>): Batch => ({
  parties: { senderId: billing.submitterId, receiverId: billing.receiverId, usage: billing.usage },
  controlNumber,
  reference,
  createdAt,
  submitter: { id: billing.submitterId, name: billing.name, contactName: billing.contactName, contactPhone: billing.contactPhone },
  receiver: { id: billing.receiverId, name: billing.receiverName },
  billingProvider: {
    npi: billing.npi,
    taxId: billing.taxId,
    name: billing.name,
    address: { line1: billing.address, city: billing.city, state: billing.state, zip: billing.zip },
    taxonomy: billing.taxonomy
  },
  claims
})

export class EdiBatches extends Effect.Service<EdiBatches>()("app/EdiBatches", {
  dependencies: [ClaimsRepo.Default, EdiBatchesRepo.Default],
  effect: Effect.gen(function*() {
    const claimsRepo = yield* ClaimsRepo
    const batchesRepo = yield* EdiBatchesRepo
    const transaction = yield* makeTransaction
    const store = yield* ObjectStore
    const audit = yield* AuditLog
    const config = yield* AppConfig

    const generate = Effect.fn("EdiBatches.generate")(function*(actorId: number, claimIds: ReadonlyArray<number>, batchName: string | undefined) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId, "edi.requested": claimIds.length })
      const ids = [...new Set(claimIds)]
      const name = batchName?.trim() || null
      const generatedAt = new Date(yield* Clock.currentTimeMillis)
      const result = yield* transaction(Effect.gen(function*() {
        const rows = yield* claimsRepo.lockForBatch(ids)
        const found = new Map(rows.map((r) => [r.id as number, r]))
        const refusals = [
          ...ids.filter((id) => !found.has(id)).map((id) => `claim ${id} not found`),
          ...rows.map(refusalOf).filter((r) => r !== undefined)
        ]
        if (refusals.length > 0) return yield* Effect.fail(invalid({ claim_ids: refusals }))

        const controlNumber = yield* batchesRepo.nextControlNumber
        const batchId = `EDI${controlNumberText(controlNumber)}`
        const claims = rows.map(toEdiClaim)
        const text = yield* Effect.try({
          try: () => generate837P(batchOf(config.billing, controlNumber, batchId, generatedAt, claims)),
          catch: (error) => error
        }).pipe(Effect.catchAll((error) =>
          error instanceof InvalidClaimData ? Effect.fail(invalidField("claim_ids", error.message)) : Effect.die(error)))
        // Our own structural check: a file that breaks an X12 rule is a bug, never sent.
        const check = checkInterchange(text)
        if (check.problems.length > 0) return yield* Effect.dieMessage(`generated 837P fails the structural check: ${check.problems.slice(0, 5).join("; ")}`)
        const totalCents = claims.reduce((sum, c) => sum + c.amountCents, 0)
        const key = `edi/${batchId}.x12`
        yield* store.put(key, new TextEncoder().encode(text), "application/edi-x12")
        const batchRowId = yield* batchesRepo.insert({
          batchId, controlNumber, batchName: name, objectKey: key, claimCount: claims.length, totalAmount: decimalOfCents(totalCents),
          createdById: actorId, generatedAt
        })
        yield* claimsRepo.markSubmitted({ ids, batchRowId, submissionDate: calendarDayIn(generatedAt.getTime(), config.clinicTimeZone) })
        yield* audit.recordMany(ids.map((id) => ({ actorId, action: "claim.submitted", targetType: "claim", targetId: id })))
        return { batchId, key, count: claims.length, totalCents }
      }))
      yield* Effect.annotateCurrentSpan({ "edi.claim_count": result.count })
      return EdiBatch.make({
        batch_id: result.batchId,
        batch_name: name,
        file_url: yield* store.signedUrl(result.key, `${fileUrlMinutes} minutes`),
        claim_count: result.count,
        total_amount: amountOfCents(result.totalCents),
        generated_at: generatedAt
      })
    })

    return { generate } as const
  })
}) {}
