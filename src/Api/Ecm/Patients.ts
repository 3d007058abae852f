import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../../Domain/Time.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { Access, groupDocs, operationDocs } from "../Docs.js"
import { BoundedString, IdParam } from "../Schemas.js"
import { EcmAdminAuthentication } from "../Security.js"

const Text = Schema.NullOr(Schema.String)
const Id = Schema.NullOr(Schema.Int)

/** The latest eligibility record of a patient, as the list shows it. */
export class LatestEligibility extends Schema.Class<LatestEligibility>("LatestEligibility")({
  id: Schema.Int,
  member_id: Text,
  cin: Text,
  ecm_service_auth_id: Text,
  ecm_provider_name: Text,
  ecm_benefit_auth_eff_date: Schema.NullOr(IsoDate),
  ecm_benefit_auth_end_date: Schema.NullOr(IsoDate),
  acuity_level: Text,
  member_record_status: Schema.String
}) {}

export class PatientCaseLoad extends Schema.Class<PatientCaseLoad>("PatientCaseLoad")({
  provider_id: Id,
  provider_name: Text,
  olcm_user_id: Id,
  olcm_name: Text,
  ilcm_user_id: Id,
  ilcm_name: Text
}) {}

export class EcmPatientListItem extends Schema.Class<EcmPatientListItem>("EcmPatientListItem")({
  id: Schema.Int,
  name: Schema.String,
  date_of_birth: Schema.NullOr(IsoDate),
  ecm_eligibility_information: Schema.NullOr(LatestEligibility),
  case_load: Schema.NullOr(PatientCaseLoad)
}) {}

export class EcmPatientList extends Schema.Class<EcmPatientList>("EcmPatientList")({
  patients: Schema.Array(EcmPatientListItem),
  pagination: Pagination
}) {}

/** One eligibility record in a patient's history, newest first. */
export class PatientEligibility extends LatestEligibility.extend<PatientEligibility>("PatientEligibility")({
  mif_file_id: Schema.Int,
  ecm_npi: Text,
  created_at: IsoTimestamp
}) {}

/** One engagement status entry: who recorded it (`actor_id`), when (`created_at`), and over what. */
export class StatusHistoryEntry extends Schema.Class<StatusHistoryEntry>("StatusHistoryEntry")({
  id: Schema.Int,
  status: Schema.String,
  effective_date: IsoDate,
  source: Schema.Literal("mif", "user", "system"),
  reason: Text,
  actor_id: Id,
  created_at: IsoTimestamp.annotations({ description: "When it was recorded (an entry recorded late has an earlier effective_date)" }),
  replaced_status: Schema.NullOr(Schema.String).annotations({
    description: "The status in force on effective_date when this entry was recorded (null: none yet)"
  }),
  replaced_effective_date: Schema.NullOr(IsoDate).annotations({ description: "That status's effective date" })
}) {}

export class EcmPatient extends Schema.Class<EcmPatient>("EcmPatient")({
  id: Schema.Int,
  name: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  date_of_birth: Schema.NullOr(IsoDate),
  gender: Text,
  phone: Text,
  email: Text,
  address: Text,
  city: Text,
  state: Text,
  zip: Text,
  language: Schema.String,
  active: Schema.Boolean,
  member_id: Text,
  cin: Text,
  eligibility_informations: Schema.Array(PatientEligibility),
  case_load: Schema.NullOr(PatientCaseLoad),
  engagement_status: Schema.NullOr(StatusHistoryEntry).annotations({ description: "The latest status history entry" }),
  status_histories: Schema.Array(StatusHistoryEntry),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class EcmPatientResponse extends Schema.Class<EcmPatientResponse>("EcmPatientResponse")({ patient: EcmPatient }) {}

export const EcmPatientListQuery = listQuery({
  size: "per_page",
  search: "Part of the name or of the member id, any case",
  fields: {
    status: Schema.optional(BoundedString(100).annotations({ description: "Member record status of the latest eligibility record" })),
    provider_id: Schema.optional(IdParam.annotations({ description: "Provider of the patient's case load" }))
  }
})

/** Admin ECM patients: the members imported from MIF files. */
export class EcmPatientsApi extends HttpApiGroup.make("ecmPatients")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/patients")
      .setUrlParams(EcmPatientListQuery)
      .addSuccess(EcmPatientList)
      .annotateContext(operationDocs({
        summary: "List ECM patients",
        description: "Patients with at least one eligibility record, by last name then first name, 25 a page by " +
          "default; each with their latest eligibility record and case load. `search` matches part of the name or " +
          "member id, `status` the latest record's member record status, `provider_id` the case load's provider.",
        access: Access.admin,
        spec: "ECM §2.6 (the original system's admin ECM patients)"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/patients/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .addSuccess(EcmPatientResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an ECM patient",
        description: "Demographics, eligibility history (newest first), case load and engagement status history. " +
          "A patient without eligibility records is not an ECM patient: 404.",
        access: Access.admin,
        spec: "ECM §2.6 (the original system's admin ECM patients)"
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Patients",
    description: "ECM members as MIF imports brought them in: their eligibility records, case load and engagement status."
  }))
{}
