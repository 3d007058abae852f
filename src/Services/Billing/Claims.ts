/**
 * Claims (general §2.6, §4.6): lists with filters and totals, create/update with the claim rules,
 * the status machine, and deleting drafts. One active claim per appointment is the unique index
 * `claims_active_appointment_key`, never a look first.
 */
import { Clock, Effect, Option } from "effect"
import { claimMessages, ClaimFilters, ClaimList, FilteredClaimList, PlanName, type CreateClaimRequest, type UpdateClaimRequest } from "../../Api/Billing/Claims.js"
import { type FieldMessages, invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import {
  amountOfCents, canMove, centsOfAmount, centsOfDecimal, claimStatuses, decimalOfCents, isEditable, setByEdiOnly
} from "../../Domain/Billing/Claim.js"
import { commonCptCodes, placesOfService, storedIcd10, x12Icd10 } from "../../Domain/Billing/Codes.js"
import { calendarDayIn } from "../../Domain/Time.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ClaimDocumentsRepo } from "./ClaimDocumentsRepo.js"
import { ObjectStore } from "../ObjectStore.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { type ClaimCriteria, ClaimsRepo, toClaim } from "./ClaimsRepo.js"
import { InsurancePlansRepo } from "./InsurancePlansRepo.js"

export type { ClaimCriteria } from "./ClaimsRepo.js"

type ClaimInput = CreateClaimRequest["claim"]
type ClaimChanges = UpdateClaimRequest["claim"]

/** The billing fields of a claim, normalised: what the rules check and the row stores. */
interface BillingFields {
  readonly patientId: number
  readonly providerId: number
  readonly appointmentId: number
  readonly cptCode: string
  readonly diagnosisCodes: ReadonlyArray<string>
  readonly serviceDate: string
  readonly amountCents: number
  readonly modifiers: ReadonlyArray<string>
  readonly placeOfService: string
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((x, i) => x === b[i])

/** The same codes billed: `F32.9` and `F329` are one code written two ways. */
const sameCodes = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => sameList(a.map(x12Icd10), b.map(x12Icd10))

const sameFields = (a: BillingFields, b: BillingFields) =>
  a.patientId === b.patientId && a.providerId === b.providerId && a.appointmentId === b.appointmentId && a.cptCode === b.cptCode &&
  sameCodes(a.diagnosisCodes, b.diagnosisCodes) && a.serviceDate === b.serviceDate && a.amountCents === b.amountCents &&
  sameList(a.modifiers, b.modifiers) && a.placeOfService === b.placeOfService

export class Claims extends Effect.Service<Claims>()("app/Claims", {
  dependencies: [ClaimsRepo.Default, ClaimDocumentsRepo.Default, InsurancePlansRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* ClaimsRepo
    const documentsRepo = yield* ClaimDocumentsRepo
    const plansRepo = yield* InsurancePlansRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const store = yield* ObjectStore
    const config = yield* AppConfig
    const zone = config.clinicTimeZone
    const cptCodes: ReadonlyArray<string> = [...new Set([...commonCptCodes, ...config.billing.extraCptCodes])]

    const page = (criteria: ClaimCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        // The total is over every match (general §4.6), summed exactly in numeric.
        const { pagination, rows, totals } = yield* repo.list(criteria, request)
        yield* Effect.annotateCurrentSpan({ "claims.count": rows.length })
        return { claims: rows.map(toClaim), pagination, totalCents: centsOfDecimal(totals.total) }
      })

    const list = Effect.fn("Claims.list")(function*(criteria: ClaimCriteria, request: PageRequest) {
      const p = yield* page(criteria, request)
      return ClaimList.make({ claims: p.claims, pagination: p.pagination })
    })

    const filter = Effect.fn("Claims.filter")(function*(criteria: ClaimCriteria, request: PageRequest) {
      const p = yield* page(criteria, request)
      return FilteredClaimList.make({ claims: p.claims, pagination: p.pagination, total_amount: amountOfCents(p.totalCents) })
    })

    const findRow = (id: number, lock = false) =>
      Effect.flatMap(repo.findById(id, lock), Option.match({ onNone: () => Effect.fail(notFound("Claim")), onSome: Effect.succeed }))

    const show = Effect.fn("Claims.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "claim.id": id })
      return toClaim(yield* findRow(id))
    })

    const today = Effect.map(Clock.currentTimeMillis, (ms) => calendarDayIn(ms, zone))

    const fieldsOf = (input: ClaimInput): BillingFields => ({
      patientId: input.patient_id,
      providerId: input.provider_id,
      appointmentId: input.appointment_id,
      cptCode: input.cpt_code.toUpperCase(),
      diagnosisCodes: input.diagnosis_codes.map(storedIcd10),
      serviceDate: input.service_date,
      amountCents: centsOfAmount(input.amount) ?? 0,
      modifiers: (input.modifiers ?? []).map((m) => m.toUpperCase()),
      placeOfService: input.place_of_service ?? "11"
    })

    const stored = (fields: BillingFields) => ({
      patientId: fields.patientId,
      providerId: fields.providerId,
      appointmentId: fields.appointmentId,
      cptCode: fields.cptCode,
      modifiers: fields.modifiers,
      placeOfService: fields.placeOfService,
      diagnosisCodes: fields.diagnosisCodes,
      serviceDate: fields.serviceDate,
      amount: decimalOfCents(fields.amountCents)
    })

    /** Every claim rule at once (Rails style): codes, people, the appointment, the date. */
    const checkFields = (fields: BillingFields) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        const add = (field: string, message: string) => (errors[field] ??= []).push(message)
        if (!cptCodes.includes(fields.cptCode)) add("cpt_code", "is invalid")
        if (new Set(fields.diagnosisCodes.map(x12Icd10)).size !== fields.diagnosisCodes.length) add("diagnosis_codes", "must not repeat a code")
        if (new Set(fields.modifiers).size !== fields.modifiers.length) add("modifiers", "must not repeat a modifier")
        if (!(placesOfService as ReadonlyArray<string>).includes(fields.placeOfService)) add("place_of_service", "is not included in the list")
        if (fields.amountCents <= 0) add("amount", claimMessages.amount)
        const { appointment, found } = yield* repo.references({
          patientId: fields.patientId, providerId: fields.providerId, appointmentId: fields.appointmentId, timeZone: zone
        })
        if (!found.patient) add("patient_id", "must exist")
        if (!found.provider) add("provider_id", "must exist")
        if (appointment === undefined) add("appointment_id", "must exist")
        else {
          if (appointment.patient_id !== fields.patientId || appointment.provider_id !== fields.providerId || appointment.status !== "completed") {
            add("appointment_id", "is invalid")
          } else if (appointment.day !== fields.serviceDate) add("service_date", "must be the appointment's date")
        }
        if (fields.serviceDate > (yield* today)) add("service_date", "can't be in the future")
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
      })

    const create = Effect.fn("Claims.create")(function*(actorId: number, input: ClaimInput) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const fields = fieldsOf(input)
      yield* checkFields(fields)
      const id = yield* repo.insert(stored(fields), actorId)
      yield* audit.record({ actorId, action: "claim.create", targetType: "claim", targetId: id })
      return toClaim(yield* Effect.orDie(findRow(id)))
    })

    const update = Effect.fn("Claims.update")(function*(actorId: number, id: number, changes: ClaimChanges) {
      yield* Effect.annotateCurrentSpan({ "claim.id": id, "actor.id": actorId })
      yield* transaction(Effect.gen(function*() {
        const current = yield* findRow(id, true)
        const before: BillingFields = {
          patientId: current.patient_id,
          providerId: current.provider_id,
          appointmentId: current.appointment_id,
          cptCode: current.cpt_code,
          diagnosisCodes: current.diagnosis_codes,
          serviceDate: current.service_date,
          amountCents: centsOfDecimal(current.amount),
          modifiers: current.modifiers,
          placeOfService: current.place_of_service
        }
        const after = fieldsOf({
          patient_id: changes.patient_id ?? current.patient_id,
          provider_id: changes.provider_id ?? current.provider_id,
          appointment_id: changes.appointment_id ?? current.appointment_id,
          cpt_code: changes.cpt_code ?? current.cpt_code,
          diagnosis_codes: changes.diagnosis_codes ?? current.diagnosis_codes,
          service_date: changes.service_date ?? current.service_date,
          amount: changes.amount ?? amountOfCents(before.amountCents),
          modifiers: changes.modifiers ?? current.modifiers,
          place_of_service: (changes.place_of_service ?? current.place_of_service) as never
        })
        // A claim that may not change keeps its codes as written when they come back spelt the other way.
        const edits = !sameFields(before, after)
        if (edits && !isEditable(current.status)) return yield* Effect.fail(invalidField("status", claimMessages.notEditable(current.status)))
        const status = changes.status ?? current.status
        if (status !== current.status) {
          if (setByEdiOnly.includes(status)) return yield* Effect.fail(invalidField("status", claimMessages.submittedByEdi))
          if (!canMove(current.status, status)) return yield* Effect.fail(invalidField("status", claimMessages.move(current.status, status)))
        }
        const paymentAmount = changes.payment_amount === undefined
          ? current.payment_amount
          : changes.payment_amount === null ? null : decimalOfCents(centsOfAmount(changes.payment_amount) ?? 0)
        let paymentDate = changes.payment_date === undefined ? current.payment_date : changes.payment_date
        const denialReason = changes.denial_reason === undefined ? current.denial_reason : blankToNull(changes.denial_reason)
        if (status !== current.status && status === "paid") {
          if (paymentAmount === null) return yield* Effect.fail(invalidField("payment_amount", "can't be blank"))
          paymentDate ??= yield* today
        }
        if (status !== current.status && (status === "denied" || status === "rejected") && denialReason === null) {
          return yield* Effect.fail(invalidField("denial_reason", "can't be blank"))
        }
        if (edits) yield* checkFields(after)
        yield* repo.update({
          id,
          fields: stored({ ...after, diagnosisCodes: (isEditable(current.status) ? after : before).diagnosisCodes }),
          status,
          paymentAmount,
          paymentDate,
          denialReason,
          refreshPlan: edits
        })
        yield* audit.record({ actorId, action: "claim.update", targetType: "claim", targetId: id })
        if (status !== current.status) yield* audit.record({ actorId, action: `claim.${status}`, targetType: "claim", targetId: id })
      }))
      return toClaim(yield* findRow(id))
    })

    const remove = Effect.fn("Claims.delete")(function*(actorId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "claim.id": id, "actor.id": actorId })
      const keys = yield* transaction(Effect.gen(function*() {
        const current = yield* findRow(id, true)
        if (current.status !== "draft") return yield* Effect.fail(invalidField("status", claimMessages.deleteDraftOnly(current.status)))
        const documentKeys = yield* documentsRepo.deleteAllOf(id)
        yield* repo.delete(id)
        yield* audit.record({ actorId, action: "claim.delete", targetType: "claim", targetId: id })
        return documentKeys
      }))
      // Files go once the rows are gone: a failed delete leaves an unreachable file, never a row without its file.
      yield* Effect.forEach(keys, (key) => store.delete(key), { discard: true })
    })

    const filters = Effect.gen(function*() {
      const providers = yield* repo.activeProviders
      const plans = yield* plansRepo.activeNames
      return ClaimFilters.make({
        statuses: claimStatuses,
        cpt_codes: cptCodes,
        places_of_service: placesOfService,
        insurance_plans: plans.map((p) => PlanName.make(p)),
        providers
      })
    }).pipe(Effect.withSpan("Claims.filters"))

    return { list, filter, show, create, update, remove, filters, cptCodes } as const
  })
}) {}
