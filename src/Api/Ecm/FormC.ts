/** Form C submissions: clinic create / list / detail (ECM §4.4) and admin list / detail (ECM §4.5). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { formCBodyBytes, formCSections, maxFormDataBytes } from "../../Domain/Ecm/FormC.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, reportAllErrors, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { IdParam } from "../Schemas.js"
import { EcmAdminAuthentication, EcmStaffAuthentication } from "../Security.js"

/**
 * `form_data` as sent: any JSON, checked by src/Domain/Ecm/FormC.ts `formDataProblems` so that
 * every problem gets a message naming its section (a schema would drop unknown sections
 * silently, since request bodies ignore unknown fields). The document describes the accepted shape.
 */
export const FormDataInput = Schema.Unknown.annotations({
  identifier: "FormCFormData",
  description: `The Form C answers keyed by section name (ECM §2.5): at least one of the 23 sections, each a JSON ` +
    `object; no other keys. Dates inside a section (fields named \`date\`, \`dob\`, \`date_of_birth\`, \`*_date\`) are ` +
    `\`YYYY-MM-DD\`; values are stored as sent. \`background_information.member_id\`, when given, must be the ` +
    `patient's member id. At most ${maxFormDataBytes} bytes as JSON.`,
  jsonSchema: {
    type: "object",
    minProperties: 1,
    properties: Object.fromEntries(formCSections.map((section) => [section, { type: "object" }])),
    additionalProperties: false
  }
})

/** `form_data` as answered: the stored object. */
const isJsonObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `form_data` as answered: the stored object, keyed by section name. */
export const FormData = Schema.declare(isJsonObject, {
  identifier: "FormCFormDataStored",
  description: "The Form C answers keyed by section name (ECM §2.5), as submitted",
  jsonSchema: { type: "object", properties: Object.fromEntries(formCSections.map((section) => [section, { type: "object" }])) }
})

export class CreateFormCRequest extends Schema.Class<CreateFormCRequest>("CreateFormCRequest")({
  form_c_submission: Schema.optional(Schema.Struct({ form_data: Schema.optional(FormDataInput) }))
}, requestBody({
  form_c_submission: {
    form_data: {
      background_information: { member_id: "91234567A", assessment_date: "2026-03-02", preferred_language: "es" },
      housing_environment: { stable_housing: false, concerns: ["rent", "mold"] },
      priorities: { goals: "Find stable housing before summer" }
    }
  }
})) {}

export const PatientQuery = Schema.Struct({
  patient_id: IdParam.annotations({ description: "The patient the submissions belong to" })
}).annotations(reportAllErrors)

/** The create response (ECM §4.4). */
export class FormCSubmission extends Schema.Class<FormCSubmission>("FormCSubmission")({
  id: Schema.Int,
  patient_id: Schema.Int,
  user_id: Schema.Int,
  form_data: FormData,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class FormCSubmissionResponse extends Schema.Class<FormCSubmissionResponse>("FormCSubmissionResponse")({
  form_c_submission: FormCSubmission
}) {}

/** The clinic detail: the author's name beside the record (ECM §2.5). */
export class ClinicFormCSubmission extends FormCSubmission.extend<ClinicFormCSubmission>("ClinicFormCSubmission")({
  user_name: Schema.String
}) {}

export class ClinicFormCSubmissionResponse extends Schema.Class<ClinicFormCSubmissionResponse>("ClinicFormCSubmissionResponse")({
  form_c_submission: ClinicFormCSubmission
}) {}

export class ClinicFormCListItem extends Schema.Class<ClinicFormCListItem>("ClinicFormCListItem")({
  id: Schema.Int,
  patient_id: Schema.Int,
  user_id: Schema.Int,
  created_at: IsoTimestamp
}) {}

export class ClinicFormCList extends Schema.Class<ClinicFormCList>("ClinicFormCList")({
  form_c_submissions: Schema.Array(ClinicFormCListItem)
}) {}

export class AdminFormCListItem extends Schema.Class<AdminFormCListItem>("AdminFormCListItem")({
  id: Schema.Int,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  user_id: Schema.Int,
  user_name: Schema.String,
  created_at: IsoTimestamp
}) {}

export class AdminFormCList extends Schema.Class<AdminFormCList>("AdminFormCList")({
  form_c_submissions: Schema.Array(AdminFormCListItem),
  pagination: Pagination
}) {}

/** The admin detail: the full record with the patient's and the author's names. */
export class AdminFormCSubmission extends FormCSubmission.extend<AdminFormCSubmission>("AdminFormCSubmission")({
  patient_name: Schema.String,
  user_name: Schema.String
}) {}

export class AdminFormCSubmissionResponse extends Schema.Class<AdminFormCSubmissionResponse>("AdminFormCSubmissionResponse")({
  form_c_submission: AdminFormCSubmission
}) {}

export const AdminFormCListQuery = listQuery({
  size: "per_page",
  fields: { patient_id: Schema.optional(IdParam.annotations({ description: "Only this patient's submissions" })) }
})

const spec44 = "ECM §4.4, §2.5"

/** Clinic Form C: a patient's assessments, recorded and read by clinic staff. */
export class EcmFormCApi extends HttpApiGroup.make("ecmFormC")
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients/ecm/form_c_submissions")
      .setUrlParams(PatientQuery)
      .setPayload(CreateFormCRequest)
      .addSuccess(FormCSubmissionResponse, { status: 201 })
      .addError(EcmNotFound.schema)
      .annotate(BodyLimit, formCBodyBytes)
      .annotateContext(operationDocs({
        summary: "Submit a Form C",
        description: "Stores a Form C assessment for the patient and answers it with 201. `form_data` is required " +
          "(422 `Form data can't be blank`); unknown sections, sections that are not objects, dates not in " +
          "`YYYY-MM-DD` and a `background_information.member_id` other than the patient's are 422 with messages " +
          "naming the section. Unknown patient: 404 `Patient not found`. Audited.",
        access: Access.staff,
        spec: spec44
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/ecm/form_c_submissions")
      .setUrlParams(PatientQuery)
      .addSuccess(ClinicFormCList)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a patient's Form C submissions",
        description: "Every submission of the patient, newest first, without `form_data` and without pagination. " +
          "Unknown patient: 404 `Patient not found`.",
        access: Access.staff,
        spec: spec44
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/ecm/form_c_submissions/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .setUrlParams(PatientQuery)
      .addSuccess(ClinicFormCSubmissionResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a Form C submission",
        description: "The full submission with `form_data` and the author's `user_name`. A submission of another " +
          "patient, or an unknown id: 404 `Form C submission not found`; an unknown patient: 404 `Patient not found`.",
        access: Access.staff,
        spec: spec44
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Form C",
    description: "Form C assessments of a patient: 23 named sections of answers (ECM §2.5)."
  }))
{}

const spec45 = "ECM §4.5, §2.5"

/** Admin Form C: every patient's submissions. */
export class EcmAdminFormCApi extends HttpApiGroup.make("ecmAdminFormC")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/form_c_submissions")
      .setUrlParams(AdminFormCListQuery)
      .addSuccess(AdminFormCList)
      .annotateContext(operationDocs({
        summary: "List Form C submissions",
        description: "Submissions of every patient (or of `patient_id`), newest first, 25 a page by default, with " +
          "the patient's and the author's names; without `form_data` and `updated_at`.",
        access: Access.admin,
        spec: spec45
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/form_c_submissions/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .addSuccess(AdminFormCSubmissionResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a Form C submission",
        description: "The full submission with `form_data`, the patient's and the author's names. Unknown id: 404 " +
          "`Form C submission not found`.",
        access: Access.admin,
        spec: spec45
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Form C",
    description: "Form C assessments of every patient, for review (ECM §2.5)."
  }))
{}
