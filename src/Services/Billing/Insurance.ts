/** Insurance plans and patient coverage (the 837P subscriber and payer loops). */
import { Effect, Option } from "effect"
import type { CreateInsurancePlanRequest, UpdateCoverageRequest, UpdateInsurancePlanRequest } from "../../Api/Billing/Insurance.js"
import { InsurancePlanList } from "../../Api/Billing/Insurance.js"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { Coverage, type InsurancePlan, Subscriber } from "../../Domain/Billing/Insurance.js"
import { Access, type Viewer } from "../Access/Access.js"
import { AuditLog } from "../AuditLog.js"
import { type CoverageRow, CoveragesRepo } from "./CoveragesRepo.js"
import { InsurancePlansRepo } from "./InsurancePlansRepo.js"
import { blankToNull } from "../Repository.js"

const genderOf = (text: string | null): "F" | "M" | "U" | null => {
  const g = (text ?? "").trim().toLowerCase()
  return g === "" ? null : g === "f" || g === "female" ? "F" : g === "m" || g === "male" ? "M" : "U"
}

export class Insurance extends Effect.Service<Insurance>()("app/Insurance", {
  dependencies: [InsurancePlansRepo.Default, CoveragesRepo.Default, Access.Default],
  effect: Effect.gen(function*() {
    const plans = yield* InsurancePlansRepo
    const coverages = yield* CoveragesRepo
    const access = yield* Access
    const audit = yield* AuditLog

    const planNotFound = () => Effect.fail(notFound("Insurance plan"))

    const findPlan = (id: number) => Effect.flatMap(plans.findById(id), Option.match({ onNone: planNotFound, onSome: Effect.succeed }))

    const listPlans = Effect.fn("Insurance.listPlans")(function*(search: string | undefined, request: PageRequest) {
      const { pagination, rows } = yield* plans.list(blankToNull(search), request)
      return InsurancePlanList.make({ insurance_plans: rows, pagination })
    })

    const createPlan = Effect.fn("Insurance.createPlan")(function*(actorId: number, input: CreateInsurancePlanRequest["insurance_plan"]) {
      const plan = yield* plans.insert({
        name: input.name.trim(), payer_id: input.payer_id.trim(), claim_filing_indicator: input.claim_filing_indicator, active: input.active ?? true
      })
      yield* audit.record({ actorId, action: "insurance_plan.create", targetType: "insurance_plan", targetId: plan.id })
      return plan
    })

    const updatePlan = Effect.fn("Insurance.updatePlan")(function*(actorId: number, id: number, input: UpdateInsurancePlanRequest["insurance_plan"]) {
      yield* Effect.annotateCurrentSpan({ "insurance_plan.id": id })
      const changed = yield* plans.update({
        id,
        name: input.name?.trim() ?? null,
        payer_id: input.payer_id?.trim() ?? null,
        claim_filing_indicator: input.claim_filing_indicator ?? null,
        active: input.active ?? null
      })
      if (Option.isNone(changed)) return yield* planNotFound()
      yield* audit.record({ actorId, action: "insurance_plan.update", targetType: "insurance_plan", targetId: id })
      return changed.value
    })

    /** The patient (with its linked account) when the caller may see it (Access's rule); otherwise 404, as for an unknown id. */
    const visiblePatient = (viewer: Viewer, patientId: number) =>
      Effect.flatMap(
        Effect.zipRight(access.visiblePatient(viewer, patientId), coverages.findPatient(patientId, null)),
        Option.match({ onNone: () => Effect.fail(notFound("Patient")), onSome: Effect.succeed })
      )

    const toCoverage = (row: CoverageRow, plan: InsurancePlan) => {
      const self = row.relationship === "self"
      return Coverage.make({
        patient_id: row.patient_id,
        insurance_plan: plan,
        member_id: row.member_id,
        group_number: row.group_number,
        relationship: row.relationship,
        subscriber: Subscriber.make(self
          ? {
            first_name: row.patient_first_name, last_name: row.patient_last_name, date_of_birth: row.patient_date_of_birth,
            gender: genderOf(row.patient_gender), address: row.patient_address, city: row.patient_city, state: row.patient_state,
            zip: row.patient_zip
          }
          : {
            first_name: row.subscriber_first_name ?? "", last_name: row.subscriber_last_name ?? "",
            date_of_birth: row.subscriber_date_of_birth, gender: row.subscriber_gender, address: row.subscriber_address,
            city: row.subscriber_city, state: row.subscriber_state, zip: row.subscriber_zip
          }),
        created_at: row.created_at,
        updated_at: row.updated_at
      }, true)
    }

    const showCoverage = Effect.fn("Insurance.showCoverage")(function*(viewer: Viewer, patientId: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      yield* visiblePatient(viewer, patientId)
      const row = yield* coverages.findByPatient(patientId)
      if (Option.isNone(row)) return yield* Effect.fail(notFound("Coverage"))
      return toCoverage(row.value, yield* Effect.orDie(findPlan(row.value.insurance_plan_id)))
    })

    /**
     * The subscriber rule (docs/spec-decisions.md): `self` — the patient. Otherwise the guardian named
     * in the request; fields not given come from the account linked to the patient (`patients.user_id`,
     * the parent), and the address from the patient's when neither has one.
     */
    const setCoverage = Effect.fn("Insurance.setCoverage")(function*(viewer: Viewer, patientId: number, input: UpdateCoverageRequest["coverage"]) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const patient = yield* visiblePatient(viewer, patientId)
      const relationship = input.relationship ?? "self"
      const given = input.subscriber ?? {}
      let subscriber = {
        first_name: blankToNull(given.first_name), last_name: blankToNull(given.last_name), date_of_birth: given.date_of_birth ?? null,
        gender: given.gender ?? null, address: blankToNull(given.address), city: blankToNull(given.city), state: blankToNull(given.state)?.toUpperCase() ?? null,
        zip: blankToNull(given.zip)
      }
      if (relationship !== "self") {
        if (patient.user_id !== null && (subscriber.first_name === null || subscriber.last_name === null || subscriber.date_of_birth === null)) {
          const account = Option.getOrUndefined(yield* coverages.findAccount(patient.user_id))
          if (account !== undefined && subscriber.first_name === null && subscriber.last_name === null) {
            subscriber = { ...subscriber, first_name: account.first_name, last_name: account.last_name }
          }
          if (account !== undefined && subscriber.date_of_birth === null) subscriber = { ...subscriber, date_of_birth: account.date_of_birth }
        }
        const errors: Record<string, Array<string>> = {}
        if (subscriber.first_name === null) errors["subscriber.first_name"] = ["can't be blank"]
        if (subscriber.last_name === null) errors["subscriber.last_name"] = ["can't be blank"]
        if (subscriber.date_of_birth === null) errors["subscriber.date_of_birth"] = ["can't be blank"]
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      } else {
        subscriber = { first_name: null, last_name: null, date_of_birth: null, gender: null, address: null, city: null, state: null, zip: null }
      }
      if (!(yield* plans.isActive(input.insurance_plan_id))) return yield* Effect.fail(invalidField("insurance_plan_id", "must exist"))
      yield* coverages.save({
        patientId,
        insurancePlanId: input.insurance_plan_id,
        memberId: input.member_id.trim(),
        groupNumber: blankToNull(input.group_number),
        relationship,
        firstName: subscriber.first_name,
        lastName: subscriber.last_name,
        dateOfBirth: subscriber.date_of_birth,
        gender: subscriber.gender,
        address: subscriber.address,
        city: subscriber.city,
        state: subscriber.state,
        zip: subscriber.zip
      })
      yield* audit.record({ actorId: viewer.id, action: "coverage.update", targetType: "patient", targetId: patientId })
      return yield* showCoverage(viewer, patientId)
    })

    return { listPlans, findPlan, createPlan, updatePlan, showCoverage, setCoverage } as const
  })
}) {}
