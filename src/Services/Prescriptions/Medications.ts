/**
 * The medications catalogue (beyond the spec): search for prescribing screens, and admins adding
 * and retiring medications. One product per generic name, strength and form is the unique index
 * `medications_product_key`, never a look first (`MedicationsRepo`).
 */
import { Effect, Option } from "effect"
import { notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type CreateMedicationRequest, MedicationList, type UpdateMedicationRequest } from "../../Api/Prescriptions/Prescriptions.js"
import { AuditLog } from "../AuditLog.js"
import { MedicationsRepo, toMedication } from "./MedicationsRepo.js"

const clean = (list: ReadonlyArray<string>): Array<string> => [...new Set(list.map((s) => s.trim()))]

export class Medications extends Effect.Service<Medications>()("app/Medications", {
  effect: Effect.gen(function*() {
    const medications = yield* MedicationsRepo
    const audit = yield* AuditLog

    const list = Effect.fn("Medications.list")(function*(
      criteria: { readonly search?: string | undefined; readonly includeInactive: boolean },
      request: PageRequest
    ) {
      const { pagination, rows } = yield* medications.list(criteria, request)
      return MedicationList.make({ medications: rows.map(toMedication), pagination })
    })

    const findRow = (id: number) =>
      Effect.flatMap(medications.findById(id), Option.match({
        onNone: () => Effect.fail(notFound("Medication")),
        onSome: Effect.succeed
      }))

    const show = Effect.fn("Medications.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "medication.id": id })
      return toMedication(yield* findRow(id))
    })

    const create = Effect.fn("Medications.create")(function*(actorId: number, input: CreateMedicationRequest["medication"]) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const row = yield* medications.insert({
        name: input.name.trim(),
        generic_name: input.generic_name.trim(),
        brand_names: clean(input.brand_names ?? []),
        strength: input.strength.trim(),
        dosage_form: input.dosage_form.trim(),
        rxnorm_cui: input.rxnorm_cui ?? null
      })
      yield* audit.record({ actorId, action: "medication.create", targetType: "medication", targetId: row.id })
      return toMedication(row)
    })

    const update = Effect.fn("Medications.update")(function*(actorId: number, id: number, changes: UpdateMedicationRequest["medication"]) {
      yield* Effect.annotateCurrentSpan({ "medication.id": id, "actor.id": actorId })
      const current = yield* findRow(id)
      const updated = yield* medications.update(id, {
        name: changes.name?.trim() ?? current.name,
        generic_name: changes.generic_name?.trim() ?? current.generic_name,
        brand_names: clean(changes.brand_names ?? current.brand_names),
        strength: changes.strength?.trim() ?? current.strength,
        dosage_form: changes.dosage_form?.trim() ?? current.dosage_form,
        rxnorm_cui: changes.rxnorm_cui === undefined ? current.rxnorm_cui : changes.rxnorm_cui
      }, changes.active ?? current.active)
      if (Option.isNone(updated)) return yield* Effect.fail(notFound("Medication"))
      const row = updated.value
      const retired = current.active && !row.active
      yield* audit.record({ actorId, action: retired ? "medication.retire" : "medication.update", targetType: "medication", targetId: id })
      return toMedication(row)
    })

    return { list, show, create, update } as const
  }),
  dependencies: [MedicationsRepo.Default]
}) {}
