/**
 * Insurance plans (admin) and a patient's coverage (clinic): beyond the spec, needed by the 837P
 * subscriber and payer loops (docs/spec-decisions.md).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ClaimFilingIndicator, Coverage, Gender, InsurancePlan, Relationship } from "../../Domain/Billing/Insurance.js"
import { InsurancePlanId, InsurancePlanIdFromText, PatientIdFromText } from "../../Domain/Ids.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedString, IsoDate, Name, RequiredString } from "../Schemas.js"
import { AdminAuthentication, Authentication } from "../Security.js"

export const insurancePlansPageSize = 25

const PayerId = RequiredString(80).annotations({ description: "The payer's id at the clearinghouse (2010BB NM109)" })

const planExample = { name: "Blue Shield of California", payer_id: "94036", claim_filing_indicator: "BL" }

export class CreateInsurancePlanRequest extends Schema.Class<CreateInsurancePlanRequest>("CreateInsurancePlanRequest")({
  insurance_plan: Schema.Struct({
    name: RequiredString(100),
    payer_id: PayerId,
    claim_filing_indicator: ClaimFilingIndicator.annotations({
      description: "837P SBR09: CI commercial, MC Medicaid, MB Medicare Part B, BL Blue Cross/Blue Shield, HM HMO …"
    }),
    active: Schema.optional(Schema.Boolean)
  })
}, requestBody({ insurance_plan: planExample })) {}

export class UpdateInsurancePlanRequest extends Schema.Class<UpdateInsurancePlanRequest>("UpdateInsurancePlanRequest")({
  insurance_plan: Schema.Struct({
    name: Schema.optional(RequiredString(100)),
    payer_id: Schema.optional(PayerId),
    claim_filing_indicator: Schema.optional(ClaimFilingIndicator),
    active: Schema.optional(Schema.Boolean)
  })
}, requestBody({ insurance_plan: { active: false } })) {}

export class InsurancePlanResponse extends Schema.Class<InsurancePlanResponse>("InsurancePlanResponse")({ insurance_plan: InsurancePlan }) {}
export class InsurancePlanList extends Schema.Class<InsurancePlanList>("InsurancePlanList")({
  insurance_plans: Schema.Array(InsurancePlan),
  pagination: Pagination
}) {}

const PlanListQuery = listQuery({ size: "page_size", search: "Part of the name or payer id" })

export class UpdateCoverageRequest extends Schema.Class<UpdateCoverageRequest>("UpdateCoverageRequest")({
  coverage: Schema.Struct({
    insurance_plan_id: InsurancePlanId,
    member_id: RequiredString(80),
    group_number: Schema.optional(Schema.NullOr(BoundedString(50))),
    relationship: Schema.optional(Relationship.annotations({
      description: "The patient's relationship to the subscriber; default `self`. Otherwise `subscriber` names the policy holder"
    })),
    subscriber: Schema.optional(Schema.NullOr(Schema.Struct({
      first_name: Schema.optional(Name),
      last_name: Schema.optional(Name),
      date_of_birth: Schema.optional(IsoDate),
      gender: Schema.optional(Schema.NullOr(Gender)),
      address: Schema.optional(Schema.NullOr(BoundedString(55))),
      city: Schema.optional(Schema.NullOr(BoundedString(30))),
      state: Schema.optional(Schema.NullOr(BoundedString(2))),
      zip: Schema.optional(Schema.NullOr(BoundedString(10)))
    }).annotations({
      description: "The guardian or spouse who holds the policy. Without a name, the account linked to the patient " +
        "(`patients.user_id`, a parent's) is taken; `date_of_birth` is then required here unless that account has one"
    })))
  })
}, requestBody(
  { coverage: { insurance_plan_id: 2, member_id: "XYZ123456", group_number: "GRP-01" } },
  { coverage: { insurance_plan_id: 3, member_id: "91234567A", relationship: "child", subscriber: { first_name: "Morgan", last_name: "Vale", date_of_birth: "1985-09-09", gender: "F" } } }
)) {}

export class CoverageResponse extends Schema.Class<CoverageResponse>("CoverageResponse")({ coverage: Coverage }) {}

const idPath = Schema.Struct({ id: InsurancePlanIdFromText })
const patientPath = Schema.Struct({ patient_id: PatientIdFromText })

/** Admin insurance plans. */
export class InsurancePlansApi extends HttpApiGroup.make("insurancePlans")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/insurance_plans")
      .setUrlParams(PlanListQuery)
      .addSuccess(InsurancePlanList)
      .annotateContext(operationDocs({
        summary: "List insurance plans",
        description: `Plans by name, ${insurancePlansPageSize} a page by default; \`search\` matches the name or payer id.`,
        access: Access.admin,
        spec: "general §4.6 (`insurance_plan_id`; the endpoints are beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/insurance_plans")
      .setPayload(CreateInsurancePlanRequest)
      .addSuccess(InsurancePlanResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Create an insurance plan",
        description: "A payer the clinic bills: its name, its id at the clearinghouse and its claim filing indicator.",
        access: Access.admin,
        spec: "general §4.6 (beyond the spec: the 837P needs it)"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/insurance_plans/:id")
      .setPath(idPath)
      .addSuccess(InsurancePlanResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an insurance plan",
        description: "One plan; 404 `Insurance plan not found` for an unknown id.",
        access: Access.admin,
        spec: "general §4.6 (beyond the spec: the 837P needs it)"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/insurance_plans/:id")
      .setPath(idPath)
      .setPayload(UpdateInsurancePlanRequest)
      .addSuccess(InsurancePlanResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update an insurance plan",
        description: "Changes the given fields; `active: false` hides the plan from new coverage without touching existing claims.",
        access: Access.admin,
        spec: "general §4.6 (beyond the spec: the 837P needs it)"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Insurance plans",
    description: "The payers claims are billed to (837P loop 2010BB and SBR09)."
  }))
{}

/** A patient's coverage. */
export class CoverageApi extends HttpApiGroup.make("coverage")
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/:patient_id/coverage")
      .setPath(patientPath)
      .addSuccess(CoverageResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a patient's coverage",
        description: "The patient's insurance: plan, member id, group number and subscriber. 404 `Patient not found` for a " +
          "patient the caller may not see, `Coverage not found` when none is on file.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.6 (beyond the spec: the 837P needs it)"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/patients/:patient_id/coverage")
      .setPath(patientPath)
      .setPayload(UpdateCoverageRequest)
      .addSuccess(CoverageResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Set a patient's coverage",
        description: "Creates or replaces the patient's coverage. The plan must exist and be active (`insurance_plan_id` " +
          "\"must exist\"). For a dependant (`relationship` other than `self`) the subscriber needs a name and a date of " +
          "birth: given here, or taken from the account linked to the patient. Claims already submitted keep the plan they were billed to.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.6 (beyond the spec: the 837P needs it)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Coverage",
    description: "A patient's insurance coverage and its subscriber (837P loops 2000B, 2010BA and 2000C)."
  }))
{}
