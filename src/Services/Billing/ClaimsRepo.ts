/**
 * The only SQL on `claims` (ARCHITECTURE "Persistence"). Rows are decoded with schemas; SQL
 * errors are defects except the violations a caller can act on, which become 422s. It owns the
 * claim status machine's writes: an edit or a move checked by `Claims`, and `ready → submitted`
 * for an 837P batch (`markSubmitted`). Lookups of patients, providers and appointments that claims
 * need stay here until those areas have repositories of their own.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ClaimSortColumn } from "../../Api/Billing/Claims.js"
import { invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { amountOfCents, centsOfDecimal, Claim, ClaimStatus } from "../../Domain/Billing/Claim.js"
import { Relationship } from "../../Domain/Billing/Insurance.js"
import { AppointmentId, ClaimId, InsurancePlanId, PatientId, ProviderId } from "../../Domain/Ids.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { orDefect, SqlSchema, textArray } from "../Repository.js"
import { now } from "../Time.js"
import { subscriberFields } from "./CoveragesRepo.js"
import { participantFilters, visitCriteriaFields } from "../SqlFilters.js"
import { isForeignKeyViolation, isUniqueViolation } from "../SqlErrors.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

/** A claim with its patient's and provider's names; dates as `YYYY-MM-DD`, amounts as exact decimal text. */
export const ClaimRow = Schema.Struct({
  id: ClaimId,
  patient_id: PatientId,
  provider_id: ProviderId,
  appointment_id: AppointmentId,
  claim_number: Text,
  cpt_code: Text,
  modifiers: Schema.Array(Text),
  place_of_service: Text,
  diagnosis_codes: Schema.Array(Text),
  service_date: Text,
  amount: Text,
  status: ClaimStatus,
  submission_date: NullText,
  payment_amount: NullText,
  payment_date: NullText,
  denial_reason: NullText,
  insurance_plan_id: Schema.NullOr(InsurancePlanId),
  edi_batch_id: NullText,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  patient_first_name: Text,
  patient_last_name: Text,
  provider_first_name: Text,
  provider_last_name: Text
})
export type ClaimRow = typeof ClaimRow.Type

export const toClaim = (row: ClaimRow): Claim =>
  Claim.make({
    id: row.id,
    patient_id: row.patient_id,
    provider_id: row.provider_id,
    appointment_id: row.appointment_id,
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
    insurance_plan_id: row.insurance_plan_id,
    edi_batch_id: row.edi_batch_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** What a claim list may be narrowed and ordered by (general §4.6). */
export const ClaimCriteria = Schema.Struct({
  ...visitCriteriaFields,
  status: Schema.optional(Schema.NullOr(ClaimStatus)),
  patientId: Schema.optional(Schema.Number),
  providerId: Schema.optional(Schema.Number),
  appointmentId: Schema.optional(Schema.NullOr(Schema.Number)),
  insurancePlanId: Schema.optional(Schema.NullOr(Schema.Number)),
  sortBy: Schema.optional(ClaimSortColumn)
})
export type ClaimCriteria = typeof ClaimCriteria.Type


/** The billing fields a claim stores, normalised by `Claims`; the amount as exact decimal text. */
export const ClaimFields = Schema.Struct({
  patientId: Schema.Number,
  providerId: Schema.Number,
  appointmentId: Schema.Number,
  cptCode: Text,
  modifiers: Schema.Array(Text),
  placeOfService: Text,
  diagnosisCodes: Schema.Array(Text),
  serviceDate: Text,
  amount: Text
})
export type ClaimFields = typeof ClaimFields.Type

const NewClaim = Schema.Struct({ fields: ClaimFields, createdById: Schema.Number })

const ClaimChange = Schema.Struct({
  id: Schema.Number,
  fields: ClaimFields,
  status: ClaimStatus,
  paymentAmount: NullText,
  paymentDate: NullText,
  denialReason: NullText,
  /** The billed plan follows the patient's coverage when the billing fields change. */
  refreshPlan: Schema.Boolean
})
export type ClaimChange = typeof ClaimChange.Type

/** A claim with everything its 837P loops need: patient, coverage, plan and rendering provider. */
export const BatchClaimRow = Schema.Struct({
  id: ClaimId,
  claim_number: Text,
  status: ClaimStatus,
  cpt_code: Text,
  modifiers: Schema.Array(Text),
  place_of_service: Text,
  diagnosis_codes: Schema.Array(Text),
  service_date: Text,
  amount: Text,
  first_name: Text,
  last_name: Text,
  date_of_birth: NullText,
  gender: NullText,
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText,
  insurance_plan_id: Schema.NullOr(InsurancePlanId),
  member_id: NullText,
  group_number: NullText,
  relationship: Schema.NullOr(Relationship),
  ...subscriberFields,
  plan_name: NullText,
  payer_id: NullText,
  claim_filing_indicator: NullText,
  npi: NullText,
  provider_first_name: Text,
  provider_last_name: Text
})
export type BatchClaimRow = typeof BatchClaimRow.Type

const Submission = Schema.Struct({ ids: Schema.Array(Schema.Number), batchRowId: Schema.Number, submissionDate: Text })

/** What a claim's references look like, for the claim rules (one answer for every rule at once). */
const References = Schema.Struct({ patientId: Schema.Number, providerId: Schema.Number, appointmentId: Schema.Number, timeZone: Text })
const Exists = Schema.Struct({ exists: Schema.Boolean })
export const AppointmentOfClaim = Schema.Struct({ patient_id: Schema.Number, provider_id: Schema.Number, status: Text, day: Text })
export type AppointmentOfClaim = typeof AppointmentOfClaim.Type

const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed, never> =>
  isUniqueViolation(error, "claims_active_appointment_key")
    ? Effect.fail(invalidField("appointment_id", "has already been taken"))
    : isForeignKeyViolation(error, "claims_appointment_id_fkey")
    ? Effect.fail(invalidField("appointment_id", "must exist"))
    : isForeignKeyViolation(error, "claims_patient_id_fkey")
    ? Effect.fail(invalidField("patient_id", "must exist"))
    : isForeignKeyViolation(error, "claims_provider_id_fkey")
    ? Effect.fail(invalidField("provider_id", "must exist"))
    : Effect.die(error)

/** Dates as `YYYY-MM-DD` and amounts as exact decimal text (never through a float). */
const claimColumns = `c.id, c.patient_id, c.provider_id, c.appointment_id, c.claim_number, c.cpt_code, c.modifiers,
  c.place_of_service, c.diagnosis_codes, to_char(c.service_date, 'YYYY-MM-DD') AS service_date, c.amount::text AS amount,
  c.status, to_char(c.submission_date, 'YYYY-MM-DD') AS submission_date, c.payment_amount::text AS payment_amount,
  to_char(c.payment_date, 'YYYY-MM-DD') AS payment_date, c.denial_reason, c.insurance_plan_id, b.batch_id AS edi_batch_id,
  c.created_at, c.updated_at, pa.first_name AS patient_first_name, pa.last_name AS patient_last_name,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name`

const claimFrom = `claims c JOIN patients pa ON pa.id = c.patient_id JOIN providers p ON p.id = c.provider_id
  JOIN users pu ON pu.id = p.user_id JOIN appointments ap ON ap.id = c.appointment_id
  LEFT JOIN edi_batches b ON b.id = c.edi_batch_id`

export class ClaimsRepo extends Effect.Service<ClaimsRepo>()("app/ClaimsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(claimColumns)
    const from = sql.literal(claimFrom)

    const sortColumns: Record<ClaimSortColumn, Statement.Fragment> = {
      id: sql`c.id`,
      claim_number: sql`c.claim_number`,
      service_date: sql`c.service_date`,
      amount: sql`c.amount`,
      status: sql`c.status`,
      cpt_code: sql`c.cpt_code`,
      patient_id: sql`c.patient_id`,
      provider_id: sql`c.provider_id`,
      created_at: sql`c.created_at`,
      updated_at: sql`c.updated_at`
    }
    const filtersOf = (criteria: ClaimCriteria): Array<ListFilter> => [
        criteria.status != null && sql`c.status = ${criteria.status}`,
        criteria.patientId !== undefined && sql`c.patient_id = ${criteria.patientId}`,
        criteria.providerId !== undefined && sql`c.provider_id = ${criteria.providerId}`,
        criteria.appointmentId != null && sql`c.appointment_id = ${criteria.appointmentId}`,
        criteria.insurancePlanId != null && sql`c.insurance_plan_id = ${criteria.insurancePlanId}`,
        criteria.appointmentType != null && sql`ap.appointment_type = ${criteria.appointmentType}`,
        criteria.startDate != null && sql`c.service_date >= ${criteria.startDate}::date`,
        criteria.endDate != null && sql`c.service_date <= ${criteria.endDate}::date`,
        ...participantFilters(sql, criteria, (pattern) =>
          sql`c.claim_number ILIKE ${pattern} ESCAPE '\\' OR c.cpt_code ILIKE ${pattern} ESCAPE '\\'`)
      ]

    /** A page of claims in the criteria's order, with the count and the exact sum (numeric, as text) of every match. */
    const list = (criteria: ClaimCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: ClaimRow,
        filters: filtersOf(criteria),
        sort: { columns: sortColumns, by: criteria.sortBy ?? "service_date", dir: criteria.sortDir ?? "DESC", id: sortColumns.id },
        totals: { select: sql`coalesce(sum(c.amount), 0)::text AS total`, fields: { total: Text } }
      }, page)

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, lock: Schema.Boolean }),
      Result: ClaimRow,
      execute: ({ id, lock }) => sql`SELECT ${columns} FROM ${from} WHERE c.id = ${id} ${lock ? sql`FOR UPDATE OF c` : sql``}`
    })

    const findExists = SqlSchema.single({
      Request: Schema.Number,
      Result: Exists,
      execute: (id) => sql`SELECT EXISTS (SELECT 1 FROM claims WHERE id = ${id}) AS exists`
    })

    const findReferences = SqlSchema.single({
      Request: References,
      Result: Schema.Struct({ patient: Schema.Boolean, provider: Schema.Boolean }),
      execute: (r) =>
        sql`SELECT EXISTS (SELECT 1 FROM patients WHERE id = ${r.patientId}) AS patient,
          EXISTS (SELECT 1 FROM providers WHERE id = ${r.providerId}) AS provider`
    })

    const findAppointment = SqlSchema.findOne({
      Request: References,
      Result: AppointmentOfClaim,
      execute: (r) =>
        sql`SELECT patient_id, provider_id, status, to_char((scheduled_at AT TIME ZONE ${r.timeZone})::date, 'YYYY-MM-DD') AS day
          FROM appointments WHERE id = ${r.appointmentId}`
    })

    /** The patient's coverage plan now: the plan a claim bills. */
    const planOf = (patientId: number) => sql`(SELECT insurance_plan_id FROM patient_coverages WHERE patient_id = ${patientId})`

    const insertOne = SqlSchema.single({
      Request: NewClaim,
      Result: Schema.Struct({ id: ClaimId }),
      execute: ({ createdById, fields: f }) =>
        sql`INSERT INTO claims (patient_id, provider_id, appointment_id, cpt_code, modifiers,
            place_of_service, diagnosis_codes, service_date, amount, insurance_plan_id, created_by_id)
          VALUES (${f.patientId}, ${f.providerId}, ${f.appointmentId}, ${f.cptCode},
            ${textArray(f.modifiers)}::text[], ${f.placeOfService}, ${textArray(f.diagnosisCodes)}::text[],
            ${f.serviceDate}::date, ${f.amount}::numeric, ${planOf(f.patientId)}, ${createdById})
          RETURNING id`
    })

    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ ...ClaimChange.fields, at: Schema.DateFromSelf }),
      execute: (c) =>
        sql`UPDATE claims SET
            patient_id = ${c.fields.patientId},
            provider_id = ${c.fields.providerId},
            appointment_id = ${c.fields.appointmentId},
            cpt_code = ${c.fields.cptCode},
            modifiers = ${textArray(c.fields.modifiers)}::text[],
            place_of_service = ${c.fields.placeOfService},
            diagnosis_codes = ${textArray(c.fields.diagnosisCodes)}::text[],
            service_date = ${c.fields.serviceDate}::date,
            amount = ${c.fields.amount}::numeric,
            status = ${c.status},
            payment_amount = ${c.paymentAmount}::numeric,
            payment_date = ${c.paymentDate}::date,
            denial_reason = ${c.denialReason},
            insurance_plan_id = ${c.refreshPlan ? planOf(c.fields.patientId) : sql`insurance_plan_id`},
            updated_at = ${c.at}
          WHERE id = ${c.id}`
    })

    const deleteOne = SqlSchema.void({ Request: Schema.Number, execute: (id) => sql`DELETE FROM claims WHERE id = ${id}` })

    const lockBatch = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: BatchClaimRow,
      execute: (ids) =>
        sql`SELECT c.id, c.claim_number, c.status, c.cpt_code, c.modifiers, c.place_of_service,
            c.diagnosis_codes, to_char(c.service_date, 'YYYY-MM-DD') AS service_date, c.amount::text AS amount,
            pa.first_name, pa.last_name, to_char(pa.date_of_birth, 'YYYY-MM-DD') AS date_of_birth, pa.gender,
            pa.address, pa.city, pa.state, pa.zip,
            cov.insurance_plan_id, cov.member_id, cov.group_number, cov.relationship,
            cov.subscriber_first_name, cov.subscriber_last_name, to_char(cov.subscriber_date_of_birth, 'YYYY-MM-DD') AS subscriber_date_of_birth,
            cov.subscriber_gender, cov.subscriber_address, cov.subscriber_city, cov.subscriber_state, cov.subscriber_zip,
            ip.name AS plan_name, ip.payer_id, ip.claim_filing_indicator,
            pr.npi, pu.first_name AS provider_first_name, pu.last_name AS provider_last_name
          FROM claims c
            JOIN patients pa ON pa.id = c.patient_id
            JOIN providers pr ON pr.id = c.provider_id
            JOIN users pu ON pu.id = pr.user_id
            LEFT JOIN patient_coverages cov ON cov.patient_id = c.patient_id
            LEFT JOIN insurance_plans ip ON ip.id = cov.insurance_plan_id
          WHERE c.id = ANY(${ids as Array<number>}::int[])
          ORDER BY c.id
          FOR UPDATE OF c`
    })

    // Only a ready claim is submitted (the caller has locked and checked them), with the plan it bills.
    const submit = SqlSchema.void({
      Request: Schema.Struct({ ...Submission.fields, at: Schema.DateFromSelf }),
      execute: (s) =>
        sql`UPDATE claims c SET status = 'submitted', edi_batch_id = ${s.batchRowId}, submission_date = ${s.submissionDate}::date,
            insurance_plan_id = cov.insurance_plan_id, updated_at = ${s.at}
          FROM patient_coverages cov
          WHERE c.id = ANY(${s.ids as Array<number>}::int[]) AND c.status = 'ready' AND cov.patient_id = c.patient_id`
    })

    const activeProviders = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PersonName,
      execute: () =>
        sql`SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), p.id LIMIT 1000`
    })

    return {
      list,
      /** The claim, locked `FOR UPDATE` inside a transaction when `lock`. */
      findById: (id: number, lock = false) => orDefect(findById({ id, lock })),
      exists: (id: number) => Effect.map(orDefect(findExists(id)), (row) => row.exists),
      /** Whether the patient and provider exist, and the appointment with its day in `timeZone`. */
      references: (r: typeof References.Type) =>
        orDefect(Effect.all({ found: findReferences(r), appointment: Effect.map(findAppointment(r), Option.getOrUndefined) })),
      insert: (fields: ClaimFields, createdById: number) =>
        insertOne({ fields, createdById }).pipe(Effect.map((row) => row.id), Effect.catchTag("SqlError", writeErrors), orDefect),
      update: (change: ClaimChange) =>
        Effect.flatMap(now, (at) => updateOne({ ...change, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      delete: (id: number) => orDefect(deleteOne(id)),
      /** The claims of a batch with their 837P data, locked in id order. */
      lockForBatch: (ids: ReadonlyArray<number>) => orDefect(lockBatch(ids)),
      /** `ready → submitted` in a batch: the only way a claim becomes submitted. */
      markSubmitted: (submission: typeof Submission.Type) => Effect.flatMap(now, (at) => orDefect(submit({ ...submission, at }))),
      /** Active providers by name, for the claim filters (at most 1000). */
      activeProviders: orDefect(activeProviders(undefined))
    } as const
  })
}) {}
