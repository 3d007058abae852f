/**
 * Treatment plans (general §4.2, issue 13). Staff write, a parent reads their own patient's plans;
 * every change is audited; a completed plan is read-only.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { invalid, notFound, type FieldMessages } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  type NewTreatmentPlan,
  type TreatmentPlanChanges,
  TreatmentPlanList
} from "../../Api/Patients/TreatmentPlans.js"
import { isReadOnlyPlan, TreatmentGoal, TreatmentPlan, type TreatmentPlanStatus } from "../../Domain/Patients/Records.js"
import { AuditLog } from "../AuditLog.js"
import { staffRequired } from "./ClinicPatients.js"
import { Access, canManagePatientRecords, type Viewer } from "../Access/Access.js"

interface Row {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number | null
  readonly title: string
  readonly diagnosis_codes: ReadonlyArray<string>
  readonly goals: ReadonlyArray<{ description: string; target_date: string | null; status: TreatmentGoal["status"] }>
  readonly interventions: ReadonlyArray<string>
  readonly start_date: string | null
  readonly end_date: string | null
  readonly status: TreatmentPlanStatus
  readonly created_at: Date
  readonly updated_at: Date
}

const columns = `id, patient_id, provider_id, title, diagnosis_codes, goals, interventions,
  to_char(start_date, 'YYYY-MM-DD') AS start_date, to_char(end_date, 'YYYY-MM-DD') AS end_date, status, created_at, updated_at`

const toPlan = (row: Row): TreatmentPlan =>
  TreatmentPlan.make({ ...row, goals: row.goals.map((g) => TreatmentGoal.make(g, true)) }, true)

/** A text[] parameter (node-postgres sends arrays as PostgreSQL array literals). */
const textArray = (items: ReadonlyArray<string>) => items as Array<string>

export const planNotFound = () => notFound("Treatment plan")
export const readOnlyMessage = "is completed: the plan is read-only"

export class TreatmentPlans extends Effect.Service<TreatmentPlans>()("app/TreatmentPlans", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog
    const cols = sql.literal(columns)

    const list = (viewer: Viewer, patientId: number | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
        const rows = yield* sql<Row>`SELECT ${cols} FROM treatment_plans WHERE patient_id = ${patient}
          ORDER BY created_at DESC, id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM treatment_plans WHERE patient_id = ${patient}`
        return TreatmentPlanList.make({ treatment_plans: rows.map(toPlan), pagination: paginationOf(request, counted?.count ?? 0) }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("TreatmentPlans.list"))

    const last = (viewer: Viewer, patientId: number | undefined) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
        const [row] = yield* sql<Row>`SELECT ${cols} FROM treatment_plans WHERE patient_id = ${patient}
          ORDER BY created_at DESC, id DESC LIMIT 1`
        if (row === undefined) return yield* Effect.fail(planNotFound())
        return toPlan(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("TreatmentPlans.last"))

    /**
     * The plan when the caller may see its patient; otherwise 404 "Treatment plan not found",
     * exactly as for an id that does not exist.
     */
    const find = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<Row>`SELECT ${cols} FROM treatment_plans WHERE id = ${id}`
        if (row === undefined) return yield* Effect.fail(planNotFound())
        yield* Effect.mapError(access.visiblePatient(viewer, row.patient_id, "clinical"), () => planNotFound())
        return row
      })

    /** The plan, locked, once `find` has let the caller in. */
    const lockPlan = (id: number) =>
      Effect.flatMap(sql<Row>`SELECT ${cols} FROM treatment_plans WHERE id = ${id} FOR UPDATE`, ([row]) =>
        row === undefined ? Effect.fail(planNotFound()) : Effect.succeed(row))

    const show = (viewer: Viewer, id: number) =>
      Effect.map(find(viewer, id), toPlan).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("TreatmentPlans.show", { attributes: { "treatment_plan.id": id } })
      )

    const checkProvider = (providerId: number | null | undefined) =>
      Effect.gen(function*() {
        if (providerId === undefined || providerId === null) return {}
        const [row] = yield* sql<{ id: number }>`SELECT pr.id FROM providers pr JOIN users u ON u.id = pr.user_id
          WHERE pr.id = ${providerId} AND u.deleted_at IS NULL`
        return row === undefined ? { provider_id: ["must exist"] } : {}
      })

    const checkDates = (start: string | null, end: string | null): FieldMessages =>
      start !== null && end !== null && end < start ? { end_date: ["must be after start date"] } : {}

    const goalsJson = (goals: NonNullable<TreatmentPlanChanges["goals"]>) =>
      JSON.stringify(goals.map((g) => ({ description: g.description.trim(), target_date: g.target_date ?? null, status: g.status ?? "not_started" })))

    const fail = (problems: FieldMessages) => Object.keys(problems).length > 0 ? Effect.fail(invalid(problems)) : Effect.void

    const create = (viewer: Viewer, input: NewTreatmentPlan) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, input.patient_id, "clinical")
        if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
        yield* fail({ ...(yield* checkProvider(input.provider_id)), ...checkDates(input.start_date ?? null, input.end_date ?? null) })
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<Row>`INSERT INTO treatment_plans (patient_id, provider_id, title, diagnosis_codes, goals,
              interventions, start_date, end_date, status, created_by_id)
            VALUES (${patient}, ${input.provider_id ?? null}, ${input.title.trim()}, ${textArray((input.diagnosis_codes ?? []).map((c) => c.trim()))}::text[],
              ${goalsJson(input.goals ?? [])}::jsonb, ${textArray((input.interventions ?? []).map((i) => i.trim()))}::text[],
              ${input.start_date ?? null}, ${input.end_date ?? null}, ${input.status ?? "draft"}, ${viewer.id})
            RETURNING ${cols}`
          yield* audit.record({ actorId: viewer.id, action: "treatment_plan.create", targetType: "treatment_plan", targetId: row!.id })
          return row!
        }))
        return toPlan(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("TreatmentPlans.create"))

    const update = (viewer: Viewer, id: number, changes: TreatmentPlanChanges) =>
      Effect.gen(function*() {
        // Visible first (404 for a parent on another family's plan), then the role (403 on their own).
        yield* find(viewer, id)
        if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
        yield* fail(yield* checkProvider(changes.provider_id))
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          // Locked: a plan completed by a concurrent edit is read-only to this one too.
          const current = yield* lockPlan(id)
          if (isReadOnlyPlan(current.status)) return yield* Effect.fail(invalid({ status: [readOnlyMessage] }))
          const start = changes.start_date !== undefined ? changes.start_date : current.start_date
          const end = changes.end_date !== undefined ? changes.end_date : current.end_date
          yield* fail(checkDates(start, end))
          const values: Record<string, unknown> = {}
          if (changes.title !== undefined) values.title = changes.title.trim()
          if (changes.provider_id !== undefined) values.provider_id = changes.provider_id
          if (changes.start_date !== undefined) values.start_date = changes.start_date
          if (changes.end_date !== undefined) values.end_date = changes.end_date
          if (changes.status !== undefined) values.status = changes.status
          const lists = [
            changes.diagnosis_codes === undefined ? sql`` : sql`, diagnosis_codes = ${textArray(changes.diagnosis_codes.map((c) => c.trim()))}::text[]`,
            changes.interventions === undefined ? sql`` : sql`, interventions = ${textArray(changes.interventions.map((c) => c.trim()))}::text[]`,
            changes.goals === undefined ? sql`` : sql`, goals = ${goalsJson(changes.goals)}::jsonb`
          ]
          const set = Object.keys(values).length === 0 ? sql`updated_at = now()` : sql`${sql.update(values)}, updated_at = now()`
          const [row] = yield* sql<Row>`UPDATE treatment_plans SET ${set}${lists[0]!}${lists[1]!}${lists[2]!}
            WHERE id = ${id} RETURNING ${cols}`
          yield* audit.record({
            actorId: viewer.id,
            action: changes.status !== undefined && changes.status !== current.status ? `treatment_plan.${changes.status}` : "treatment_plan.update",
            targetType: "treatment_plan",
            targetId: id
          })
          return row!
        }))
        return toPlan(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("TreatmentPlans.update", { attributes: { "treatment_plan.id": id } }))

    return { list, last, show, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default]
}) {}
