/**
 * Treatment plans (general §4.2). Staff write, a parent reads their own patient's plans;
 * every change is audited; a completed plan is read-only. `TreatmentPlansRepo` holds the SQL.
 */
import { Effect, Option } from "effect"
import { invalid, notFound, type FieldMessages } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  type NewTreatmentPlan,
  type TreatmentPlanChanges,
  TreatmentPlanList
} from "../../Api/Patients/TreatmentPlans.js"
import { isReadOnlyPlan, TreatmentGoal, TreatmentPlan } from "../../Domain/Patients/Records.js"
import { AuditLog } from "../AuditLog.js"
import { ProvidersRepo } from "../Providers/ProvidersRepo.js"
import { makeTransaction } from "../Repository.js"
import { staffRequired } from "./ClinicPatients.js"
import { Access, canManagePatientRecords, type Viewer } from "../Access/Access.js"
import { type PlanChanges, type TreatmentPlanRow, TreatmentPlansRepo } from "./TreatmentPlansRepo.js"

const toPlan = (row: TreatmentPlanRow): TreatmentPlan =>
  TreatmentPlan.make({ ...row, goals: row.goals.map((g) => TreatmentGoal.make(g, true)) }, true)

export const planNotFound = () => notFound("Treatment plan")
export const readOnlyMessage = "is completed: the plan is read-only"

export class TreatmentPlans extends Effect.Service<TreatmentPlans>()("app/TreatmentPlans", {
  effect: Effect.gen(function*() {
    const plans = yield* TreatmentPlansRepo
    const providers = yield* ProvidersRepo
    const transaction = yield* makeTransaction
    const access = yield* Access
    const audit = yield* AuditLog

    const list = Effect.fn("TreatmentPlans.list")(function*(viewer: Viewer, patientId: number | undefined, request: PageRequest) {
      const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
      const { pagination, rows } = yield* plans.list(patient, request)
      return TreatmentPlanList.make({ treatment_plans: rows.map(toPlan), pagination }, true)
    })

    const last = Effect.fn("TreatmentPlans.last")(function*(viewer: Viewer, patientId: number | undefined) {
      const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
      const row = yield* plans.last(patient)
      if (row === undefined) return yield* Effect.fail(planNotFound())
      return toPlan(row)
    })

    /**
     * The plan when the caller may see its patient; otherwise 404 "Treatment plan not found",
     * exactly as for an id that does not exist.
     */
    const find = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const found = yield* plans.findById(id, false)
        if (Option.isNone(found)) return yield* Effect.fail(planNotFound())
        yield* Effect.mapError(access.visiblePatient(viewer, found.value.patient_id, "clinical"), () => planNotFound())
        return found.value
      })

    /** The plan, locked, once `find` has let the caller in. */
    const lockPlan = (id: number) =>
      Effect.flatMap(plans.findById(id, true), Option.match({ onNone: () => Effect.fail(planNotFound()), onSome: Effect.succeed }))

    const show = Effect.fn("TreatmentPlans.show")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "treatment_plan.id": id })
      return toPlan(yield* find(viewer, id))
    })

    const checkProvider = (providerId: number | null | undefined) =>
      Effect.gen(function*() {
        if (providerId === undefined || providerId === null) return {}
        const active = yield* providers.activeOf(providerId)
        return Option.isNone(active) ? { provider_id: ["must exist"] } : {}
      })

    const checkDates = (start: string | null, end: string | null): FieldMessages =>
      start !== null && end !== null && end < start ? { end_date: ["must be after start date"] } : {}

    const goalsOf = (goals: NonNullable<TreatmentPlanChanges["goals"]>) =>
      goals.map((g) => ({ description: g.description.trim(), target_date: g.target_date ?? null, status: g.status ?? "not_started" }))

    const fail = (problems: FieldMessages) => Object.keys(problems).length > 0 ? Effect.fail(invalid(problems)) : Effect.void

    const create = Effect.fn("TreatmentPlans.create")(function*(viewer: Viewer, input: NewTreatmentPlan) {
      const patient = yield* access.visiblePatient(viewer, input.patient_id, "clinical")
      if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
      yield* fail({ ...(yield* checkProvider(input.provider_id)), ...checkDates(input.start_date ?? null, input.end_date ?? null) })
      const row = yield* transaction(Effect.gen(function*() {
        const row = yield* plans.insert({
          patientId: patient,
          providerId: input.provider_id ?? null,
          title: input.title.trim(),
          diagnosisCodes: (input.diagnosis_codes ?? []).map((c) => c.trim()),
          goals: goalsOf(input.goals ?? []),
          interventions: (input.interventions ?? []).map((i) => i.trim()),
          startDate: input.start_date ?? null,
          endDate: input.end_date ?? null,
          status: input.status ?? "draft",
          createdById: viewer.id
        })
        yield* audit.record({ actorId: viewer.id, action: "treatment_plan.create", targetType: "treatment_plan", targetId: row.id })
        return row
      }))
      return toPlan(row)
    })

    const update = Effect.fn("TreatmentPlans.update")(function*(viewer: Viewer, id: number, changes: TreatmentPlanChanges) {
      yield* Effect.annotateCurrentSpan({ "treatment_plan.id": id })
      // Visible first (404 for a parent on another family's plan), then the role (403 on their own).
      yield* find(viewer, id)
      if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
      yield* fail(yield* checkProvider(changes.provider_id))
      const row = yield* transaction(Effect.gen(function*() {
        // Locked: a plan completed by a concurrent edit is read-only to this one too.
        const current = yield* lockPlan(id)
        if (isReadOnlyPlan(current.status)) return yield* Effect.fail(invalid({ status: [readOnlyMessage] }))
        const start = changes.start_date !== undefined ? changes.start_date : current.start_date
        const end = changes.end_date !== undefined ? changes.end_date : current.end_date
        yield* fail(checkDates(start, end))
        const edit: { -readonly [K in keyof PlanChanges]: PlanChanges[K] } = {}
        if (changes.title !== undefined) edit.title = changes.title.trim()
        if (changes.provider_id !== undefined) edit.provider_id = changes.provider_id
        if (changes.start_date !== undefined) edit.start_date = changes.start_date
        if (changes.end_date !== undefined) edit.end_date = changes.end_date
        if (changes.status !== undefined) edit.status = changes.status
        if (changes.diagnosis_codes !== undefined) edit.diagnosis_codes = changes.diagnosis_codes.map((c) => c.trim())
        if (changes.interventions !== undefined) edit.interventions = changes.interventions.map((c) => c.trim())
        if (changes.goals !== undefined) edit.goals = goalsOf(changes.goals)
        const row = yield* plans.update(id, edit)
        yield* audit.record({
          actorId: viewer.id,
          action: changes.status !== undefined && changes.status !== current.status ? `treatment_plan.${changes.status}` : "treatment_plan.update",
          targetType: "treatment_plan",
          targetId: id
        })
        return row
      }))
      return toPlan(row)
    })

    return { list, last, show, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, TreatmentPlansRepo.Default, ProvidersRepo.Default]
}) {}
