/**
 * The only SQL on `patient_coverages` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects, foreign-key violations the 422/404 a caller can act on. The reads of `patients` and
 * `users` coverage needs (who may see the patient, the guardian's account) stay here until those
 * areas have repositories of their own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { invalidField, type NotFound, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { Gender, Relationship } from "../../Domain/Billing/Insurance.js"
import { InsurancePlanId, PatientId } from "../../Domain/Ids.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"
import { isForeignKeyViolation } from "../SqlErrors.js"

const NullText = Schema.NullOr(Schema.String)

/** The policy holder's columns, as stored (837P loop 2010BA when the patient is not the subscriber). */
export const subscriberFields = {
  subscriber_first_name: NullText,
  subscriber_last_name: NullText,
  subscriber_date_of_birth: NullText,
  subscriber_gender: Schema.NullOr(Gender),
  subscriber_address: NullText,
  subscriber_city: NullText,
  subscriber_state: NullText,
  subscriber_zip: NullText
}

/** A coverage with its patient's own details (the subscriber when the patient holds the policy). */
export const CoverageRow = Schema.Struct({
  patient_id: PatientId,
  insurance_plan_id: InsurancePlanId,
  member_id: Schema.String,
  group_number: NullText,
  relationship: Relationship,
  ...subscriberFields,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  patient_first_name: Schema.String,
  patient_last_name: Schema.String,
  patient_date_of_birth: NullText,
  patient_gender: NullText,
  patient_address: NullText,
  patient_city: NullText,
  patient_state: NullText,
  patient_zip: NullText
})
export type CoverageRow = typeof CoverageRow.Type

/** What `PUT …/coverage` stores; subscriber fields are null for `self`. */
export const CoverageValues = Schema.Struct({
  patientId: Schema.Number,
  insurancePlanId: Schema.Number,
  memberId: Schema.String,
  groupNumber: NullText,
  relationship: Relationship,
  firstName: NullText,
  lastName: NullText,
  dateOfBirth: NullText,
  gender: Schema.NullOr(Gender),
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText
})

const PatientOf = Schema.Struct({ patientId: Schema.Number, userId: Schema.NullOr(Schema.Number) })
const LinkedPatient = Schema.Struct({ id: PatientId, user_id: Schema.NullOr(Schema.Number) })
const AccountPerson = Schema.Struct({ first_name: Schema.String, last_name: Schema.String, date_of_birth: NullText })

export class CoveragesRepo extends Effect.Service<CoveragesRepo>()("app/CoveragesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findByPatient = SqlSchema.findOne({
      Request: Schema.Number,
      Result: CoverageRow,
      execute: (patientId) =>
        sql`SELECT c.patient_id, c.insurance_plan_id, c.member_id, c.group_number, c.relationship,
            c.subscriber_first_name, c.subscriber_last_name, to_char(c.subscriber_date_of_birth, 'YYYY-MM-DD') AS subscriber_date_of_birth,
            c.subscriber_gender, c.subscriber_address, c.subscriber_city, c.subscriber_state, c.subscriber_zip, c.created_at, c.updated_at,
            p.first_name AS patient_first_name, p.last_name AS patient_last_name,
            to_char(p.date_of_birth, 'YYYY-MM-DD') AS patient_date_of_birth, p.gender AS patient_gender, p.address AS patient_address,
            p.city AS patient_city, p.state AS patient_state, p.zip AS patient_zip
          FROM patient_coverages c JOIN patients p ON p.id = c.patient_id WHERE c.patient_id = ${patientId}`
    })

    const upsert = SqlSchema.void({
      Request: Schema.Struct({ ...CoverageValues.fields, at: Schema.DateFromSelf }),
      execute: (c) =>
        sql`INSERT INTO patient_coverages (patient_id, insurance_plan_id, member_id, group_number, relationship,
            subscriber_first_name, subscriber_last_name, subscriber_date_of_birth, subscriber_gender, subscriber_address,
            subscriber_city, subscriber_state, subscriber_zip, created_at, updated_at)
          VALUES (${c.patientId}, ${c.insurancePlanId}, ${c.memberId}, ${c.groupNumber}, ${c.relationship},
            ${c.firstName}, ${c.lastName}, ${c.dateOfBirth}::date, ${c.gender},
            ${c.address}, ${c.city}, ${c.state}, ${c.zip}, ${c.at}, ${c.at})
          ON CONFLICT (patient_id) DO UPDATE SET insurance_plan_id = EXCLUDED.insurance_plan_id, member_id = EXCLUDED.member_id,
            group_number = EXCLUDED.group_number, relationship = EXCLUDED.relationship,
            subscriber_first_name = EXCLUDED.subscriber_first_name, subscriber_last_name = EXCLUDED.subscriber_last_name,
            subscriber_date_of_birth = EXCLUDED.subscriber_date_of_birth, subscriber_gender = EXCLUDED.subscriber_gender,
            subscriber_address = EXCLUDED.subscriber_address, subscriber_city = EXCLUDED.subscriber_city,
            subscriber_state = EXCLUDED.subscriber_state, subscriber_zip = EXCLUDED.subscriber_zip, updated_at = EXCLUDED.updated_at`
    })

    const findPatient = SqlSchema.findOne({
      Request: PatientOf,
      Result: LinkedPatient,
      execute: ({ patientId, userId }) =>
        sql`SELECT id, user_id FROM patients WHERE id = ${patientId} ${userId === null ? sql`` : sql`AND user_id = ${userId}`}`
    })

    const findAccount = SqlSchema.findOne({
      Request: Schema.Number,
      Result: AccountPerson,
      execute: (userId) => sql`SELECT first_name, last_name, to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth FROM users WHERE id = ${userId}`
    })

    const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed | NotFound> =>
      isForeignKeyViolation(error, "patient_coverages_insurance_plan_id_fkey")
        ? Effect.fail(invalidField("insurance_plan_id", "must exist"))
        : isForeignKeyViolation(error, "patient_coverages_patient_id_fkey")
        ? Effect.fail(notFound("Patient"))
        : Effect.die(error)

    return {
      findByPatient: (patientId: number) => orDefect(findByPatient(patientId)),
      /** Creates or replaces the patient's one coverage. */
      save: (coverage: typeof CoverageValues.Type) =>
        Effect.flatMap(now, (at) => upsert({ ...coverage, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** The patient, if any; only when linked to `linkedTo` unless that is null. */
      findPatient: (patientId: number, linkedTo: number | null) => orDefect(findPatient({ patientId, userId: linkedTo })),
      /** The names and date of birth of the account linked to a patient (the guardian). */
      findAccount: (userId: number) => orDefect(findAccount(userId))
    } as const
  })
}) {}
