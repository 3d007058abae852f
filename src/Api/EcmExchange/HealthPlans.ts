/**
 * Health plans (docs/ecm-exchange.md): the managed care plans that send member information files
 * and receive the return files; and the member fields staff keep for those files.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Npi } from "../Ecm/PrtfReports.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, IdParam, maxLengths, RequiredString } from "../Schemas.js"
import { EcmAdminAuthentication, EcmStaffAuthentication } from "../Security.js"

const spec = "ECM §2.6, §2.7, §4.6, §4.7 (beyond the spec: docs/ecm-exchange.md)"

/** Most provider NPIs one plan lists. */
export const maxPlanNpis = 100

const planFields = {
  contact_name: Schema.optional(Schema.NullOr(BoundedString(200)).annotations({ description: "The plan's contact person" })),
  contact_email: Schema.optional(Schema.NullOr(BoundedString(maxLengths.email)).annotations({ description: "The contact's email" })),
  contact_phone: Schema.optional(Schema.NullOr(BoundedString(50)).annotations({ description: "The contact's phone" })),
  active: Schema.optional(Schema.Boolean.annotations({ description: "Inactive plans keep their files; default true" })),
  provider_npis: Schema.optional(BoundedArray(Npi, maxPlanNpis).annotations({
    description: "Our ECM provider NPIs contracted with the plan (10 digits each): a MIF import that names no plan is this " +
      "plan's when its records' NPIs are linked to this plan and no other"
  })),
  provider_tin: Schema.optional(Schema.NullOr(BoundedString(20)).annotations({ description: "Our TIN for this plan: the files' ECM Provider TIN" })),
  provider_type: Schema.optional(Schema.NullOr(BoundedString(100)).annotations({ description: "The OTF's Provider Type column" }))
}

export class CreateHealthPlanRequest extends Schema.Class<CreateHealthPlanRequest>("CreateHealthPlanRequest")({
  name: RequiredString(200).annotations({ description: "The plan's name: the files' MCP Name" }),
  mcp_id: RequiredString(50).annotations({ description: "DHCS's plan identifier: the files' Primary Payer (MCP) Identifier; unique" }),
  ...planFields
}, requestBody(
  { name: "Bay Health Plan", mcp_id: "MCP-301" },
  { name: "Bay Health Plan", mcp_id: "MCP-301", contact_name: "Pat Lee", contact_email: "ecm@bayhealth.example", provider_npis: ["1234567893"], provider_tin: "941234567", provider_type: "ECM Provider" }
)) {}

export class UpdateHealthPlanRequest extends Schema.Class<UpdateHealthPlanRequest>("UpdateHealthPlanRequest")({
  name: Schema.optional(RequiredString(200)),
  mcp_id: Schema.optional(RequiredString(50)),
  ...planFields
}, requestBody({ active: false }, { contact_email: "ecm@bayhealth.example", provider_npis: ["1234567893", "1234567901"] })) {}

export class HealthPlan extends Schema.Class<HealthPlan>("HealthPlan")({
  id: Schema.Int,
  name: Schema.String,
  mcp_id: Schema.String,
  contact_name: Schema.NullOr(Schema.String),
  contact_email: Schema.NullOr(Schema.String),
  contact_phone: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  provider_npis: Schema.Array(Schema.String),
  provider_tin: Schema.NullOr(Schema.String),
  provider_type: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class HealthPlanResponse extends Schema.Class<HealthPlanResponse>("HealthPlanResponse")({ health_plan: HealthPlan }) {}

export class HealthPlanList extends Schema.Class<HealthPlanList>("HealthPlanList")({
  health_plans: Schema.Array(HealthPlan),
  pagination: Pagination
}) {}

const idPath = Schema.Struct({ id: IdParam })

export class EcmHealthPlansApi extends HttpApiGroup.make("ecmHealthPlans")
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/ecm/health_plans")
      .setPayload(CreateHealthPlanRequest)
      .addSuccess(HealthPlanResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Create a health plan",
        description: "Records a managed care plan: its name and DHCS `mcp_id` (unique: 422 `Mcp id has already been " +
          "taken`), its contact, whether it is active, our provider NPIs contracted with it, and the TIN and provider " +
          "type its files carry.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/health_plans")
      .setUrlParams(listQuery({ size: "per_page" }))
      .addSuccess(HealthPlanList)
      .annotateContext(operationDocs({
        summary: "List health plans",
        description: `By name, 25 a page by default (at most ${maxPageSize}); inactive plans included.`,
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/health_plans/:id")
      .setPath(idPath)
      .addSuccess(HealthPlanResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a health plan",
        description: "The plan. Unknown id: 404 `Health plan not found`.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/ecm/health_plans/:id")
      .setPath(idPath)
      .setPayload(UpdateHealthPlanRequest)
      .addSuccess(HealthPlanResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a health plan",
        description: "Changes the fields given (absent fields keep their value; `provider_npis` replaces the list). " +
          "Unknown id: 404 `Health plan not found`; a `mcp_id` another plan has: 422.",
        access: Access.admin,
        spec
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Health plans",
    description: "The managed care plans that send member information files and receive the Return Transmission and " +
      "Outreach Tracker files."
  }))
{}

const Indicator = Schema.Literal("Y", "N")

export class ExchangeFieldsRequest extends Schema.Class<ExchangeFieldsRequest>("ExchangeFieldsRequest")({
  homelessness_indicator: Schema.optional(Schema.NullOr(Indicator).annotations({
    description: "The RTF's Member Homelessness Indicator: Y, N, or null (blank in the file)"
  })),
  pof_indicator: Schema.optional(Schema.NullOr(Indicator).annotations({ description: "The RTF's Member POF Indicator: Y, N or null" })),
  pof: Schema.optional(Schema.NullOr(BoundedString(200)).annotations({ description: "The RTF's Member POF (population of focus) or null" }))
}, requestBody({ homelessness_indicator: "Y" }, { pof_indicator: "Y", pof: "Adults experiencing homelessness" })) {}

export class ExchangeFields extends Schema.Class<ExchangeFields>("ExchangeFields")({
  patient_id: Schema.Int,
  homelessness_indicator: Schema.NullOr(Indicator),
  pof_indicator: Schema.NullOr(Indicator),
  pof: Schema.NullOr(Schema.String)
}) {}

export class ExchangeFieldsResponse extends Schema.Class<ExchangeFieldsResponse>("ExchangeFieldsResponse")({ exchange_fields: ExchangeFields }) {}

const patientPath = Schema.Struct({ patient_id: IdParam })
const staffAccess = "Clinic staff (`X-User-Token`): admins, front desk and billing for any member; providers and supervisors " +
  "for the members of their care relationships (a break-glass `X-Access-Reason` header opens another, audited). Any other " +
  "member is 404 `Patient not found`."

export class EcmExchangeFieldsApi extends HttpApiGroup.make("ecmExchangeFields")
  .add(
    HttpApiEndpoint.get("show", "/clinic/ecm/patients/:patient_id/exchange_fields")
      .setPath(patientPath)
      .addSuccess(ExchangeFieldsResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a member's return-file fields",
        description: "The member's homelessness indicator, POF indicator and POF as the Return Transmission File " +
          "writes them (null: blank).",
        access: staffAccess,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/ecm/patients/:patient_id/exchange_fields")
      .setPath(patientPath)
      .setPayload(ExchangeFieldsRequest)
      .addSuccess(ExchangeFieldsResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a member's return-file fields",
        description: "Sets the fields given (absent fields keep their value, null clears one); audited. Indicators are " +
          "`Y` or `N`.",
        access: staffAccess,
        spec
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Return file fields",
    description: "What the record cannot know but the Return Transmission File asks: kept by staff, blank until they do."
  }))
{}
