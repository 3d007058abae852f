/** Help requests of a patient's family (general §4.2). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientId, PatientIdFromText } from "../../Domain/Ids.js"
import { HelpRequest } from "../../Domain/Patients/Records.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"

export const helpRequestMaxLengths = { subject: 200, message: 5000 } as const

/** How records under a patient name their patient when the path does not. */
export const patientIdDescription = "The patient; a parent with exactly one linked patient may leave it out"

export const PatientScopedQuery = listQuery({
  size: "page_size",
  fields: { patient_id: Schema.optional(PatientIdFromText.annotations({ description: patientIdDescription })) }
})

export class CreateHelpRequestRequest extends Schema.Class<CreateHelpRequestRequest>("CreateHelpRequestRequest")({
  help_request: Schema.Struct({
    patient_id: Schema.optional(PatientId.annotations({ description: patientIdDescription })),
    subject: RequiredString(helpRequestMaxLengths.subject),
    message: RequiredString(helpRequestMaxLengths.message)
  })
}, requestBody({ help_request: { patient_id: 7, subject: "Rescheduling", message: "Can we move Thursday's session to Friday?" } })) {}

export class HelpRequestResponse extends Schema.Class<HelpRequestResponse>("HelpRequestResponse")({ help_request: HelpRequest }) {}
export class HelpRequestList extends Schema.Class<HelpRequestList>("HelpRequestList")({
  help_requests: Schema.Array(HelpRequest),
  pagination: Pagination
}) {}

export class HelpRequestsApi extends HttpApiGroup.make("helpRequests")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/help_requests")
      .setUrlParams(PatientScopedQuery)
      .addSuccess(HelpRequestList)
      .annotateContext(operationDocs({
        summary: "List a patient's help requests",
        description: "The patient's help requests, newest first, 25 a page by default.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients/help_requests")
      .setPayload(CreateHelpRequestRequest)
      .addSuccess(HelpRequestResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Ask the clinic for help",
        description: "Records a help request (status `open`) and emails the clinic's support address " +
          "(`CLINIC_SUPPORT_EMAIL`) with the subject and the request's id; the message stays in the API.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
      // A 5000-character message sent as JSON \u escapes is ~30 KB.
      .annotate(BodyLimit, 64 * 1024)
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Help requests",
    description: "Questions a family sends the clinic about a patient: open, in progress, resolved."
  }))
{}
