/** Insurance plans and patient coverage (issue 19: the 837P subscriber and payer loops). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CreateInsurancePlanRequest, UpdateCoverageRequest, UpdateInsurancePlanRequest } from "../../Api/Billing/Insurance.js"
import { InsurancePlanList } from "../../Api/Billing/Insurance.js"
import { invalid, invalidField, type NotFound, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { Coverage, InsurancePlan, Subscriber } from "../../Domain/Billing/Insurance.js"
import type { InsurancePlanId, PatientId } from "../../Domain/Ids.js"
import { likePattern } from "../SqlSearch.js"
import { canSeePatient, type Viewer } from "../Access/Access.js"
import { AuditLog } from "../AuditLog.js"
import { isForeignKeyViolation } from "../SqlErrors.js"

interface PlanRow {
  readonly id: number
  readonly name: string
  readonly payer_id: string
  readonly claim_filing_indicator: InsurancePlan["claim_filing_indicator"]
  readonly active: boolean
  readonly created_at: Date
  readonly updated_at: Date
}

const toPlan = (row: PlanRow) => InsurancePlan.make({ ...row, id: row.id as InsurancePlanId }, true)

interface CoverageRow {
  readonly patient_id: number
  readonly insurance_plan_id: number
  readonly member_id: string
  readonly group_number: string | null
  readonly relationship: Coverage["relationship"]
  readonly subscriber_first_name: string | null
  readonly subscriber_last_name: string | null
  readonly subscriber_date_of_birth: string | null
  readonly subscriber_gender: "F" | "M" | "U" | null
  readonly subscriber_address: string | null
  readonly subscriber_city: string | null
  readonly subscriber_state: string | null
  readonly subscriber_zip: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly patient_date_of_birth: string | null
  readonly patient_gender: string | null
  readonly patient_address: string | null
  readonly patient_city: string | null
  readonly patient_state: string | null
  readonly patient_zip: string | null
}

const genderOf = (text: string | null): "F" | "M" | "U" | null => {
  const g = (text ?? "").trim().toLowerCase()
  return g === "" ? null : g === "f" || g === "female" ? "F" : g === "m" || g === "male" ? "M" : "U"
}

const blank = (text: string | null | undefined): string | null => {
  const trimmed = text?.trim() ?? ""
  return trimmed === "" ? null : trimmed
}

export class Insurance extends Effect.Service<Insurance>()("app/Insurance", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    const findPlan = (id: number) =>
      sql<PlanRow>`SELECT * FROM insurance_plans WHERE id = ${id}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Insurance plan")) : Effect.succeed(toPlan(rows[0])))
      )

    const listPlans = (search: string | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const text = blank(search)
        const where = text === null ? sql`TRUE` : sql`(name ILIKE ${likePattern(text)} ESCAPE '\\' OR payer_id ILIKE ${likePattern(text)} ESCAPE '\\')`
        const rows = yield* sql<PlanRow>`SELECT * FROM insurance_plans WHERE ${where} ORDER BY lower(name), id
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM insurance_plans WHERE ${where}`
        return InsurancePlanList.make({ insurance_plans: rows.map(toPlan), pagination: paginationOf(request, counted?.count ?? 0) })
      }).pipe(Effect.orDie, Effect.withSpan("Insurance.listPlans"))

    const createPlan = (actorId: number, input: CreateInsurancePlanRequest["insurance_plan"]) =>
      Effect.gen(function*() {
        const [row] = yield* sql<PlanRow>`INSERT INTO insurance_plans (name, payer_id, claim_filing_indicator, active)
          VALUES (${input.name.trim()}, ${input.payer_id.trim()}, ${input.claim_filing_indicator}, ${input.active ?? true}) RETURNING *`.pipe(Effect.orDie)
        yield* audit.record({ actorId, action: "insurance_plan.create", targetType: "insurance_plan", targetId: row!.id })
        return toPlan(row!)
      }).pipe(Effect.withSpan("Insurance.createPlan"))

    const updatePlan = (actorId: number, id: number, input: UpdateInsurancePlanRequest["insurance_plan"]) =>
      Effect.gen(function*() {
        const rows = yield* sql<PlanRow>`UPDATE insurance_plans SET
            name = coalesce(${input.name?.trim() ?? null}, name),
            payer_id = coalesce(${input.payer_id?.trim() ?? null}, payer_id),
            claim_filing_indicator = coalesce(${input.claim_filing_indicator ?? null}, claim_filing_indicator),
            active = coalesce(${input.active ?? null}::boolean, active),
            updated_at = now()
          WHERE id = ${id} RETURNING *`.pipe(Effect.orDie)
        if (rows[0] === undefined) return yield* Effect.fail(notFound("Insurance plan"))
        yield* audit.record({ actorId, action: "insurance_plan.update", targetType: "insurance_plan", targetId: id })
        return toPlan(rows[0])
      }).pipe(Effect.withSpan("Insurance.updatePlan", { attributes: { "insurance_plan.id": id } }))

    /** The patient (with its linked account) when the caller may see it (Access's rule); otherwise 404, as for an unknown id. */
    const visiblePatient = (viewer: Viewer, patientId: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ id: number; user_id: number | null }>`SELECT id, user_id FROM patients WHERE id = ${patientId}`
        if (row === undefined || !canSeePatient(viewer, row)) return yield* Effect.fail(notFound("Patient"))
        return row
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const coverageRow = (patientId: number) =>
      sql<CoverageRow>`SELECT c.patient_id, c.insurance_plan_id, c.member_id, c.group_number, c.relationship,
          c.subscriber_first_name, c.subscriber_last_name, to_char(c.subscriber_date_of_birth, 'YYYY-MM-DD') AS subscriber_date_of_birth,
          c.subscriber_gender, c.subscriber_address, c.subscriber_city, c.subscriber_state, c.subscriber_zip, c.created_at, c.updated_at,
          p.first_name AS patient_first_name, p.last_name AS patient_last_name,
          to_char(p.date_of_birth, 'YYYY-MM-DD') AS patient_date_of_birth, p.gender AS patient_gender, p.address AS patient_address,
          p.city AS patient_city, p.state AS patient_state, p.zip AS patient_zip
        FROM patient_coverages c JOIN patients p ON p.id = c.patient_id WHERE c.patient_id = ${patientId}`.pipe(Effect.orDie)

    const toCoverage = (row: CoverageRow, plan: InsurancePlan) => {
      const self = row.relationship === "self"
      return Coverage.make({
        patient_id: row.patient_id as PatientId,
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

    const showCoverage = (viewer: Viewer, patientId: number) =>
      Effect.gen(function*() {
        yield* visiblePatient(viewer, patientId)
        const [row] = yield* coverageRow(patientId)
        if (row === undefined) return yield* Effect.fail(notFound("Coverage"))
        return toCoverage(row, yield* Effect.orDie(findPlan(row.insurance_plan_id)))
      }).pipe(Effect.withSpan("Insurance.showCoverage", { attributes: { "patient.id": patientId } }))

    /**
     * The subscriber rule (docs/spec-decisions.md): `self` — the patient. Otherwise the guardian named
     * in the request; fields not given come from the account linked to the patient (`patients.user_id`,
     * the parent), and the address from the patient's when neither has one.
     */
    const setCoverage = (viewer: Viewer, patientId: number, input: UpdateCoverageRequest["coverage"]) =>
      Effect.gen(function*() {
        const patient = yield* visiblePatient(viewer, patientId)
        const relationship = input.relationship ?? "self"
        const given = input.subscriber ?? {}
        let subscriber = {
          first_name: blank(given.first_name), last_name: blank(given.last_name), date_of_birth: given.date_of_birth ?? null,
          gender: given.gender ?? null, address: blank(given.address), city: blank(given.city), state: blank(given.state)?.toUpperCase() ?? null,
          zip: blank(given.zip)
        }
        if (relationship !== "self") {
          if (patient.user_id !== null && (subscriber.first_name === null || subscriber.last_name === null || subscriber.date_of_birth === null)) {
            const [account] = yield* sql<{ first_name: string; last_name: string; date_of_birth: string | null }>`
              SELECT first_name, last_name, to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth FROM users WHERE id = ${patient.user_id}`.pipe(Effect.orDie)
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
        const [plan] = yield* sql<{ active: boolean }>`SELECT active FROM insurance_plans WHERE id = ${input.insurance_plan_id}`.pipe(Effect.orDie)
        if (plan === undefined || !plan.active) return yield* Effect.fail(invalidField("insurance_plan_id", "must exist"))
        yield* sql`INSERT INTO patient_coverages (patient_id, insurance_plan_id, member_id, group_number, relationship,
            subscriber_first_name, subscriber_last_name, subscriber_date_of_birth, subscriber_gender, subscriber_address,
            subscriber_city, subscriber_state, subscriber_zip)
          VALUES (${patientId}, ${input.insurance_plan_id}, ${input.member_id.trim()}, ${blank(input.group_number)}, ${relationship},
            ${subscriber.first_name}, ${subscriber.last_name}, ${subscriber.date_of_birth}::date, ${subscriber.gender},
            ${subscriber.address}, ${subscriber.city}, ${subscriber.state}, ${subscriber.zip})
          ON CONFLICT (patient_id) DO UPDATE SET insurance_plan_id = EXCLUDED.insurance_plan_id, member_id = EXCLUDED.member_id,
            group_number = EXCLUDED.group_number, relationship = EXCLUDED.relationship,
            subscriber_first_name = EXCLUDED.subscriber_first_name, subscriber_last_name = EXCLUDED.subscriber_last_name,
            subscriber_date_of_birth = EXCLUDED.subscriber_date_of_birth, subscriber_gender = EXCLUDED.subscriber_gender,
            subscriber_address = EXCLUDED.subscriber_address, subscriber_city = EXCLUDED.subscriber_city,
            subscriber_state = EXCLUDED.subscriber_state, subscriber_zip = EXCLUDED.subscriber_zip, updated_at = now()`.pipe(
          Effect.catchTag("SqlError", (error): Effect.Effect<never, ValidationFailed | NotFound> =>
            isForeignKeyViolation(error, "patient_coverages_insurance_plan_id_fkey")
              ? Effect.fail(invalidField("insurance_plan_id", "must exist"))
              : isForeignKeyViolation(error, "patient_coverages_patient_id_fkey")
              ? Effect.fail(notFound("Patient"))
              : Effect.die(error))
        )
        yield* audit.record({ actorId: viewer.id, action: "coverage.update", targetType: "patient", targetId: patientId })
        return yield* showCoverage(viewer, patientId)
      }).pipe(Effect.withSpan("Insurance.setCoverage", { attributes: { "patient.id": patientId } }))

    return { listPlans, findPlan, createPlan, updatePlan, showCoverage, setCoverage } as const
  })
}) {}
