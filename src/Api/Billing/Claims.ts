/**
 * Admin claims (general §2.6, §4.6): the list and filters, the record and its status machine,
 * claim documents, and 837P generation.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Claim, ClaimDocument, ClaimStatus, DocumentKind } from "../../Domain/Billing/Claim.js"
import { isCptFormat, isIcd10, isModifier, maxDiagnosisCodes, maxModifiers, placesOfService } from "../../Domain/Billing/Codes.js"
import {
  AppointmentId, ClaimDocumentIdFromText, ClaimId, ClaimIdFromText, InsurancePlanId, PatientId, PatientIdFromText, ProviderId,
  ProviderIdFromText
} from "../../Domain/Ids.js"
import { AppointmentType, PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { BodyLimit, carriesFiles, DataUriField } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { dateRange, listBodyFields, listQuery, nameFilter } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, IsoDate, RequiredString } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"

export const claimsPageSize = 25
/** Signed links to documents and 837P files live this long. */
export const fileUrlMinutes = 30
/** Most claims one 837P batch takes (one request). */
export const maxClaimsPerBatch = 2000
/** Body limit of `generate_edi`: 2,000 ids, each up to 10 digits and a comma, with room for JSON escapes. */
export const generateEdiBodyBytes = 64 * 1024
export const maxDenialReasonLength = 500
export const maxDocumentNameLength = 255
export const maxBatchNameLength = 100
/**
 * The largest claim document BILLING_DOCUMENT_MAX_BYTES may allow: scanned superbills and EOBs
 * are a few MB, and clearinghouses take attachments of about this size.
 */
export const maxDocumentBytesLimit = 10 * 1024 * 1024
/** Longest `document.file`: the data URI of a file of `maxDocumentBytesLimit` (base64 is 4/3 of it) with its prefix. */
export const maxDocumentDataUriLength = Math.ceil(maxDocumentBytesLimit / 3) * 4 + 64

export const claimMessages = {
  notFound: "Claim not found",
  documentNotFound: "Document not found",
  amount: "must be greater than 0",
  decimals: "must have at most 2 decimal places",
  notEditable: (status: string) => `is ${status}: only draft, ready and rejected claims can be edited`,
  deleteDraftOnly: (status: string) => `is ${status}: only draft claims can be deleted`,
  submittedByEdi: "can only become submitted through EDI generation",
  move: (from: string, to: string) => `can't change from ${from} to ${to}`
} as const

const DiagnosisCode = BoundedString(8).pipe(
  Schema.filter(isIcd10, { message: () => "is invalid", jsonSchema: { pattern: "^[A-Za-z][0-9][A-Za-z0-9](\\.?[A-Za-z0-9]{1,4})?$" } }),
  Schema.annotations({ description: "ICD-10-CM: letter, digit, letter or digit, then optionally a dot and 1–4 more (`F32.9`)" })
)

const DiagnosisCodes = BoundedArray(DiagnosisCode, maxDiagnosisCodes).pipe(
  Schema.filter((codes) => codes.length > 0, { message: () => "can't be blank", jsonSchema: { minItems: 1 } }),
  Schema.annotations({ description: `1–${maxDiagnosisCodes} ICD-10-CM codes; stored and returned as sent, upper case (the 837P drops the dot); a code written both ways repeats it; the first is the principal diagnosis` })
)

const CptCode = BoundedString(5).pipe(
  Schema.filter((s) => isCptFormat(s.toUpperCase()), { message: () => "is invalid", jsonSchema: { pattern: "^([0-9]{4}[0-9A-Za-z]|[A-Za-z][0-9]{4})$" } }),
  Schema.annotations({ description: "One of the spec's CPT codes (90834, 90837, 90791, 90792, 90847, 90853) or BILLING_CPT_CODES" })
)

const Modifier = BoundedString(2).pipe(
  Schema.filter((s) => isModifier(s.toUpperCase()), { message: () => "is invalid", jsonSchema: { pattern: "^[A-Za-z0-9]{2}$" } })
)

const PlaceOfService = Schema.Literal(...placesOfService).annotations({
  message: () => "is not included in the list",
  description: "11 office, 02 telehealth (not at home), 10 telehealth in the patient's home; default 11"
})

/** Dollars: more than 0, two decimals at most, within numeric(10,2). */
const Amount = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n), { message: () => "is not a number" }),
  Schema.greaterThan(0, { message: () => claimMessages.amount }),
  Schema.lessThanOrEqualTo(99_999_999.99, { message: () => "must be less than or equal to 99999999.99" }),
  Schema.filter((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, { message: () => claimMessages.decimals }),
  Schema.annotations({ description: "Dollars, more than 0, at most two decimals" })
)

const PaymentAmount = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n), { message: () => "is not a number" }),
  Schema.greaterThanOrEqualTo(0, { message: () => "must be greater than or equal to 0" }),
  Schema.lessThanOrEqualTo(99_999_999.99, { message: () => "must be less than or equal to 99999999.99" }),
  Schema.filter((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, { message: () => claimMessages.decimals })
)

const claimFields = {
  patient_id: PatientId,
  provider_id: ProviderId,
  appointment_id: AppointmentId,
  cpt_code: CptCode,
  diagnosis_codes: DiagnosisCodes,
  service_date: IsoDate.annotations({ description: "The appointment's day (clinic time zone); not in the future" }),
  amount: Amount
}

const claimExample = {
  patient_id: 12,
  provider_id: 3,
  appointment_id: 345,
  cpt_code: "90837",
  diagnosis_codes: ["F32.9", "F41.1"],
  service_date: "2026-01-05",
  amount: 150
}

export class CreateClaimRequest extends Schema.Class<CreateClaimRequest>("CreateClaimRequest")({
  claim: Schema.Struct({
    ...claimFields,
    modifiers: Schema.optional(BoundedArray(Modifier, maxModifiers).annotations({ description: "CPT modifiers (`95`, `HO`), up to 4" })),
    place_of_service: Schema.optional(PlaceOfService)
  })
}, requestBody({ claim: claimExample }, { claim: { ...claimExample, modifiers: ["95"], place_of_service: "10" } })) {}

export class UpdateClaimRequest extends Schema.Class<UpdateClaimRequest>("UpdateClaimRequest")({
  claim: Schema.Struct({
    patient_id: Schema.optional(PatientId),
    provider_id: Schema.optional(ProviderId),
    appointment_id: Schema.optional(AppointmentId),
    cpt_code: Schema.optional(CptCode),
    diagnosis_codes: Schema.optional(DiagnosisCodes),
    service_date: Schema.optional(IsoDate),
    amount: Schema.optional(Amount),
    modifiers: Schema.optional(BoundedArray(Modifier, maxModifiers)),
    place_of_service: Schema.optional(PlaceOfService),
    status: Schema.optional(ClaimStatus.annotations({ description: "A move of the status machine" })),
    payment_amount: Schema.optional(Schema.NullOr(PaymentAmount)),
    payment_date: Schema.optional(Schema.NullOr(IsoDate)),
    denial_reason: Schema.optional(Schema.NullOr(BoundedString(maxDenialReasonLength)))
  })
}, requestBody(
  { claim: { ...claimExample, diagnosis_codes: ["F33.1"] } },
  { claim: { status: "ready" } },
  { claim: { status: "paid", payment_amount: 120.5, payment_date: "2026-02-20" } }
)) {}

export const ClaimSortColumn = Schema.Literal(
  "id", "claim_number", "service_date", "amount", "status", "cpt_code", "patient_id", "provider_id", "created_at", "updated_at"
)
export type ClaimSortColumn = typeof ClaimSortColumn.Type

const ClaimListQuery = listQuery({
  size: "page_size",
  sortBy: ClaimSortColumn,
  fields: {
    status: Schema.optional(ClaimStatus),
    patient_id: Schema.optional(PatientIdFromText),
    provider_id: Schema.optional(ProviderIdFromText)
  }
})

export class FilterClaimsRequest extends Schema.Class<FilterClaimsRequest>("FilterClaimsRequest")({
  ...listBodyFields({
    size: "page_size",
    search: "Claim number, CPT code, patient or provider name",
    sortBy: ClaimSortColumn,
    filters: Schema.Struct({
      date: dateRange("Service dates, both inclusive"),
      status: Schema.optional(Schema.NullOr(ClaimStatus)),
      appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
      insurance_plan_id: Schema.optional(Schema.NullOr(InsurancePlanId)),
      appointment_id: Schema.optional(Schema.NullOr(AppointmentId)),
      patient_name: nameFilter(),
      provider_name: nameFilter()
    })
  })
}, requestBody({
  sort_by: "service_date",
  sort_dir: "DESC",
  page_size: 25,
  filters: { date: { start_date: "2026-01-01", end_date: "2026-01-31" }, status: "ready", insurance_plan_id: 2, provider_name: "Quinn" }
})) {}

export class ClaimList extends Schema.Class<ClaimList>("ClaimList")({
  claims: Schema.Array(Claim),
  pagination: Pagination
}) {}

export class FilteredClaimList extends Schema.Class<FilteredClaimList>("FilteredClaimList")({
  claims: Schema.Array(Claim),
  pagination: Pagination,
  total_amount: Schema.Number.annotations({ description: "Σ amount over every matching claim, not only this page" })
}) {}

export class ClaimResponse extends Schema.Class<ClaimResponse>("ClaimResponse")({ claim: Claim }) {}

export class PlanName extends Schema.Class<PlanName>("PlanName")({ id: InsurancePlanId, name: Schema.String }) {}

export class ClaimFilters extends Schema.Class<ClaimFilters>("ClaimFilters")({
  statuses: Schema.Array(ClaimStatus),
  cpt_codes: Schema.Array(Schema.String),
  places_of_service: Schema.Array(Schema.String),
  insurance_plans: Schema.Array(PlanName),
  providers: Schema.Array(PersonName)
}) {}

export class GenerateEdiRequest extends Schema.Class<GenerateEdiRequest>("GenerateEdiRequest")({
  claim_ids: BoundedArray(ClaimId, maxClaimsPerBatch).pipe(
    Schema.filter((ids) => ids.length > 0, { message: () => "can't be blank", jsonSchema: { minItems: 1 } })
  ),
  format: Schema.optional(Schema.Literal("837P").annotations({ message: () => "is not included in the list", description: "Only 837P (professional); the default" })),
  batch_name: Schema.optional(BoundedString(maxBatchNameLength))
}, requestBody({ claim_ids: [101, 102, 103], format: "837P", batch_name: "January week 1" })) {}

export class EdiBatch extends Schema.Class<EdiBatch>("EdiBatch")({
  batch_id: Schema.String,
  batch_name: Schema.NullOr(Schema.String).annotations({ description: "The `batch_name` given, trimmed; null when none (or blank) was given" }),
  file_url: Schema.String.annotations({ description: `Signed link to the 837P file, valid ${fileUrlMinutes} minutes` }),
  claim_count: Schema.Int,
  total_amount: Schema.Number,
  generated_at: IsoTimestamp
}) {}

const dataUriDescription = "The file as a base64 data URI: `data:application/pdf;base64,…` or an image (`image/png`, " +
  "`image/jpeg`, `image/gif`, `image/webp`, `image/tiff`); the content must be what the type says"
const DataUri = RequiredString(maxDocumentDataUriLength).annotations({ description: dataUriDescription })

export class CreateClaimDocumentRequest extends Schema.Class<CreateClaimDocumentRequest>("CreateClaimDocumentRequest")({
  document: Schema.Struct({
    name: RequiredString(maxDocumentNameLength),
    kind: Schema.optional(DocumentKind.annotations({ description: "Default `other`" })),
    file: DataUri
  })
}, requestBody({
  document: { name: "superbill-2026-01-05.pdf", kind: "superbill", file: "data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9GCg==" }
})) {}

export class UpdateClaimDocumentRequest extends Schema.Class<UpdateClaimDocumentRequest>("UpdateClaimDocumentRequest")({
  document: Schema.Struct({
    name: Schema.optional(RequiredString(maxDocumentNameLength)),
    kind: Schema.optional(DocumentKind),
    file: Schema.optional(DataUri)
  })
}, requestBody({ document: { name: "EOB January.pdf", kind: "eob" } })) {}

export class ClaimDocumentResponse extends Schema.Class<ClaimDocumentResponse>("ClaimDocumentResponse")({ document: ClaimDocument }) {}
export class ClaimDocumentList extends Schema.Class<ClaimDocumentList>("ClaimDocumentList")({ documents: Schema.Array(ClaimDocument) }) {}

const idPath = Schema.Struct({ id: ClaimIdFromText })
const claimPath = Schema.Struct({ claim_id: ClaimIdFromText })
const documentPath = Schema.Struct({ claim_id: ClaimIdFromText, id: ClaimDocumentIdFromText })

const statusMachine = "Status moves: draft → ready (and back); ready → submitted only through `generate_edi`; submitted → " +
  "pending, denied or rejected; pending → approved, denied or rejected; approved → paid; rejected → ready after a fix. " +
  "paid and denied are final. Other moves are 422 `{\"errors\":{\"status\":[\"can't change from … to …\"]}}`."

/** Admin claims (general §4.6). */
export class ClaimsApi extends HttpApiGroup.make("claims")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/claims")
      .setUrlParams(ClaimListQuery)
      .addSuccess(ClaimList)
      .annotateContext(operationDocs({
        summary: "List claims",
        description: `Claims, newest service date first unless \`sort_by\`/\`sort_dir\` say otherwise, ${claimsPageSize} a page by ` +
          "default; filters by status, patient and provider. Each claim carries its patient's and provider's names.",
        access: Access.admin,
        spec: "general §2.6, §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/admin/clinic/claims/filter_claims")
      .setPayload(FilterClaimsRequest)
      .addSuccess(FilteredClaimList)
      .annotateContext(operationDocs({
        summary: "Filter claims",
        description: "The claim list with the §4.6 filters (service dates, status, the appointment's type, insurance plan, " +
          "appointment, patient and provider name) and `search`; `total_amount` sums every matching claim, not only the page.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("filters", "/admin/clinic/claims/filters")
      .addSuccess(ClaimFilters)
      .annotateContext(operationDocs({
        summary: "Claim filter options",
        description: "The statuses, CPT codes (the spec's and BILLING_CPT_CODES), places of service, insurance plans and active providers.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.post("generateEdi", "/admin/clinic/claims/generate_edi")
      .setPayload(GenerateEdiRequest)
      .addSuccess(EdiBatch, { status: 201 })
      .annotate(BodyLimit, generateEdiBodyBytes)
      .annotateContext(operationDocs({
        summary: "Generate an 837P batch",
        description: "Writes an X12 005010X222A1 interchange of the given `ready` claims, stores it and moves the claims to " +
          "`submitted` with the batch id, all in one transaction. Any claim that is unknown or not ready (or lacks " +
          "what an 837P needs: the patient's coverage, the provider's NPI) is a 422 listing each one under `claim_ids`, " +
          `and nothing changes. \`file_url\` is a signed link valid ${fileUrlMinutes} minutes; ISA13 comes from a ` +
          `database sequence and is never reused. At most ${maxClaimsPerBatch} claims a request.`,
        access: Access.admin,
        spec: "general §2.6, §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/claims")
      .setPayload(CreateClaimRequest)
      .addSuccess(ClaimResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Create a claim",
        description: "A draft claim for a completed appointment of that patient and provider (`appointment_id` \"must " +
          "exist\" / \"is invalid\"); `service_date` is the appointment's day and not in the future; `amount` \"must be " +
          "greater than 0\"; codes \"is invalid\"; one active (not denied) claim per appointment, else `appointment_id` " +
          "\"has already been taken\". `claim_number` is generated (CLM + 8 digits).",
        access: Access.admin,
        spec: "general §2.6, §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/claims/:id")
      .setPath(idPath)
      .addSuccess(ClaimResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a claim",
        description: `One claim; 404 \`${claimMessages.notFound}\` for an unknown id.`,
        access: Access.admin,
        spec: "general §2.6, §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/claims/:id")
      .setPath(idPath)
      .setPayload(UpdateClaimRequest)
      .addSuccess(ClaimResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a claim",
        description: "Changes the given fields with the create rules; only draft, ready and rejected claims can be edited " +
          `(else 422 under \`status\`). ${statusMachine} \`paid\` needs \`payment_amount\` (\`payment_date\` defaults to ` +
          "today), `denied` and `rejected` a `denial_reason`.",
        access: Access.admin,
        spec: "general §2.6, §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/admin/clinic/claims/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete a draft claim",
        description: "Removes a draft claim and its documents; any other status is 422 under `status`.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("listDocuments", "/admin/clinic/claims/:claim_id/documents")
      .setPath(claimPath)
      .addSuccess(ClaimDocumentList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a claim's documents",
        description: `Every document of the claim, oldest first, each with a signed \`url\` valid ${fileUrlMinutes} minutes.`,
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.post("createDocument", "/admin/clinic/claims/:claim_id/documents")
      .setPath(claimPath)
      .setPayload(CreateClaimDocumentRequest)
      .addSuccess(ClaimDocumentResponse, { status: 201 })
      .addError(NotFound.schema)
      .annotateContext(carriesFiles)
      .annotate(DataUriField, ["document", "file"])
      .annotateContext(operationDocs({
        summary: "Attach a document",
        description: "Stores a PDF or image (superbill, EOB, clinical note, other) sent as a base64 data URI; the content " +
          "is checked by its first bytes, not only the declared type (422 under `file`), and its size against " +
          "BILLING_DOCUMENT_MAX_BYTES. Bodies up to MAX_BODY_BYTES are accepted here.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("showDocument", "/admin/clinic/claims/:claim_id/documents/:id")
      .setPath(documentPath)
      .addSuccess(ClaimDocumentResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a claim document",
        description: `One document with a signed \`url\` valid ${fileUrlMinutes} minutes; 404 \`${claimMessages.documentNotFound}\` ` +
          "when it is not this claim's.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.put("updateDocument", "/admin/clinic/claims/:claim_id/documents/:id")
      .setPath(documentPath)
      .setPayload(UpdateClaimDocumentRequest)
      .addSuccess(ClaimDocumentResponse)
      .addError(NotFound.schema)
      .annotateContext(carriesFiles)
      .annotate(DataUriField, ["document", "file"])
      .annotateContext(operationDocs({
        summary: "Update a claim document",
        description: "Renames it, changes its kind, or replaces the file (same checks as the upload).",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteDocument", "/admin/clinic/claims/:claim_id/documents/:id")
      .setPath(documentPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete a claim document",
        description: "Removes the document and its file.",
        access: Access.admin,
        spec: "general §4.6"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Claims",
    description: "Insurance claims for completed appointments, their status machine and documents, and X12 837P batches for the clearinghouse."
  }))
{}
