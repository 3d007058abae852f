/** Exchange profiles (docs/ecm-exchange.md "Profiles"): a plan's variant of the RTF or the OTF. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { dateFormats, delimiters, fileFormats, fileKinds, fileNamePlaceholders } from "../../Domain/EcmExchange/Files.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { BoundedArray, IdParam, RequiredString } from "../Schemas.js"
import { EcmAdminAuthentication } from "../Security.js"

const spec = "ECM §2.6, §2.7, §4.6, §4.7 (beyond the spec: docs/ecm-exchange.md)"

export const FileKind = Schema.Literal(...fileKinds).annotations({ description: "`rtf` (Return Transmission File) or `otf` (Outreach Tracker File)" })
export const DateFormat = Schema.Literal(...dateFormats)
export const Delimiter = Schema.Literal(...delimiters)
export const FileFormat = Schema.Literal(...fileFormats)

/** The most columns a profile lists (the RTF has 38). */
export const maxProfileColumns = 60

export const ProfileColumn = Schema.Struct({
  source: RequiredString(60).annotations({ description: "A source column of the file (docs/ecm-exchange.md lists them)" }),
  header: RequiredString(200).annotations({ description: "The header the plan wants for it" })
})

const FileNamePattern = RequiredString(200).annotations({
  description: `The file name without extension; placeholders: ${fileNamePlaceholders.join(", ")}. Characters other ` +
    "than letters, digits, `.`, `_` and `-` become `_`."
})

const optionalFields = {
  columns: Schema.optional(BoundedArray(ProfileColumn, maxProfileColumns).annotations({
    description: "The file's columns in order, each a known source under a header (any subset: omitted sources are " +
      "not written); the DHCS standard's when absent at creation"
  })),
  date_format: Schema.optional(DateFormat.annotations({ description: "Dates in the file; default YYYY-MM-DD" })),
  delimiter: Schema.optional(Delimiter.annotations({ description: "CSV delimiter: comma (default), pipe or tab" })),
  file_format: Schema.optional(FileFormat.annotations({ description: "csv (default) or xlsx" })),
  file_name_pattern: Schema.optional(FileNamePattern)
}

export class CreateExchangeProfileRequest extends Schema.Class<CreateExchangeProfileRequest>("CreateExchangeProfileRequest")({
  health_plan_id: Schema.Int.annotations({ description: "The plan (one profile per plan and file)" }),
  file_kind: FileKind,
  ...optionalFields
}, requestBody(
  { health_plan_id: 1, file_kind: "rtf", date_format: "MM/DD/YYYY", delimiter: "pipe" },
  {
    health_plan_id: 1, file_kind: "otf", file_format: "xlsx", file_name_pattern: "OTF_{mcp_id}_{period_end:YYYYMM}",
    columns: [{ source: "cin", header: "CIN" }, { source: "outreach_date", header: "Attempt Date" }]
  }
)) {}

export class UpdateExchangeProfileRequest extends Schema.Class<UpdateExchangeProfileRequest>("UpdateExchangeProfileRequest")(
  optionalFields,
  requestBody({ date_format: "YYYYMMDD" }, { columns: [{ source: "cin", header: "Member CIN" }] })
) {}

export class ExchangeProfile extends Schema.Class<ExchangeProfile>("ExchangeProfile")({
  id: Schema.Int,
  health_plan_id: Schema.Int,
  file_kind: FileKind,
  columns: Schema.Array(Schema.Struct({ source: Schema.String, header: Schema.String })),
  date_format: DateFormat,
  delimiter: Delimiter,
  file_format: FileFormat,
  file_name_pattern: Schema.String,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class ExchangeProfileResponse extends Schema.Class<ExchangeProfileResponse>("ExchangeProfileResponse")({
  exchange_profile: ExchangeProfile
}) {}

export class ExchangeProfileList extends Schema.Class<ExchangeProfileList>("ExchangeProfileList")({
  exchange_profiles: Schema.Array(ExchangeProfile),
  pagination: Pagination
}) {}

const idPath = Schema.Struct({ id: IdParam })
const validation = "Every source must be a column of the file, once; headers and the pattern not blank; the pattern's " +
  "placeholders known. Problems are 422 with one message each."

export class EcmExchangeProfilesApi extends HttpApiGroup.make("ecmExchangeProfiles")
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/ecm/exchange_profiles")
      .setPayload(CreateExchangeProfileRequest)
      .addSuccess(ExchangeProfileResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Create an exchange profile",
        description: "A plan's variant of one file: which columns under which headers in which order, the date format, " +
          "delimiter, file format and file name. Absent fields take the DHCS standard's. " + validation + " A plan " +
          "with a profile for the file already, or an unknown plan: 422.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/exchange_profiles")
      .setUrlParams(listQuery({ size: "per_page" }))
      .addSuccess(ExchangeProfileList)
      .annotateContext(operationDocs({
        summary: "List exchange profiles",
        description: `By plan and file, 25 a page by default (at most ${maxPageSize}).`,
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/exchange_profiles/:id")
      .setPath(idPath)
      .addSuccess(ExchangeProfileResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an exchange profile",
        description: "The profile. Unknown id: 404 `Exchange profile not found`.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/ecm/exchange_profiles/:id")
      .setPath(idPath)
      .setPayload(UpdateExchangeProfileRequest)
      .addSuccess(ExchangeProfileResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update an exchange profile",
        description: "Changes the fields given (`columns` replaces the list). Files already generated keep the " +
          "profile they were made with. " + validation + " Unknown id: 404 `Exchange profile not found`.",
        access: Access.admin,
        spec
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · Exchange profiles",
    description: "Each plan's variant of the Return Transmission and Outreach Tracker files; without one, a plan gets " +
      "the DHCS standard."
  }))
{}
