/**
 * Waitlist spots (general §4.2). One open (waiting or offered) spot per patient and
 * program, settled by the partial unique index spots_open_patient_program_key (409 on a second);
 * positions are computed in SQL from the waiting queue of the spot's program (`SpotsRepo`).
 */
import { Effect, Option } from "effect"
import { invalid, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type CreateSpotRequest, type SpotChanges, SpotList } from "../../Api/Patients/Spots.js"
import { canMoveSpot, Spot, type SpotStatus } from "../../Domain/Patients/Records.js"
import { AuditLog } from "../AuditLog.js"
import { makeTransaction } from "../Repository.js"
import { staffRequired } from "./ClinicPatients.js"
import { Access, canManagePatientRecords, type Viewer } from "../Access/Access.js"
import { type SpotRow, SpotsRepo } from "./SpotsRepo.js"

export { spotMessages } from "./SpotsRepo.js"

const toSpot = (row: SpotRow): Spot => Spot.make(row, true)

/** What a parent may do with their own patient's spot: answer an offer. */
const parentAnswers: ReadonlyArray<SpotStatus> = ["accepted", "declined"]

export class Spots extends Effect.Service<Spots>()("app/Spots", {
  effect: Effect.gen(function*() {
    const spots = yield* SpotsRepo
    const transaction = yield* makeTransaction
    const access = yield* Access
    const audit = yield* AuditLog

    const list = Effect.fn("Spots.list")(function*(viewer: Viewer, patientId: number, request: PageRequest) {
      const patient = yield* access.visiblePatient(viewer, patientId)
      const { pagination, rows } = yield* spots.list(patient, request)
      return SpotList.make({ spots: rows.map(toSpot), pagination }, true)
    })

    const load = (id: number) => Effect.map(spots.findById(id), toSpot)

    const create = Effect.fn("Spots.create")(function*(viewer: Viewer, patientId: number, input: CreateSpotRequest["spot"]) {
      const patient = yield* access.visiblePatient(viewer, patientId)
      const notes = input.notes?.trim() ?? ""
      const id = yield* spots.insert(patient, input.program.trim(), notes === "" ? null : notes)
      yield* audit.record({ actorId: viewer.id, action: "spot.create", targetType: "spot", targetId: id })
      return yield* load(id)
    })

    const update = Effect.fn("Spots.update")(function*(viewer: Viewer, patientId: number, id: number, changes: SpotChanges) {
      yield* Effect.annotateCurrentSpan({ "spot.id": id })
      const patient = yield* access.visiblePatient(viewer, patientId)
      return yield* transaction(Effect.gen(function*() {
        const locked = yield* spots.lockStatus(id, patient)
        if (Option.isNone(locked)) return yield* Effect.fail(notFound("Spot"))
        const current = { status: locked.value }
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
        yield* spots.update({
          id,
          status: to ?? current.status,
          ...(notes === undefined ? {} : { notes: notes === "" ? null : notes }),
          offered: moved && to === "offered",
          responded: moved && to !== "offered"
        })
        if (moved || notes !== undefined) {
          yield* audit.record({ actorId: viewer.id, action: moved ? `spot.${to}` : "spot.update", targetType: "spot", targetId: id })
        }
        return yield* load(id)
      }))
    })

    return { list, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, SpotsRepo.Default]
}) {}
