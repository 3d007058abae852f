/** A patient's documents (general §4.2; upload and delete beyond the spec). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientIdFromText } from "../../Domain/Ids.js"
import { documentContentTypes, maxDocumentBytes, PatientDocument } from "../../Domain/Patients/Records.js"
import { carriesFiles, DataUriField } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { IdParam, RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"
import { staffWriteAccess } from "./Patients.js"

export const documentMaxLengths = {
  name: 255,
  /** A data URI of the largest document: base64 is 4/3 of the bytes, plus the prefix. */
  file: Math.ceil(maxDocumentBytes / 3) * 4 + 100
} as const

export class UploadDocumentRequest extends Schema.Class<UploadDocumentRequest>("UploadDocumentRequest")({
  document: Schema.Struct({
    name: RequiredString(documentMaxLengths.name).annotations({ description: "The file name shown in the list" }),
    file: RequiredString(documentMaxLengths.file).annotations({
      description: `The file as a base64 data URI, \`data:<type>;base64,…\`; types: ${documentContentTypes.join(", ")}; ` +
        `at most ${maxDocumentBytes / 1024 / 1024} MB`
    }),
    clinical: Schema.optional(Schema.Boolean.annotations({
      description: "Whether the file is clinical content (hidden from front desk and billing). Default: true, except " +
        "for a file front desk or billing uploads (false)"
    }))
  })
}, requestBody({ document: { name: "consent.pdf", file: "data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCg==" } })) {}

export class DocumentResponse extends Schema.Class<DocumentResponse>("DocumentResponse")({ document: PatientDocument }) {}
export class DocumentList extends Schema.Class<DocumentList>("DocumentList")({
  documents: Schema.Array(PatientDocument),
  pagination: Pagination
}) {}

const access = `${Access.signedIn} Front desk and billing see, upload and delete only the documents not marked \`clinical\`.`

const patientPath = Schema.Struct({ patient_id: PatientIdFromText })

export class PatientDocumentsApi extends HttpApiGroup.make("patientDocuments")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/:patient_id/documents")
      .setPath(patientPath)
      .setUrlParams(listQuery({ size: "page_size" }))
      .addSuccess(DocumentList)
      .annotateContext(operationDocs({
        summary: "A patient's documents",
        description: "The patient's files, newest first, 25 a page by default; each `url` is a signed download link valid 30 minutes.",
        access,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("upload", "/clinic/patients/:patient_id/documents")
      .setPath(patientPath)
      .setPayload(UploadDocumentRequest)
      .addSuccess(DocumentResponse, { status: 201 })
      .annotateContext(carriesFiles)
      .annotate(DataUriField, ["document", "file"])
      .annotateContext(operationDocs({
        summary: "Upload a patient document",
        description: "Stores a file for the patient (beyond the spec). PDF, PNG, JPEG, GIF, WebP, plain text and CSV; " +
          `at most ${maxDocumentBytes / 1024 / 1024} MB; the declared type must match the file's content for PDFs and images.`,
        access,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/clinic/patients/:patient_id/documents/:id")
      .setPath(Schema.Struct({ patient_id: PatientIdFromText, id: IdParam }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .annotateContext(operationDocs({
        summary: "Delete a patient document",
        description: "Removes the file (beyond the spec); 404 `Document not found` for a document of another patient, " +
          "and for a clinical document when the caller is front desk or billing.",
        access: `${staffWriteAccess} Front desk and billing delete only the documents not marked \`clinical\`.`,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Patient documents",
    description: "Files kept for a patient, stored in the object store and downloaded through signed links."
  }))
{}
