/** Lead care managers (ECM §4.8, §2.8): the oLCM and iLCM of each patient's case load. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { maxId } from "../../Domain/Ids.js"
import { LeadCareManagerRole, maxBulkAssignments } from "../../Domain/Ecm/LeadCareManagers.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, IdParam } from "../Schemas.js"
import { EcmAdminAuthentication } from "../Security.js"

/** An id in a JSON body: an integer PostgreSQL's `integer` holds. */
const BodyId = Schema.Int.pipe(Schema.between(1, maxId), Schema.annotations({ message: () => "is invalid" }))

const assignmentFields = {
  patient_id: BodyId.annotations({ description: "The patient whose case load changes" }),
  olcm_user_id: Schema.optional(BodyId.annotations({ description: "The outreach lead care manager: an active staff user" })),
  ilcm_user_id: Schema.optional(BodyId.annotations({ description: "The intensive lead care manager: an active staff user" }))
}

export class AssignLeadCareManagersRequest extends Schema.Class<AssignLeadCareManagersRequest>("AssignLeadCareManagersRequest")(
  assignmentFields,
  requestBody({ patient_id: 12, olcm_user_id: 4, ilcm_user_id: 9 }, { patient_id: 12, ilcm_user_id: 9 })
) {}

export class RemoveLeadCareManagerRequest extends Schema.Class<RemoveLeadCareManagerRequest>("RemoveLeadCareManagerRequest")({
  patient_id: BodyId.annotations({ description: "The patient whose case load changes" }),
  role: LeadCareManagerRole.annotations({ description: "The role to take away: olcm or ilcm" })
}, requestBody({ patient_id: 12, role: "olcm" })) {}

export const BulkAssignment = Schema.Struct(assignmentFields).annotations({ identifier: "BulkAssignment" })

export class BulkAssignRequest extends Schema.Class<BulkAssignRequest>("BulkAssignRequest")({
  assignments: BoundedArray(BulkAssignment, maxBulkAssignments).pipe(
    Schema.filter((list) => list.length > 0, { message: () => "can't be blank", jsonSchema: { minItems: 1 } })
  )
}, requestBody({ assignments: [{ patient_id: 12, olcm_user_id: 4 }, { patient_id: 13, olcm_user_id: 4, ilcm_user_id: 9 }] })) {}

/** A case load as assign and update answer it (ECM §4.8). */
export class CaseLoad extends Schema.Class<CaseLoad>("CaseLoad")({
  id: Schema.Int,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  provider_id: Schema.NullOr(Schema.Int),
  provider_name: Schema.NullOr(Schema.String),
  olcm_user_id: Schema.NullOr(Schema.Int),
  olcm_name: Schema.NullOr(Schema.String),
  ilcm_user_id: Schema.NullOr(Schema.Int),
  ilcm_name: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class AssignLeadCareManagersResponse extends Schema.Class<AssignLeadCareManagersResponse>("AssignLeadCareManagersResponse")({
  message: Schema.String,
  case_load: CaseLoad
}) {}

export class LeadCareManagerMessage extends Schema.Class<LeadCareManagerMessage>("LeadCareManagerMessage")({
  message: Schema.String
}) {}

/** One lead care manager of a patient, with the time the role was given (ECM §4.8). */
export class AssignedLeadCareManager extends Schema.Class<AssignedLeadCareManager>("AssignedLeadCareManager")({
  user_id: Schema.Int,
  name: Schema.String,
  email: Schema.String,
  assigned_at: Schema.NullOr(IsoTimestamp)
}) {}

export class PatientCaseLoadManagers extends Schema.Class<PatientCaseLoadManagers>("PatientCaseLoadManagers")({
  id: Schema.Int,
  provider_id: Schema.NullOr(Schema.Int),
  provider_name: Schema.NullOr(Schema.String),
  olcm: Schema.NullOr(AssignedLeadCareManager),
  ilcm: Schema.NullOr(AssignedLeadCareManager)
}) {}

export class PatientLeadCareManagersResponse extends Schema.Class<PatientLeadCareManagersResponse>("PatientLeadCareManagersResponse")({
  patient_id: Schema.Int,
  patient_name: Schema.String,
  case_load: Schema.NullOr(PatientCaseLoadManagers).annotations({ description: "Null until the patient has a case load" })
}) {}

export class BulkAssignSuccess extends Schema.Class<BulkAssignSuccess>("BulkAssignSuccess")({
  patient_id: Schema.Int,
  status: Schema.Literal("success")
}) {}

export class BulkAssignFailure extends Schema.Class<BulkAssignFailure>("BulkAssignFailure")({
  patient_id: Schema.Int,
  status: Schema.Literal("failed"),
  errors: Schema.Array(Schema.String)
}) {}

export class BulkAssignResponse extends Schema.Class<BulkAssignResponse>("BulkAssignResponse")({
  message: Schema.String,
  successful_count: Schema.Int,
  failed_count: Schema.Int,
  results: Schema.Array(Schema.Union(BulkAssignSuccess, BulkAssignFailure)).annotations({
    description: "One per assignment, in the order sent"
  })
}) {}

/** A lead care manager list item (ECM §2.8). */
export class LeadCareManager extends Schema.Class<LeadCareManager>("LeadCareManager")({
  id: Schema.Int,
  name: Schema.String,
  email: Schema.String,
  roles: Schema.Array(LeadCareManagerRole).annotations({ description: "The roles the user holds on at least one case load" }),
  assigned_patients_count: Schema.Int,
  olcm_assignments_count: Schema.Int,
  ilcm_assignments_count: Schema.Int
}) {}

export class LeadCareManagerList extends Schema.Class<LeadCareManagerList>("LeadCareManagerList")({
  lead_care_managers: Schema.Array(LeadCareManager),
  pagination: Pagination
}) {}

export const LeadCareManagerListQuery = listQuery({
  size: "per_page",
  search: "Part of the name, any case",
  fields: { role: Schema.optional(LeadCareManagerRole.annotations({ description: "Only users holding this role on some case load" })) }
})

/** Bulk bodies: 1,000 assignments of three 10-digit ids each, with room for whitespace. */
export const bulkBodyBytes = 256 * 1024

const spec = "ECM §4.8, §2.8"

export class EcmLeadCareManagersApi extends HttpApiGroup.make("ecmLeadCareManagers")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/lead_care_managers")
      .setUrlParams(LeadCareManagerListQuery)
      .addSuccess(LeadCareManagerList)
      .annotateContext(operationDocs({
        summary: "List lead care managers",
        description: "Users who can hold a lead care manager role (active clinic staff) and users who hold one, by " +
          "last name then first name, 25 a page by default, with the roles they hold and how many patients they " +
          "have in each. `search` matches part of the name; `role` keeps the users holding that role.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.post("assign", "/admin/clinic/ecm/lead_care_managers/assign")
      .setPayload(AssignLeadCareManagersRequest)
      .addSuccess(AssignLeadCareManagersResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Assign lead care managers",
        description: "Gives the patient's case load the oLCM and/or iLCM given (the other role is kept), creating " +
          "the case load if the patient has none. Each must be an active staff user (422 naming the role); one " +
          "person may hold both. Neither given: 422. Unknown patient: 404 `Patient not found`. Audited.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/ecm/lead_care_managers/assign")
      .setPayload(AssignLeadCareManagersRequest)
      .addSuccess(AssignLeadCareManagersResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update lead care managers",
        description: "The same body, rules and answer as assign: replaces the roles given, keeps the others.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/admin/clinic/ecm/lead_care_managers/assign")
      .setPayload(RemoveLeadCareManagerRequest)
      .addSuccess(LeadCareManagerMessage)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Remove a lead care manager",
        description: "Takes one role (`olcm` or `ilcm`) off the patient's case load. Removing a role nobody holds " +
          "changes nothing and answers the same. Unknown patient: 404 `Patient not found`. Audited.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("forPatient", "/admin/clinic/ecm/patients/:patient_id/lead_care_managers")
      .setPath(Schema.Struct({ patient_id: IdParam }))
      .addSuccess(PatientLeadCareManagersResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a patient's lead care managers",
        description: "The patient's case load with its provider and each lead care manager's name, email and the " +
          "time they were assigned; `case_load` is null for a patient without one. Unknown patient: 404.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.post("bulkAssign", "/admin/clinic/ecm/lead_care_managers/bulk_assign")
      .setPayload(BulkAssignRequest)
      .addSuccess(BulkAssignResponse)
      .annotate(BodyLimit, bulkBodyBytes)
      .annotateContext(operationDocs({
        summary: "Assign lead care managers in bulk",
        description: `Up to ${maxBulkAssignments} assignments, each with the rules of assign and each on its own: ` +
          "one that fails (unknown patient, a user who cannot hold the role, neither id, a patient listed twice) " +
          "does not stop the others. Answers 200 with the counts and one result per assignment in the order sent: " +
          "`{patient_id, status: \"success\"}` or `{patient_id, status: \"failed\", errors: [...]}`. Audited.",
        access: Access.admin,
        spec
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Lead care managers",
    description: "The outreach (oLCM) and intensive (iLCM) lead care managers of each patient's case load."
  }))
{}
