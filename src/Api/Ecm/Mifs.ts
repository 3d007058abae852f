import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { MifFileType, MifSourceType, MifStatus } from "../../Domain/Ecm/Mif.js"
import { IsoDate, IsoTimestamp } from "../../Domain/Time.js"
import { carriesFiles, DataUriField } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { BoundedString, IdParam } from "../Schemas.js"

/**
 * Longest `mif.file`: a data URI of a file at the largest MAX_BODY_BYTES deployments use (the body
 * limit and MIF_MAX_FILE_BYTES refuse smaller files first).
 */
export const maxDataUriLength = 200 * 1024 * 1024
/** Longest `mif.url` (what browsers and servers commonly accept). */
export const maxUrlLength = 2048
/** Longest `mif.path` (Linux PATH_MAX). */
export const maxPathLength = 4096
import { EcmAdminAuthentication } from "../Security.js"

export class MifImportRequest extends Schema.Class<MifImportRequest>("MifImportRequest")({
  mif: Schema.Struct({
    file: Schema.optional(BoundedString(maxDataUriLength).annotations({
      description: "The file as a base64 data URI: `data:text/csv;base64,…`, `data:text/xml;base64,…` or " +
        "`data:application/vnd.openxmlformats-officedocument.spreadsheetml.sheet;base64,…`"
    })),
    url: Schema.optional(BoundedString(maxUrlLength).annotations({
      description: "An http(s) address to fetch the file from; it must resolve to a public address (redirects included)"
    })),
    path: Schema.optional(BoundedString(maxPathLength).annotations({
      description: "A file inside the server's MIF_IMPORT_DIR (relative to it, or absolute inside it)"
    })),
    file_type: Schema.optional(MifFileType.annotations({
      description: "Detected from the data URI, the extension or the content when absent"
    })),
    health_plan_id: Schema.optional(Schema.NullOr(Schema.Int).annotations({
      description: "The health plan that sent the file (an unknown plan is 422); when absent, the plan that lists " +
        "the records' ECM provider NPIs, if exactly one plan does"
    }))
  }).annotations({ description: "Exactly one of file, url and path" })
}, requestBody(
  { mif: { file: "data:text/csv;base64,TUVNQkVSX0lELEZJUlNUX05BTUUsTEFTVF9OQU1FLERPQgpBMSxBbmEsTG9wZXosMDItMDMtMTk5MAo=" } },
  { mif: { url: "https://plan.example.org/mif/2026-03.xlsx" } },
  { mif: { path: "plans/2026-03.csv", file_type: "csv" } }
)) {}

export class MifImportResponse extends Schema.Class<MifImportResponse>("MifImportResponse")({
  message: Schema.String,
  imported_count: Schema.Int,
  mif_file_id: Schema.Int
}) {}

/** A MIF file (ECM §2.6). */
export class MifFile extends Schema.Class<MifFile>("MifFile")({
  id: Schema.Int,
  filename: Schema.String,
  file_type: MifFileType,
  source_type: MifSourceType,
  records_imported: Schema.Int,
  import_errors: Schema.NullOr(Schema.String),
  status: MifStatus,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  file_url: Schema.NullOr(Schema.String).annotations({ description: "Signed download link, valid 30 minutes" })
}) {}

/** One imported member record, as the MIF detail lists it (ECM §2.6). */
export class EligibilityRecord extends Schema.Class<EligibilityRecord>("EligibilityRecord")({
  id: Schema.Int,
  patient_id: Schema.Int,
  patient_name: Schema.String,
  member_id: Schema.NullOr(Schema.String),
  cin: Schema.NullOr(Schema.String),
  first_name: Schema.String,
  last_name: Schema.String,
  dob: IsoDate,
  ecm_service_auth_id: Schema.NullOr(Schema.String),
  ecm_provider_name: Schema.NullOr(Schema.String),
  member_record_status: Schema.String,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class MifFileDetail extends MifFile.extend<MifFileDetail>("MifFileDetail")({
  eligibility_informations: Schema.Array(EligibilityRecord)
}) {}

export class MifFileList extends Schema.Class<MifFileList>("MifFileList")({
  mif_files: Schema.Array(MifFile),
  pagination: Pagination
}) {}

/** Most eligibility records one detail response carries. */
export const maxEligibilityPerPage = 1000

export class MifFileResponse extends Schema.Class<MifFileResponse>("MifFileResponse")({
  mif_file: MifFileDetail,
  pagination: Pagination.annotations({ description: "Pages of eligibility_informations (by line)" })
}) {}

export const MifDetailQuery = listQuery({
  size: "per_page",
  sizeDescription: `Eligibility records per page (default and most: ${maxEligibilityPerPage})`
})

const idPath = Schema.Struct({ id: IdParam })

/** MIF imports (ECM §4.6). */
export class EcmMifsApi extends HttpApiGroup.make("ecmMifs")
  .add(
    HttpApiEndpoint.post("import", "/admin/clinic/ecm/mifs")
      .setPayload(MifImportRequest)
      .addSuccess(MifImportResponse)
      .annotateContext(carriesFiles)
      .annotate(DataUriField, ["mif", "file"])
      .annotateContext(operationDocs({
        summary: "Import a member information file",
        description: "Creates or updates ECM patients and their eligibility records from a CSV, XML or XLSX file, sent " +
          "as a base64 data URI (`file`), fetched from a public `url` (http/https; private, loopback, link-local and " +
          "metadata addresses are refused, redirects included), or read from the server's import directory " +
          "(`path`, inside `MIF_IMPORT_DIR`). Records match patients on MEMBER_ID, then on first name + last name + " +
          "date of birth; a record that matches several patients fails. All records are imported in one " +
          "transaction: any malformed file or invalid record is a 422 listing the problems by line, nothing is " +
          "imported, and the MIF file is kept with status `failed` and its `import_errors`. Bodies up to " +
          "MAX_BODY_BYTES are accepted here.",
        access: Access.admin,
        spec: "ECM §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/mifs")
      .setUrlParams(listQuery({ size: "per_page" }))
      .addSuccess(MifFileList)
      .annotateContext(operationDocs({
        summary: "List MIF files",
        description: `Newest first, 25 a page by default (at most ${maxPageSize}); failed imports included, with ` +
          "their `import_errors`. Each `file_url` is a download link signed for 30 minutes.",
        access: Access.admin,
        spec: "ECM §4.6"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/mifs/:id")
      .setPath(idPath)
      .setUrlParams(MifDetailQuery)
      .addSuccess(MifFileResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a MIF file",
        description: "The file with its eligibility records in file order, " +
          `${maxEligibilityPerPage} a page (\`page\`, \`per_page\`; \`pagination\` counts the records).`,
        access: Access.admin,
        spec: "ECM §4.6"
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · MIF",
    description: "Member information files from health plans: the import that creates and updates ECM patients, and " +
      "the record of every import attempt."
  }))
{}
