/**
 * Admin report files (general §4.13): requests are validated, recorded as `queued` with an
 * unguessable public id and handed to the job queue in one transaction; status and download read
 * the row. Expired reports (and unknown ids) are 404 `Report not found`.
 */
import { Effect, Option } from "effect"
import { conflict, type FieldMessages, invalid, notFound } from "../../Api/Errors.js"
import {
  type AppointmentsReportRequest, type FollowUpReportRequest, maxReportDays, reportMessages
} from "../../Api/Reports/Reports.js"
import {
  AppointmentsReportQueued, estimateFinish, FollowUpReportQueued, progressOf, ReportState, type ReportFormat,
  ReportSummary, type ReportType
} from "../../Domain/Reports/Report.js"
import { daysBetween } from "../../Domain/Time.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { newToken } from "../Tokens.js"
import { reportJobKey } from "./ReportGenerator.js"
import { ReportRowsRepo } from "./ReportRowsRepo.js"
import { type ReportParams, ReportsRepo } from "./ReportsRepo.js"
import { generateReportTask, reportMaxAttempts } from "./ReportTasks.js"

/**
 * Rows a second each format writes (bench/reports.ts, rounded down on a loaded machine), and a
 * start-up allowance: the estimate given before a report starts.
 */
const rowsPerSecond: Record<ReportFormat, number> = { csv: 80_000, json: 70_000, excel: 60_000, pdf: 20_000 }
const startAllowanceMs = 5_000

/** Validated request parameters with their defaults (csv, no patient status, no rates, no grouping) and `extra`. */
const paramsOf = (
  request: { readonly start_date: string; readonly end_date: string; readonly format?: ReportFormat | null | undefined },
  ids: ReadonlyArray<number>,
  extra: Partial<ReportParams>
): ReportParams => ({
  start_date: request.start_date,
  end_date: request.end_date,
  provider_ids: ids.length === 0 ? null : ids,
  patient_status: null,
  include_rates: false,
  group_by: null,
  format: request.format ?? "csv",
  ...extra
})

export class Reports extends Effect.Service<Reports>()("app/Reports", {
  dependencies: [ReportsRepo.Default, ReportRowsRepo.Default],
  effect: Effect.gen(function*() {
    const reports = yield* ReportsRepo
    const reportRows = yield* ReportRowsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const jobs = yield* Jobs
    const store = yield* ObjectStore
    const config = yield* AppConfig
    const zone = config.clinicTimeZone

    /** Dates ordered and not too far apart, and every provider named exists (422 otherwise). */
    const check = (params: { start_date: string; end_date: string; provider_ids?: ReadonlyArray<number> | null | undefined }) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        if (params.end_date < params.start_date) errors.end_date = [reportMessages.afterStart]
        else if (daysBetween(params.start_date, params.end_date) + 1 > maxReportDays) errors.end_date = [reportMessages.rangeTooLong(maxReportDays)]
        const ids = [...new Set(params.provider_ids ?? [])]
        if (ids.length > 0) {
          const found = yield* reportRows.existingProviderIds(ids)
          if (found.length !== ids.length) errors.provider_ids = [reportMessages.mustExist]
        }
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
        return ids
      })

    /** Records the report and its job together; its row id, public id and first estimate. */
    const enqueue = (actorId: number, type: ReportType, params: ReportParams, expectedRows: number) =>
      Effect.gen(function*() {
        const at = yield* now
        const reportId = newToken()
        const estimate = new Date(at.getTime() + startAllowanceMs + Math.ceil((expectedRows / rowsPerSecond[params.format]) * 1000))
        const id = yield* transaction(Effect.gen(function*() {
          const id = yield* reports.insert({ reportId, type, params, requestedById: actorId, estimatedCompletion: estimate }, at)
          yield* jobs.enqueue(generateReportTask, { report: id }, { maxAttempts: reportMaxAttempts, jobKey: reportJobKey(id) })
          yield* audit.record({ actorId, action: "report.generate", targetType: "report", targetId: id })
          return id
        })).pipe(Effect.orDie)
        yield* Effect.annotateCurrentSpan({ "report.id": id })
        return { reportId, estimate }
      })

    const followUpSchedules = Effect.fn("Reports.followUpSchedules")(function*(actorId: number, request: FollowUpReportRequest["report_params"]) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const ids = yield* check(request)
      const params = paramsOf(request, ids, { patient_status: request.patient_status ?? null })
      const { estimate, reportId } = yield* enqueue(actorId, "patient_follow_up", params, 0)
      return FollowUpReportQueued.make({ report_id: reportId, status: "queued", estimated_completion: estimate, download_url: null })
    })

    const appointmentsWithRates = Effect.fn("Reports.appointmentsWithRates")(function*(actorId: number, request: AppointmentsReportRequest["report_params"]) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const ids = yield* check(request)
      const params = paramsOf(request, ids, { include_rates: request.include_rates ?? true, group_by: request.group_by ?? null })
      const summary = yield* reportRows.appointmentsSummary(zone, params)
      const { reportId } = yield* enqueue(actorId, "provider_appointments", params, summary.total_appointments)
      return AppointmentsReportQueued.make({
        report_id: reportId,
        status: "queued",
        generated_at: null,
        download_url: null,
        summary: ReportSummary.make(summary)
      })
    })

    /** The report unless unknown or expired (its file gone, or past its expiry and about to be). */
    const find = (reportId: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const found = yield* reports.findByReportId(reportId)
        const row = Option.getOrUndefined(found)
        if (row === undefined || row.status === "expired" || (row.expires_at !== null && row.expires_at.getTime() <= at.getTime())) {
          return yield* Effect.fail(notFound("Report"))
        }
        return { row, at }
      })

    const downloadUrl = (reportId: string) => `${config.publicBaseUrl}/v1/admin/clinic/reports/${encodeURIComponent(reportId)}/download`

    const status = Effect.fn("Reports.status")(function*(reportId: string) {
      const { at, row } = yield* find(reportId)
      const running = row.status === "generating" && row.started_at !== null && row.rows_total !== null
        ? Option.fromNullable(estimateFinish(row.started_at.getTime(), at.getTime(), row.rows_written, row.rows_total))
        : Option.none()
      const estimated = row.status === "completed"
        ? row.generated_at
        : row.status === "failed"
        ? null
        : Option.match(running, { onNone: () => row.estimated_completion, onSome: (ms) => new Date(ms) })
      yield* Effect.annotateCurrentSpan({ "report.id": row.id })
      return ReportState.make({
        report_id: row.report_id,
        status: row.status,
        progress_percentage: progressOf(row.status, row.rows_written, row.rows_total),
        generated_at: row.generated_at,
        estimated_completion: estimated,
        download_url: row.status === "completed" ? downloadUrl(row.report_id) : null,
        expires_at: row.expires_at,
        failure_reason: row.status === "failed" ? row.failure_reason : null
      })
    })

    /** A signed link to the file, for at most REPORT_LINK_MINUTES and never past the expiry; audited. */
    const download = Effect.fn("Reports.download")(function*(actorId: number, reportId: string) {
      yield* Effect.annotateCurrentSpan({ "actor.id": actorId })
      const { at, row } = yield* find(reportId)
      if (row.status === "failed") return yield* Effect.fail(conflict(reportMessages.failed))
      if (row.status !== "completed" || row.object_key === null || row.expires_at === null) {
        return yield* Effect.fail(conflict(reportMessages.notReady))
      }
      const lifetimeMs = Math.min(config.reports.linkMinutes * 60_000, row.expires_at.getTime() - at.getTime())
      yield* audit.record({ actorId, action: "report.download", targetType: "report", targetId: row.id })
      yield* Effect.annotateCurrentSpan({ "report.id": row.id })
      return yield* store.signedUrl(row.object_key, lifetimeMs)
    })

    return { followUpSchedules, appointmentsWithRates, status, download } as const
  })
}) {}
