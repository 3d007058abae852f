/**
 * The only SQL on `spots` (ARCHITECTURE "Persistence"): the clinic waitlist. One open (waiting or
 * offered) spot per patient and program is the partial unique index spots_open_patient_program_key
 * (409 on a second); positions are computed from the waiting queue of the spot's program. Rows are
 * decoded with schemas; other SQL errors are defects. State timestamps come from the clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { conflict, type Conflict } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { SpotStatus } from "../../Domain/Patients/Records.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { now } from "../Time.js"

export const spotMessages = {
  openSpotTaken: "Patient already has an open spot for this program"
} as const

export const SpotRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  status: SpotStatus,
  program: Schema.String,
  notes: Schema.NullOr(Schema.String),
  requested_at: Schema.DateFromSelf,
  offered_at: Schema.NullOr(Schema.DateFromSelf),
  responded_at: Schema.NullOr(Schema.DateFromSelf),
  position: Schema.NullOr(Schema.Int)
})
export type SpotRow = typeof SpotRow.Type

/** A move or an edit `Spots` checked: `notes` undefined keeps them; `offered`/`responded` stamp now. */
const SpotChange = Schema.Struct({
  id: Schema.Number,
  status: SpotStatus,
  notes: Schema.optional(Schema.NullOr(Schema.String)),
  offered: Schema.Boolean,
  responded: Schema.Boolean,
  at: Schema.DateFromSelf
})
export type SpotChange = Omit<typeof SpotChange.Type, "at">

export class SpotsRepo extends Effect.Service<SpotsRepo>()("app/SpotsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    // A waiting spot's position: how many waiting spots of its program were requested before it,
    // itself included (spots_waiting_queue_idx).
    const columns = sql`s.id, s.patient_id, s.status, s.program, s.notes, s.requested_at, s.offered_at, s.responded_at,
      CASE WHEN s.status = 'waiting' THEN (
        SELECT count(*)::int FROM spots w
        WHERE w.status = 'waiting' AND w.program = s.program AND (w.requested_at, w.id) <= (s.requested_at, s.id)
      ) END AS position`

    const byRequest = { requested_at: sql`s.requested_at` }
    const list = (patientId: number, page: PageRequest) =>
      listPage({
        select: columns,
        from: sql`spots s`,
        row: SpotRow,
        filters: [sql`s.patient_id = ${patientId}`],
        sort: { columns: byRequest, by: "requested_at", dir: "DESC", id: sql`s.id` }
      }, page)
    const findById = SqlSchema.single({
      Request: Schema.Number,
      Result: SpotRow,
      execute: (id) => sql`SELECT ${columns} FROM spots s WHERE s.id = ${id}`
    })
    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ patientId: Schema.Number, program: Schema.String, notes: Schema.NullOr(Schema.String) }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ notes, patientId, program }) =>
        sql`INSERT INTO spots (patient_id, program, notes)
          VALUES (${patientId}, ${program}, ${notes}) RETURNING id`
    })
    const lockStatus = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, patientId: Schema.Number }),
      Result: Schema.Struct({ status: SpotStatus }),
      execute: ({ id, patientId }) => sql`SELECT status FROM spots WHERE id = ${id} AND patient_id = ${patientId} FOR UPDATE`
    })
    const updateOne = SqlSchema.void({
      Request: SpotChange,
      execute: (c) =>
        sql`UPDATE spots SET
              status = ${c.status},
              notes = ${c.notes === undefined ? sql`notes` : c.notes},
              offered_at = ${c.offered ? c.at : sql`offered_at`},
              responded_at = ${c.responded ? c.at : sql`responded_at`},
              updated_at = ${c.at}
            WHERE id = ${c.id}`
    })

    return {
      /** One page of the patient's spots, newest request first, with its pagination. */
      list,
      /** The spot with its position (it must exist). */
      findById: (id: number) => orDefect(findById(id)),
      /** A new waiting spot's id; a second open spot of the patient and program is a 409. */
      insert: (patientId: number, program: string, notes: string | null): Effect.Effect<number, Conflict> =>
        insertOne({ patientId, program, notes }).pipe(
          Effect.map((row) => row.id),
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "spots_open_patient_program_key") ? Effect.fail(conflict(spotMessages.openSpotTaken)) : Effect.die(error)),
          orDefect
        ),
      /** The status of the patient's spot, locked `FOR UPDATE`; none when the patient has no such spot. */
      lockStatus: (id: number, patientId: number) =>
        Effect.map(orDefect(lockStatus({ id, patientId })), Option.map((row) => row.status)),
      update: (change: SpotChange) => orDefect(Effect.flatMap(now, (at) => updateOne({ ...change, at })))
    } as const
  })
}) {}
