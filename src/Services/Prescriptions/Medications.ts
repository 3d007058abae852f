/**
 * The medications catalogue (issue 20, beyond the spec): search for prescribing screens, and admins
 * adding and retiring medications. One product per generic name, strength and form is the unique
 * index `medications_product_key`, never a look first.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { invalidField, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { type CreateMedicationRequest, MedicationList, type UpdateMedicationRequest } from "../../Api/Prescriptions/Prescriptions.js"
import { AuditLog } from "../AuditLog.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlSearch.js"
import { medicationColumns, type MedicationRow, toMedication } from "./PrescriptionsRepo.js"

const clean = (list: ReadonlyArray<string>): Array<string> => [...new Set(list.map((s) => s.trim()))]

export class Medications extends Effect.Service<Medications>()("app/Medications", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const columns = sql.literal(medicationColumns)

    const list = (criteria: { readonly search?: string | undefined; readonly includeInactive: boolean }, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses = [criteria.includeInactive ? sql`TRUE` : sql`m.active`]
        const search = criteria.search?.trim() ?? ""
        if (search !== "") {
          const pattern = likePattern(search)
          clauses.push(sql`(m.name ILIKE ${pattern} ESCAPE '\\' OR m.generic_name ILIKE ${pattern} ESCAPE '\\'
            OR EXISTS (SELECT 1 FROM unnest(m.brand_names) AS b(name) WHERE b.name ILIKE ${pattern} ESCAPE '\\'))`)
        }
        const where = sql.and(clauses)
        const rows = yield* sql<MedicationRow>`SELECT ${columns} FROM medications m WHERE ${where}
          ORDER BY lower(m.name), m.id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [total] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM medications m WHERE ${where}`
        return MedicationList.make({ medications: rows.map(toMedication), pagination: paginationOf(request, total?.count ?? 0) })
      }).pipe(Effect.orDie, Effect.withSpan("Medications.list"))

    const findRow = (id: number) =>
      sql<MedicationRow>`SELECT ${columns} FROM medications m WHERE m.id = ${id}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Medication")) : Effect.succeed(rows[0]))
      )

    const show = (id: number) => Effect.map(findRow(id), toMedication).pipe(Effect.withSpan("Medications.show", { attributes: { "medication.id": id } }))

    const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
      isUniqueViolation(error, "medications_product_key") ? Effect.fail(invalidField("name", "has already been taken")) : Effect.die(error)

    const create = (actorId: number, input: CreateMedicationRequest["medication"]) =>
      Effect.gen(function*() {
        const [row] = yield* sql<MedicationRow>`INSERT INTO medications AS m (name, generic_name, brand_names, strength, dosage_form, rxnorm_cui)
          VALUES (${input.name.trim()}, ${input.generic_name.trim()}, ${clean(input.brand_names ?? [])}::text[], ${input.strength.trim()},
            ${input.dosage_form.trim()}, ${input.rxnorm_cui ?? null})
          RETURNING ${columns}`.pipe(Effect.catchTag("SqlError", writeErrors))
        yield* audit.record({ actorId, action: "medication.create", targetType: "medication", targetId: row!.id })
        return toMedication(row!)
      }).pipe(Effect.withSpan("Medications.create", { attributes: { "actor.id": actorId } }))

    const update = (actorId: number, id: number, changes: UpdateMedicationRequest["medication"]) =>
      Effect.gen(function*() {
        const current = yield* findRow(id)
        const [row] = yield* sql<MedicationRow>`UPDATE medications AS m SET
            name = ${changes.name?.trim() ?? current.name},
            generic_name = ${changes.generic_name?.trim() ?? current.generic_name},
            brand_names = ${clean(changes.brand_names ?? current.brand_names)}::text[],
            strength = ${changes.strength?.trim() ?? current.strength},
            dosage_form = ${changes.dosage_form?.trim() ?? current.dosage_form},
            rxnorm_cui = ${changes.rxnorm_cui === undefined ? current.rxnorm_cui : changes.rxnorm_cui},
            active = ${changes.active ?? current.active},
            updated_at = now()
          WHERE m.id = ${id} RETURNING ${columns}`.pipe(Effect.catchTag("SqlError", writeErrors))
        if (row === undefined) return yield* Effect.fail(notFound("Medication"))
        const retired = current.active && !row.active
        yield* audit.record({ actorId, action: retired ? "medication.retire" : "medication.update", targetType: "medication", targetId: id })
        return toMedication(row)
      }).pipe(Effect.withSpan("Medications.update", { attributes: { "medication.id": id, "actor.id": actorId } }))

    return { list, show, create, update } as const
  })
}) {}
