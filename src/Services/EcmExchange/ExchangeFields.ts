/** The members' return-file fields (homelessness, POF): staff read and set them, through the access module. */
import { Effect, Option } from "effect"
import type { ExchangeFieldsRequest } from "../../Api/EcmExchange/HealthPlans.js"
import { ExchangeFields as Fields } from "../../Api/EcmExchange/HealthPlans.js"
import { ecmNotFound } from "../../Api/Errors.js"
import { Access, type Viewer } from "../Access/Access.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull } from "../Repository.js"
import { now } from "../Time.js"
import { ExchangeFieldsRepo } from "./ExchangeFieldsRepo.js"

const patientNotFound = () => ecmNotFound("Patient")

export class ExchangeFields extends Effect.Service<ExchangeFields>()("app/EcmExchangeFields", {
  dependencies: [ExchangeFieldsRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* ExchangeFieldsRepo
    const access = yield* Access
    const audit = yield* AuditLog

    /** The member's fields when the viewer may see the member (ECM's 404 otherwise, also for unknown ids). */
    const visible = (viewer: Viewer, patientId: number) =>
      Effect.gen(function*() {
        const id = yield* Effect.mapError(access.visiblePatient(viewer, patientId), patientNotFound)
        const row = yield* repo.find(id)
        if (Option.isNone(row)) return yield* Effect.fail(patientNotFound())
        return row.value
      })

    const show = (viewer: Viewer, patientId: number) => Effect.map(visible(viewer, patientId), (row) => Fields.make(row, true))

    const update = Effect.fn("ExchangeFields.update")(function*(viewer: Viewer, patientId: number, body: ExchangeFieldsRequest) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId })
      const current = yield* visible(viewer, patientId)
      const changed = yield* repo.update({
        patient_id: current.patient_id,
        homelessness_indicator: body.homelessness_indicator === undefined ? current.homelessness_indicator : body.homelessness_indicator,
        pof_indicator: body.pof_indicator === undefined ? current.pof_indicator : body.pof_indicator,
        pof: body.pof === undefined ? current.pof : blankToNull(body.pof)
      }, yield* now)
      if (Option.isNone(changed)) return yield* Effect.fail(patientNotFound())
      yield* audit.record({ actorId: viewer.id, action: "patient.exchange_fields_update", targetType: "patient", targetId: current.patient_id })
      return Fields.make(changed.value, true)
    })

    return { show, update } as const
  })
}) {}
