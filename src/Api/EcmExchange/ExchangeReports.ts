/**
 * The state's return files (docs/ecm-exchange.md): Return Transmission File and Outreach Tracker
 * File reports per health plan and period, generated through the job queue.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { IdParam, PeriodDate } from "../Schemas.js"
import { EcmAdminAuthentication } from "../Security.js"
import { DateFormat, Delimiter, FileFormat } from "./ExchangeProfiles.js"

const spec = "ECM §2.6, §2.7, §4.6, §4.7 (beyond the spec: docs/ecm-exchange.md)"

export class CreateExchangeReportRequest extends Schema.Class<CreateExchangeReportRequest>("CreateExchangeReportRequest")({
  health_plan_id: Schema.Int.annotations({ description: "The plan whose members the file covers" }),
  start_date: PeriodDate("First day of the period (UTC), YYYY-MM-DD"),
  end_date: PeriodDate("Last day of the period (UTC, inclusive), YYYY-MM-DD; not before start_date, at most 366 days on")
}, requestBody({ health_plan_id: 1, start_date: "2026-01-01", end_date: "2026-03-31" })) {}

export const ReportStatus = Schema.Literal("queued", "generating", "completed", "failed")

export class ExchangeReport extends Schema.Class<ExchangeReport>("ExchangeReport")({
  id: Schema.Int,
  health_plan_id: Schema.Int,
  health_plan_name: Schema.String,
  start_date: IsoDate,
  end_date: IsoDate,
  status: ReportStatus,
  progress_percentage: Schema.Int.annotations({ description: "Rows written of the file's rows, 0–100" }),
  row_count: Schema.NullOr(Schema.Int).annotations({ description: "Rows of the file; null until counted" }),
  filename: Schema.NullOr(Schema.String).annotations({ description: "Null until completed" }),
  file_url: Schema.NullOr(Schema.String).annotations({ description: "Signed download link, valid 30 minutes; null until completed" }),
  failure_reason: Schema.NullOr(Schema.String),
  profile: Schema.Struct({
    id: Schema.NullOr(Schema.Int).annotations({ description: "Null: the DHCS standard" }),
    columns: Schema.Array(Schema.Struct({ source: Schema.String, header: Schema.String })),
    date_format: DateFormat,
    delimiter: Delimiter,
    file_format: FileFormat,
    file_name_pattern: Schema.String
  }).annotations({ description: "The profile as it was when the report was asked for: the file is written with it" }),
  created_at: IsoTimestamp,
  created_by_id: Schema.NullOr(Schema.Int),
  generated_at: Schema.NullOr(IsoTimestamp)
}) {}

export class ExchangeReportList extends Schema.Class<ExchangeReportList>("ExchangeReportList")({
  reports: Schema.Array(ExchangeReport),
  pagination: Pagination
}) {}

export class ExchangeReportResponse extends Schema.Class<ExchangeReportResponse>("ExchangeReportResponse")({ report: ExchangeReport }) {}

const idPath = Schema.Struct({ id: IdParam })

const groupOf = <const Name extends string, const Path extends string>(name: Name, path: Path, title: string, what: string) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.post("create", `/admin/clinic/ecm/${path}`)
        .setPayload(CreateExchangeReportRequest)
        .addSuccess(ExchangeReportResponse, { status: 202 })
        .annotateContext(operationDocs({
          summary: `Generate a ${title}`,
          description: `Queues the ${title} of the plan for the period: ${what} It is written with the plan's exchange ` +
            "profile for the file (the DHCS standard without one) as the profile is now; the job's progress shows in " +
            "`progress_percentage` and, once `completed`, the file's signed `file_url`. 422 when a date is missing or " +
            "not YYYY-MM-DD, when `end_date` is before `start_date` or more than 366 days after it, or when the plan does " +
            "not exist.",
          access: Access.admin,
          spec
        }))
    )
    .add(
      HttpApiEndpoint.get("list", `/admin/clinic/ecm/${path}`)
        .setUrlParams(listQuery({ size: "per_page" }))
        .addSuccess(ExchangeReportList)
        .annotateContext(operationDocs({
          summary: `List ${title}s`,
          description: `Newest first, 25 a page by default (at most ${maxPageSize}); each completed report's \`file_url\` is ` +
            "signed for 30 minutes.",
          access: Access.admin,
          spec
        }))
    )
    .add(
      HttpApiEndpoint.get("show", `/admin/clinic/ecm/${path}/:id`)
        .setPath(idPath)
        .addSuccess(ExchangeReportResponse)
        .addError(EcmNotFound.schema)
        .annotateContext(operationDocs({
          summary: `Show a ${title}`,
          description: "The report, its progress and, once completed, a fresh `file_url` (30 minutes). Unknown id: 404 " +
            "`Report not found`.",
          access: Access.admin,
          spec
        }))
    )
    .middleware(EcmAdminAuthentication).pipe(withEcmGroupErrors)
    .annotateContext(groupDocs({
      tag: `Admin · ECM · ${title}s`,
      description: `DHCS ${title}s per health plan and period, generated by the job worker.`
    }))

export class EcmRtfReportsApi extends groupOf(
  "ecmRtfReports",
  "rtf_reports",
  "Return Transmission File",
  "one row per member of the plan whose ECM benefit authorization overlaps the period, 38 columns."
) {}

export class EcmOtfReportsApi extends groupOf(
  "ecmOtfReports",
  "otf_reports",
  "Outreach Tracker File",
  "one row per outreach attempt of the period on a member of the plan (the attempts the PRTF counts), 12 columns."
) {}
