/** PRTF reports (ECM §2.7, §4.7): generate, list and show; the file itself is a signed link. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { npiPattern } from "../../Domain/Ecm/PrtfReport.js"
import { IsoDate, IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { BoundedString, IdParam, PeriodDate } from "../Schemas.js"
import { EcmAdminAuthentication } from "../Security.js"

export const Npi = Schema.String.pipe(
  Schema.filter((s) => npiPattern.test(s), { message: () => "must be 10 digits", jsonSchema: { pattern: "^[0-9]{10}$", maxLength: 10 } })
)

export class GeneratePrtfRequest extends Schema.Class<GeneratePrtfRequest>("GeneratePrtfRequest")({
  start_date: PeriodDate("First day of the period (UTC), YYYY-MM-DD"),
  end_date: PeriodDate("Last day of the period (UTC, inclusive), YYYY-MM-DD; after start_date"),
  provider_npi: Schema.optional(Schema.NullOr(Npi).annotations({
    description: "Only members of this ECM provider (10 digits); all providers when absent"
  })),
  provider_name: Schema.optional(Schema.NullOr(BoundedString(200)).annotations({
    description: "Report header: the ECM Provider Name column of every row (else each member's eligibility record's)"
  })),
  provider_phone: Schema.optional(Schema.NullOr(BoundedString(50)).annotations({
    description: "Report header: the ECM Provider Phone column of every row (else the provider record's phone)"
  }))
}, requestBody(
  { start_date: "2026-01-01", end_date: "2026-03-31" },
  { start_date: "2026-01-01", end_date: "2026-03-31", provider_npi: "1234567893", provider_name: "Good Care ECM", provider_phone: "5105550100" }
)) {}

const reportFields = {
  id: Schema.Int,
  filename: Schema.String.annotations({ description: "PRTF_<NPI or ALL>_<MMYYYY of end_date>_<MMDDYYYY of generation>.csv" }),
  start_date: IsoDate,
  end_date: IsoDate,
  provider_npi: Schema.NullOr(Schema.String).annotations({ description: "Null when all providers" }),
  provider_name: Schema.String,
  provider_phone: Schema.String,
  patient_count: Schema.Int.annotations({ description: "Rows of the file: members included" })
}
const signed = Schema.String.annotations({ description: "Signed download link of the CSV, valid 30 minutes" })

/** The create response's report: `url` (§4.7). */
export class CreatedPrtfReport extends Schema.Class<CreatedPrtfReport>("CreatedPrtfReport")({
  ...reportFields,
  url: signed,
  created_at: IsoTimestamp,
  created_by_id: Schema.NullOr(Schema.Int)
}) {}

export class GeneratePrtfResponse extends Schema.Class<GeneratePrtfResponse>("GeneratePrtfResponse")({
  message: Schema.String,
  prtf_report: CreatedPrtfReport
}) {}

/** A report in the list: `file_url` (§4.7). */
export class PrtfReport extends Schema.Class<PrtfReport>("PrtfReport")({
  ...reportFields,
  file_url: signed,
  created_at: IsoTimestamp,
  created_by_id: Schema.NullOr(Schema.Int)
}) {}

export class PrtfReportDetail extends PrtfReport.extend<PrtfReportDetail>("PrtfReportDetail")({
  created_by_name: Schema.NullOr(Schema.String).annotations({ description: "Null once the author's account is gone" })
}) {}

export class PrtfReportList extends Schema.Class<PrtfReportList>("PrtfReportList")({
  prtf_reports: Schema.Array(PrtfReport),
  pagination: Pagination
}) {}

export class PrtfReportResponse extends Schema.Class<PrtfReportResponse>("PrtfReportResponse")({ prtf_report: PrtfReportDetail }) {}

const spec = "ECM §4.7"

export class EcmPrtfReportsApi extends HttpApiGroup.make("ecmPrtfReports")
  .add(
    HttpApiEndpoint.post("generate", "/admin/clinic/ecm/prtf_reports")
      .setPayload(GeneratePrtfRequest)
      .addSuccess(GeneratePrtfResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Generate a PRTF report",
        description: "Writes the provider reporting template file (CSV, 51 columns, one row per member; " +
          "docs/prtf.md gives every column's source) for the period and answers its signed `url` (30 minutes). " +
          "Included: ECM members whose benefit authorization overlaps the period, with at least one engagement " +
          "status entry inside it, and — with `provider_npi` — whose eligibility record or case-load provider has " +
          "that NPI. Their events inside the period are counted with the rule of the events counts endpoint. " +
          "422 when a date is missing or not YYYY-MM-DD, when `end_date` is not after `start_date`, or when " +
          "`provider_npi` is not 10 digits.",
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/ecm/prtf_reports")
      .setUrlParams(listQuery({ size: "per_page" }))
      .addSuccess(PrtfReportList)
      .annotateContext(operationDocs({
        summary: "List PRTF reports",
        description: `Newest first, 25 a page by default (at most ${maxPageSize}); each \`file_url\` is signed for 30 minutes.`,
        access: Access.admin,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/prtf_reports/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .addSuccess(PrtfReportResponse)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a PRTF report",
        description: "The report with a fresh `file_url` (30 minutes) and its author's name. Unknown id: 404 " +
          "`PRTF report not found`.",
        access: Access.admin,
        spec
      }))
  )
  .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "Admin · ECM · PRTF reports",
    description: "Provider reporting template files for the health plan: per member, eligibility, engagement status " +
      "over time and outreach and encounter counts for a period."
  }))
{}
