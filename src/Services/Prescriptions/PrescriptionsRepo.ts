/**
 * The only SQL on `prescriptions` (ARCHITECTURE "Persistence"), and the owner of their status
 * machine's writes: an edit or a move checked by `Prescriptions`, a cancel, a refill, and the daily
 * `active → expired`. Rows carry the medication and the people's names; they are decoded with
 * schemas, and SQL errors are defects. `updated_at` comes from the clock.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { MedicationId, PatientId, PrescriptionId, ProviderId, UserId } from "../../Domain/Ids.js"
import { MedicationSummary, Prescription, PrescriptionStatus } from "../../Domain/Prescriptions/Prescription.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"
import { medicationNameMatches } from "./MedicationsRepo.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

/** A prescription with its medication and the people's names; dates as `YYYY-MM-DD`. */
export const PrescriptionRow = Schema.Struct({
  id: PrescriptionId,
  patient_id: PatientId,
  provider_id: ProviderId,
  medication_id: MedicationId,
  dosage: Text,
  frequency: Text,
  quantity: Schema.Int,
  refills: Schema.Int,
  refills_remaining: Schema.Int,
  instructions: NullText,
  prescription_date: Text,
  status: PrescriptionStatus,
  start_date: NullText,
  end_date: NullText,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  medication_name: Text,
  generic_name: Text,
  brand_names: Schema.Array(Text),
  strength: Text,
  dosage_form: Text,
  patient_first_name: Text,
  patient_last_name: Text,
  patient_user_id: Schema.NullOr(UserId),
  provider_first_name: Text,
  provider_last_name: Text,
  provider_supervisor_id: Schema.NullOr(ProviderId)
})
export type PrescriptionRow = typeof PrescriptionRow.Type

export const toMedicationSummary = (row: PrescriptionRow): MedicationSummary =>
  MedicationSummary.make({
    id: row.medication_id,
    name: row.medication_name,
    generic_name: row.generic_name,
    brand_names: row.brand_names,
    strength: row.strength,
    dosage_form: row.dosage_form
  }, true)

export const toPrescription = (row: PrescriptionRow): Prescription =>
  Prescription.make({
    id: row.id,
    patient_id: row.patient_id,
    provider_id: row.provider_id,
    medication_id: row.medication_id,
    dosage: row.dosage,
    frequency: row.frequency,
    quantity: row.quantity,
    refills: row.refills,
    refills_remaining: row.refills_remaining,
    instructions: row.instructions,
    prescription_date: row.prescription_date,
    status: row.status,
    start_date: row.start_date,
    end_date: row.end_date,
    created_at: row.created_at,
    updated_at: row.updated_at,
    medication: toMedicationSummary(row),
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name })
  }, true)

/** What a prescription list may be narrowed by (general §4.8). */
export interface PrescriptionCriteria {
  readonly patientId?: number | undefined
  readonly providerId?: number | undefined
  readonly status?: PrescriptionStatus | undefined
  readonly medicationName?: string | undefined
}

/** What a prescription says besides its status, checked by `Prescriptions`; dates as `YYYY-MM-DD`. */
export const Terms = Schema.Struct({
  patientId: Schema.Number,
  providerId: Schema.Number,
  medicationId: Schema.Number,
  dosage: Text,
  frequency: Text,
  quantity: Schema.Int,
  refills: Schema.Int,
  refillsRemaining: Schema.Int,
  instructions: NullText,
  prescriptionDate: Text,
  startDate: NullText,
  endDate: NullText
})
export type Terms = typeof Terms.Type

/** One medication of a patient's history: when it was first and last prescribed. */
export const MedicationGroupRow = Schema.Struct({ medication_id: MedicationId, first_prescribed: Text, last_prescribed: Text })
export type MedicationGroupRow = typeof MedicationGroupRow.Type

const Id = Schema.Struct({ id: PrescriptionId })

const columns = `r.id, r.patient_id, r.provider_id, r.medication_id, r.dosage, r.frequency, r.quantity, r.refills,
  r.refills_remaining, r.instructions, to_char(r.prescription_date, 'YYYY-MM-DD') AS prescription_date, r.status,
  to_char(r.start_date, 'YYYY-MM-DD') AS start_date, to_char(r.end_date, 'YYYY-MM-DD') AS end_date, r.created_at, r.updated_at,
  m.name AS medication_name, m.generic_name, m.brand_names, m.strength, m.dosage_form,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name, pa.user_id AS patient_user_id,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.supervisor_id AS provider_supervisor_id`

const from = `prescriptions r JOIN medications m ON m.id = r.medication_id JOIN patients pa ON pa.id = r.patient_id
  JOIN providers p ON p.id = r.provider_id JOIN users pu ON pu.id = p.user_id`

/** How many active prescriptions past their end date one expiry batch claims. */
export const expiryBatchSize = 500

export class PrescriptionsRepo extends Effect.Service<PrescriptionsRepo>()("app/PrescriptionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)
    const tables = sql.literal(from)

    const newestFirst = { prescription_date: sql`r.prescription_date` }
    /** A page of the prescriptions in `scope` (`Access.scope.prescriptions`: a condition on `r`, `pa` and `p`), newest first. */
    const list = (scope: Statement.Fragment, criteria: PrescriptionCriteria, page: PageRequest) => {
      const name = criteria.medicationName?.trim() ?? ""
      return listPage({
        select: cols,
        from: tables,
        row: PrescriptionRow,
        scope,
        filters: [
          criteria.patientId !== undefined && sql`r.patient_id = ${criteria.patientId}`,
          criteria.providerId !== undefined && sql`r.provider_id = ${criteria.providerId}`,
          criteria.status !== undefined && sql`r.status = ${criteria.status}`,
          name !== "" && medicationNameMatches(sql, name)
        ],
        sort: { columns: newestFirst, by: "prescription_date", dir: "DESC", id: sql`r.id` }
      }, page)
    }
    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, lock: Schema.Boolean }),
      Result: PrescriptionRow,
      execute: ({ id, lock }) => sql`SELECT ${cols} FROM ${tables} WHERE r.id = ${id} ${lock ? sql`FOR UPDATE OF r` : sql``}`
    })
    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ terms: Terms, createdById: Schema.Number }),
      Result: Id,
      execute: ({ createdById, terms: t }) =>
        sql`INSERT INTO prescriptions (patient_id, provider_id, medication_id, dosage, frequency,
              quantity, refills, refills_remaining, instructions, prescription_date, start_date, end_date, created_by_id)
            VALUES (${t.patientId}, ${t.providerId}, ${t.medicationId}, ${t.dosage}, ${t.frequency}, ${t.quantity},
              ${t.refills}, ${t.refillsRemaining}, ${t.instructions}, ${t.prescriptionDate}::date, ${t.startDate}::date,
              ${t.endDate}::date, ${createdById})
            RETURNING id`
    })
    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, terms: Terms, status: PrescriptionStatus, at: Schema.DateFromSelf }),
      execute: ({ at, id, status, terms: t }) =>
        sql`UPDATE prescriptions SET
              patient_id = ${t.patientId}, provider_id = ${t.providerId}, medication_id = ${t.medicationId},
              dosage = ${t.dosage}, frequency = ${t.frequency}, quantity = ${t.quantity}, refills = ${t.refills},
              refills_remaining = ${t.refillsRemaining}, instructions = ${t.instructions},
              prescription_date = ${t.prescriptionDate}::date, start_date = ${t.startDate}::date, end_date = ${t.endDate}::date,
              status = ${status}, updated_at = ${at}
            WHERE id = ${id}`
    })
    const cancelOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      execute: ({ at, id }) => sql`UPDATE prescriptions SET status = 'cancelled', updated_at = ${at} WHERE id = ${id}`
    })
    const refillOne = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, id }) =>
        sql`UPDATE prescriptions SET refills_remaining = refills_remaining - 1, updated_at = ${at}
            WHERE id = ${id} AND refills_remaining > 0 RETURNING id`
    })
    const expireBatch = SqlSchema.findAll({
      Request: Schema.Struct({ day: Text, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, day }) =>
        sql`UPDATE prescriptions r SET status = 'expired', updated_at = ${at}
            WHERE r.id IN (SELECT id FROM prescriptions WHERE status = 'active' AND end_date < ${day}::date
              ORDER BY id LIMIT ${expiryBatchSize} FOR UPDATE SKIP LOCKED)
              AND r.status = 'active'
            RETURNING r.id`
    })
    // One row per medication; the newest prescription's id (unique) breaks ties of the last date.
    const lastPrescribed = { last_date: sql`g.last_date` }
    /** A page of the medications of a patient's prescriptions, most recently prescribed first. */
    const medicationGroups = (patientId: number, page: PageRequest) =>
      listPage({
        select: sql`g.medication_id, to_char(g.first_date, 'YYYY-MM-DD') AS first_prescribed,
          to_char(g.last_date, 'YYYY-MM-DD') AS last_prescribed`,
        from: sql`(SELECT medication_id, min(prescription_date) AS first_date, max(prescription_date) AS last_date, max(id) AS last_id
          FROM prescriptions WHERE patient_id = ${patientId} GROUP BY medication_id) g`,
        row: MedicationGroupRow,
        sort: { columns: lastPrescribed, by: "last_date", dir: "DESC", id: sql`g.last_id` }
      }, page)
    const findOfMedications = SqlSchema.findAll({
      Request: Schema.Struct({ patientId: Schema.Number, medicationIds: Schema.Array(Schema.Number) }),
      Result: PrescriptionRow,
      execute: ({ medicationIds, patientId }) =>
        sql`SELECT ${cols} FROM ${tables}
          WHERE r.patient_id = ${patientId} AND r.medication_id IN ${sql.in(medicationIds)}
          ORDER BY r.prescription_date DESC, r.id DESC`
    })

    return {
      /** One page of the prescriptions in the access scope, newest first, with its pagination. */
      list,
      /** The prescription, locked `FOR UPDATE` inside a transaction when `lock`. */
      findById: (id: number, lock = false) => orDefect(findById({ id, lock })),
      insert: (terms: Terms, createdById: number) => Effect.map(orDefect(insertOne({ terms, createdById })), (row) => row.id),
      /** An edit or a move `Prescriptions` checked. */
      update: (id: number, terms: Terms, status: PrescriptionStatus) =>
        orDefect(Effect.flatMap(now, (at) => updateOne({ id, terms, status, at }))),
      /** `active → cancelled` (checked and locked by the caller). */
      cancel: (id: number) => orDefect(Effect.flatMap(now, (at) => cancelOne({ id, at }))),
      /** One refill; false when none remains. */
      refill: (id: number) => orDefect(Effect.flatMap(now, (at) => refillOne({ id, at }))).pipe(Effect.map((rows) => rows.length > 0)),
      /**
       * `active → expired` for up to `expiryBatchSize` prescriptions whose end date is before
       * `day`: claimed by a compare-and-swap on the status, skipping rows another transaction
       * holds. The ids it moved.
       */
      expireBatch: (day: string) =>
        orDefect(Effect.flatMap(now, (at) => expireBatch({ day, at }))).pipe(Effect.map((rows) => rows.map((r) => r.id))),
      /** One page of the medications of a patient's prescriptions, most recently prescribed first, with its pagination. */
      medicationGroups,
      /** A patient's prescriptions of these medications, newest first. */
      ofMedications: (patientId: number, medicationIds: ReadonlyArray<number>) =>
        medicationIds.length === 0 ? Effect.succeed([]) : orDefect(findOfMedications({ patientId, medicationIds }))
    } as const
  })
}) {}
