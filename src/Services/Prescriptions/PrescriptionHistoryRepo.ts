/**
 * The only SQL on `prescription_history` (ARCHITECTURE "Persistence"): the append-only record of
 * what each prescription said after every change. Rows are decoded with schemas; SQL errors are
 * defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { PrescriptionId } from "../../Domain/Ids.js"
import { HistoryEvent, PrescriptionStatus } from "../../Domain/Prescriptions/Prescription.js"
import { orDefect, SqlSchema } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)

/** One history entry of a prescription; dates as `YYYY-MM-DD`. */
export const HistoryRow = Schema.Struct({
  prescription_id: PrescriptionId,
  event: HistoryEvent,
  from_status: Schema.NullOr(PrescriptionStatus),
  status: PrescriptionStatus,
  dosage: Schema.String,
  frequency: Schema.String,
  quantity: Schema.Int,
  refills_remaining: Schema.Int,
  start_date: NullText,
  end_date: NullText,
  recorded_at: Schema.DateFromSelf
})
export type HistoryRow = typeof HistoryRow.Type

const Entry = Schema.Struct({
  ids: Schema.Array(Schema.Number),
  event: HistoryEvent,
  fromStatus: Schema.NullOr(PrescriptionStatus),
  actorId: Schema.NullOr(Schema.Number)
})

export class PrescriptionHistoryRepo extends Effect.Service<PrescriptionHistoryRepo>()("app/PrescriptionHistoryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertFrom = SqlSchema.void({
      Request: Entry,
      execute: ({ actorId, event, fromStatus, ids }) =>
        sql`INSERT INTO prescription_history (prescription_id, patient_id, medication_id, event, from_status, status, dosage,
            frequency, quantity, refills_remaining, start_date, end_date, actor_id)
          SELECT r.id, r.patient_id, r.medication_id, ${event}, ${fromStatus}, r.status, r.dosage, r.frequency, r.quantity,
            r.refills_remaining, r.start_date, r.end_date, ${actorId}
          FROM prescriptions r WHERE r.id IN ${sql.in(ids)} ORDER BY r.id`
    })

    const findOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: HistoryRow,
      execute: (ids) =>
        sql`SELECT prescription_id, event, from_status, status, dosage, frequency, quantity, refills_remaining,
            to_char(start_date, 'YYYY-MM-DD') AS start_date, to_char(end_date, 'YYYY-MM-DD') AS end_date, recorded_at
          FROM prescription_history WHERE prescription_id IN ${sql.in(ids)} ORDER BY prescription_id, id`
    })

    return {
      /** One entry per prescription, copying what each says now (after the change). */
      append: (ids: ReadonlyArray<number>, event: HistoryEvent, fromStatus: PrescriptionStatus | null, actorId: number | null) =>
        orDefect(insertFrom({ ids, event, fromStatus, actorId })),
      /** The entries of these prescriptions, oldest first per prescription. */
      entriesOf: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.succeed([]) : orDefect(findOf(ids))
    } as const
  })
}) {}
