/**
 * Waitlist spots (general §4.2, issue 13). One open (waiting or offered) spot per patient and
 * program, settled by the partial unique index spots_open_patient_program_key (409 on a second);
 * positions are computed in SQL from the waiting queue of the spot's program.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { conflict, invalid, notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { type CreateSpotRequest, type SpotChanges, SpotList } from "../../Api/Patients/Spots.js"
import { canMoveSpot, Spot, type SpotStatus } from "../../Domain/Patients/Records.js"
import { AuditLog } from "../AuditLog.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { staffRequired } from "./ClinicPatients.js"
import { Access, canManagePatientRecords, type Viewer } from "../Access/Access.js"

type Row = ConstructorParameters<typeof Spot>[0]

export const spotMessages = {
  openSpotTaken: "Patient already has an open spot for this program"
} as const

/** What a parent may do with their own patient's spot: answer an offer. */
const parentAnswers: ReadonlyArray<SpotStatus> = ["accepted", "declined"]

export class Spots extends Effect.Service<Spots>()("app/Spots", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog

    // A waiting spot's position: how many waiting spots of its program were requested before it,
    // itself included (spots_waiting_queue_idx).
    const columns = sql`s.id, s.patient_id, s.status, s.program, s.notes, s.requested_at, s.offered_at, s.responded_at,
      CASE WHEN s.status = 'waiting' THEN (
        SELECT count(*)::int FROM spots w
        WHERE w.status = 'waiting' AND w.program = s.program AND (w.requested_at, w.id) <= (s.requested_at, s.id)
      ) END AS position`

    const list = (viewer: Viewer, patientId: number, request: PageRequest) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, patientId)
        const rows = yield* sql<Row>`SELECT ${columns} FROM spots s WHERE s.patient_id = ${patient}
          ORDER BY s.requested_at DESC, s.id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM spots WHERE patient_id = ${patient}`
        return SpotList.make({ spots: rows.map((r) => Spot.make(r, true)), pagination: paginationOf(request, counted?.count ?? 0) }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Spots.list"))

    const load = (id: number) =>
      Effect.map(sql<Row>`SELECT ${columns} FROM spots s WHERE s.id = ${id}`, (rows) => Spot.make(rows[0]!, true))

    const create = (viewer: Viewer, patientId: number, input: CreateSpotRequest["spot"]) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, patientId)
        const notes = input.notes?.trim() ?? ""
        const [row] = yield* sql<{ id: number }>`INSERT INTO spots (patient_id, program, notes)
          VALUES (${patient}, ${input.program.trim()}, ${notes === "" ? null : notes}) RETURNING id`.pipe(
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "spots_open_patient_program_key") ? Effect.fail(conflict(spotMessages.openSpotTaken)) : Effect.die(error))
        )
        yield* audit.record({ actorId: viewer.id, action: "spot.create", targetType: "spot", targetId: row!.id })
        return yield* load(row!.id)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Spots.create"))

    const update = (viewer: Viewer, patientId: number, id: number, changes: SpotChanges) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, patientId)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [current] = yield* sql<{ status: SpotStatus }>`SELECT status FROM spots WHERE id = ${id} AND patient_id = ${patient} FOR UPDATE`
          if (current === undefined) return yield* Effect.fail(notFound("Spot"))
          const to = changes.status
          if (!canManagePatientRecords(viewer)) {
            const onlyAnswers = changes.notes === undefined && (to === undefined || parentAnswers.includes(to))
            if (!onlyAnswers) return yield* Effect.fail(staffRequired())
          }
          if (to !== undefined && !canMoveSpot(current.status, to)) {
            return yield* Effect.fail(invalid({ status: [`can't change from ${current.status} to ${to}`] }))
          }
          const moved = to !== undefined && to !== current.status
          const notes = changes.notes === undefined ? undefined : (changes.notes?.trim() ?? "")
          yield* sql`UPDATE spots SET
              status = ${to ?? current.status},
              notes = ${notes === undefined ? sql`notes` : notes === "" ? null : notes},
              offered_at = ${moved && to === "offered" ? sql`now()` : sql`offered_at`},
              responded_at = ${moved && to !== "offered" ? sql`now()` : sql`responded_at`},
              updated_at = now()
            WHERE id = ${id}`
          if (moved || notes !== undefined) {
            yield* audit.record({ actorId: viewer.id, action: moved ? `spot.${to}` : "spot.update", targetType: "spot", targetId: id })
          }
          return yield* load(id)
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Spots.update", { attributes: { "spot.id": id } }))

    return { list, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default]
}) {}
