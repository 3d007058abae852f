/** Treatment plans of a patient (general §4.2). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientId, ProviderId } from "../../Domain/Ids.js"
import { GoalStatus, TreatmentPlan, TreatmentPlanStatus } from "../../Domain/Patients/Records.js"
import { BodyLimit } from "../BodyLimit.js"
import { groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, reportAllErrors, ValidationFailed } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, IdParam, IsoDate, RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"
import { PatientScopedQuery, patientIdDescription } from "./HelpRequests.js"

/** The largest valid plan, every character a JSON \u escape, is under 200 KiB: bodies up to 256 KiB. */
export const treatmentPlanLimits = {
  title: 200, diagnosisCode: 16, diagnosisCodes: 20, goalDescription: 500, goals: 20, intervention: 500, interventions: 20
} as const

const readAccess = "Any signed-in user (`X-User-Token`); a plan of a patient the caller may not see is 404 like an unknown one."
const writeAccess = "Clinic staff (every role but `parent`); a `parent` gets 404 for a patient not theirs and 403 " +
  "`Staff access required` for their own."

export const TreatmentGoalInput = Schema.Struct({
  description: RequiredString(treatmentPlanLimits.goalDescription),
  target_date: Schema.optional(Schema.NullOr(IsoDate)),
  status: Schema.optional(GoalStatus.annotations({ description: "Default not_started" }))
})

const planFields = {
  provider_id: Schema.optional(Schema.NullOr(ProviderId).annotations({ description: "The responsible provider: an existing provider profile" })),
  diagnosis_codes: Schema.optional(BoundedArray(RequiredString(treatmentPlanLimits.diagnosisCode), treatmentPlanLimits.diagnosisCodes)
    .annotations({ description: "ICD-10 codes, e.g. F90.0" })),
  goals: Schema.optional(BoundedArray(TreatmentGoalInput, treatmentPlanLimits.goals)),
  interventions: Schema.optional(BoundedArray(RequiredString(treatmentPlanLimits.intervention), treatmentPlanLimits.interventions)),
  start_date: Schema.optional(Schema.NullOr(IsoDate)),
  end_date: Schema.optional(Schema.NullOr(IsoDate).annotations({ description: "On or after start_date" })),
  status: Schema.optional(TreatmentPlanStatus.annotations({ description: "Default draft; a completed plan is read-only" }))
}

const examplePlan = {
  patient_id: 7, provider_id: 3, title: "Anxiety management", diagnosis_codes: ["F41.1"],
  goals: [{ description: "Use two coping skills at school", target_date: "2026-06-30", status: "in_progress" }],
  interventions: ["CBT weekly"], start_date: "2026-01-15", end_date: "2026-07-15", status: "active"
}

export class CreateTreatmentPlanRequest extends Schema.Class<CreateTreatmentPlanRequest>("CreateTreatmentPlanRequest")({
  treatment_plan: Schema.Struct({
    patient_id: PatientId.annotations({ description: "The patient" }),
    title: RequiredString(treatmentPlanLimits.title),
    ...planFields
  })
}, requestBody({ treatment_plan: examplePlan })) {}

export class UpdateTreatmentPlanRequest extends Schema.Class<UpdateTreatmentPlanRequest>("UpdateTreatmentPlanRequest")({
  treatment_plan: Schema.Struct({
    title: Schema.optional(RequiredString(treatmentPlanLimits.title)),
    ...planFields
  }).annotations({ description: "Fields left out keep their value; lists given replace the plan's lists" })
}, requestBody({ treatment_plan: { status: "completed", end_date: "2026-07-01" } })) {}

export type TreatmentPlanChanges = UpdateTreatmentPlanRequest["treatment_plan"]
export type NewTreatmentPlan = CreateTreatmentPlanRequest["treatment_plan"]

export class TreatmentPlanResponse extends Schema.Class<TreatmentPlanResponse>("TreatmentPlanResponse")({ treatment_plan: TreatmentPlan }) {}
export class TreatmentPlanList extends Schema.Class<TreatmentPlanList>("TreatmentPlanList")({
  treatment_plans: Schema.Array(TreatmentPlan),
  pagination: Pagination
}) {}

const idPath = Schema.Struct({ id: IdParam })

const LastQuery = Schema.Struct({
  patient_id: PatientScopedQuery.fields.patient_id
}).annotations(reportAllErrors)

export class TreatmentPlansApi extends HttpApiGroup.make("treatmentPlans")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/treatment_plans")
      .setUrlParams(PatientScopedQuery)
      .addSuccess(TreatmentPlanList)
      .annotateContext(operationDocs({
        summary: "List a patient's treatment plans",
        description: `The patient's treatment plans, newest first, 25 a page by default. ${patientIdDescription}.`,
        access: readAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("last", "/clinic/patients/treatment_plans/last")
      .setUrlParams(LastQuery)
      .addSuccess(TreatmentPlanResponse)
      .annotateContext(operationDocs({
        summary: "A patient's latest treatment plan",
        description: "The patient's most recently created plan; 404 `Treatment plan not found` when they have none.",
        access: readAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/treatment_plans/:id")
      .setPath(idPath)
      .addSuccess(TreatmentPlanResponse)
      .annotateContext(operationDocs({
        summary: "Show a treatment plan",
        description: "One plan; 404 `Treatment plan not found` for an unknown id or a plan of a patient the caller may not see.",
        access: readAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients/treatment_plans")
      .setPayload(CreateTreatmentPlanRequest)
      .addSuccess(TreatmentPlanResponse, { status: 201 })
      .addError(Forbidden.schema)
      .annotate(BodyLimit, 256 * 1024)
      .annotateContext(operationDocs({
        summary: "Create a treatment plan",
        description: "Creates a plan for the patient (audited). end_date may not precede start_date.",
        access: writeAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/patients/treatment_plans/:id")
      .setPath(idPath)
      .setPayload(UpdateTreatmentPlanRequest)
      .addSuccess(TreatmentPlanResponse)
      .addError(Forbidden.schema)
      .annotate(BodyLimit, 256 * 1024)
      .annotateContext(operationDocs({
        summary: "Update a treatment plan",
        description: "Changes the fields given (audited). A completed plan is read-only: 422 " +
          "`{\"errors\":{\"status\":[\"is completed: the plan is read-only\"]}}`.",
        access: writeAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Treatment plans",
    description: "A patient's treatment plans: diagnoses, goals and interventions; draft, active, completed or discontinued."
  }))
{}
