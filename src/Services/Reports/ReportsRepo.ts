/**
 * The only SQL on `reports` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects, state
 * timestamps from the one clock (../Time.ts). Every state change is a compare-and-swap on the
 * status it expects, so a run that was taken over changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { GroupBy, PatientStatus, ReportFormat, ReportStatus } from "../../Domain/Reports/Report.js"
import { jobCanNoLongerRun, staleCutoff } from "../HeartbeatsRepo.js"
import { failStale, orDefect, SqlSchema } from "../Repository.js"

/** A report's validated parameters, as stored in `reports.parameters`. */
export const ReportParams = Schema.Struct({
  start_date: Schema.String,
  end_date: Schema.String,
  provider_ids: Schema.NullOr(Schema.Array(Schema.Number)),
  patient_status: Schema.NullOr(PatientStatus),
  include_rates: Schema.Boolean,
  group_by: Schema.NullOr(GroupBy),
  format: ReportFormat
})
export type ReportParams = typeof ReportParams.Type

export const ReportType = Schema.Literal("patient_follow_up", "provider_appointments")

/** What status and download read. */
export const ReportRow = Schema.Struct({
  id: Schema.Int,
  report_id: Schema.String,
  status: ReportStatus,
  failure_reason: Schema.NullOr(Schema.String),
  rows_total: Schema.NullOr(Schema.Int),
  rows_written: Schema.Int,
  object_key: Schema.NullOr(Schema.String),
  estimated_completion: Schema.NullOr(Schema.DateFromSelf),
  started_at: Schema.NullOr(Schema.DateFromSelf),
  generated_at: Schema.NullOr(Schema.DateFromSelf),
  expires_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ReportRow = typeof ReportRow.Type

/** A report claimed for generation. */
export const ClaimedRow = Schema.Struct({
  id: Schema.Int,
  report_type: ReportType,
  format: ReportFormat,
  parameters: ReportParams
})
export type ClaimedRow = typeof ClaimedRow.Type

export const NewReport = Schema.Struct({
  reportId: Schema.String,
  type: ReportType,
  params: ReportParams,
  requestedById: Schema.Number,
  estimatedCompletion: Schema.DateFromSelf
})

export const Completion = Schema.Struct({
  id: Schema.Number,
  written: Schema.Number,
  objectKey: Schema.String,
  byteSize: Schema.Number,
  at: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
})

const Id = Schema.Struct({ id: Schema.Int })

/**
 * Fails `generating` reports not moved for `staleAfterSeconds` whose job (key `jobKeyPrefix` and
 * the row id) can no longer run (`jobCanNoLongerRun`), with `reason`; how many. Run by the recovery
 * sweep (../Recovery.ts), which has no services. `table`: the reports' table (the return files
 * keep theirs in `exchange_reports`, with the same status columns).
 */
export const failStrandedReports = (
  staleAfterSeconds: number,
  jobKeyPrefix: string,
  reason: string,
  table: "reports" | "exchange_reports" = "reports"
) =>
  failStale((sql) => ({
    table,
    set: sql`status = 'failed', failure_reason = ${reason}`,
    where: sql`r.status = 'generating' AND r.updated_at < ${staleCutoff(sql, staleAfterSeconds)}
      AND ${jobCanNoLongerRun(sql, jobKeyPrefix)}`
  }))

export class ReportsRepo extends Effect.Service<ReportsRepo>()("app/ReportsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ report: NewReport, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, report }) =>
        sql`INSERT INTO reports
            (report_id, report_type, format, parameters, requested_by_id, estimated_completion, created_at, updated_at)
          VALUES (${report.reportId}, ${report.type}, ${report.params.format}, ${JSON.stringify(report.params)}::jsonb,
            ${report.requestedById}, ${report.estimatedCompletion}, ${at}, ${at})
          RETURNING id`
    })

    const findByReportId = SqlSchema.findOne({
      Request: Schema.String,
      Result: ReportRow,
      execute: (reportId) =>
        sql`SELECT id, report_id, status, failure_reason, rows_total, rows_written, object_key,
            estimated_completion, started_at, generated_at, expires_at
          FROM reports WHERE report_id = ${reportId}`
    })

    const claimOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      Result: ClaimedRow,
      execute: ({ at, id }) =>
        sql`UPDATE reports SET status = 'generating', started_at = ${at}, rows_written = 0, rows_total = NULL, updated_at = ${at}
          WHERE id = ${id} AND status IN ('queued', 'generating')
          RETURNING id, report_type, format, parameters`
    })

    const failOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, reason: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ at, id, reason }) =>
        sql`UPDATE reports SET status = 'failed', failure_reason = ${reason}, updated_at = ${at}
          WHERE id = ${id} AND status = 'generating'`
    })

    const progressOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, written: Schema.Number, at: Schema.DateFromSelf }),
      execute: ({ at, id, written }) =>
        sql`UPDATE reports SET rows_written = ${written}, updated_at = ${at} WHERE id = ${id} AND status = 'generating'`
    })

    const totalOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, total: Schema.Number }),
      execute: ({ id, total }) => sql`UPDATE reports SET rows_total = ${total} WHERE id = ${id}`
    })

    const completeOne = SqlSchema.findOne({
      Request: Completion,
      Result: Id,
      execute: (c) =>
        sql`UPDATE reports SET status = 'completed', rows_written = ${c.written},
            object_key = ${c.objectKey}, byte_size = ${c.byteSize}, generated_at = ${c.at}, expires_at = ${c.expiresAt}, updated_at = ${c.at}
          WHERE id = ${c.id} AND status = 'generating' RETURNING id`
    })

    const findExpired = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ id: Schema.Int, object_key: Schema.String }),
      execute: (at) =>
        sql`SELECT id, object_key FROM reports
          WHERE status = 'completed' AND expires_at <= ${at} ORDER BY expires_at LIMIT 10000`
    })

    const expireOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      execute: ({ at, id }) => sql`UPDATE reports SET status = 'expired', updated_at = ${at} WHERE id = ${id} AND status = 'completed'`
    })

    return {
      /** Records a queued report, created and updated `at`; its row id. */
      insert: (report: typeof NewReport.Type, at: Date) => Effect.map(orDefect(insertOne({ report, at })), (row) => row.id),
      /** The report with public id `reportId`, whatever its state. */
      findByReportId: (reportId: string) => orDefect(findByReportId(reportId)),
      /** Marks report `id` generating from `at` unless no longer queued or generating; the claimed row. */
      claim: (id: number, at: Date) => orDefect(claimOne({ id, at })),
      /** Fails a generating report with `reason`. */
      markFailed: (id: number, reason: string, at: Date) => orDefect(failOne({ id, reason, at })),
      /** Records the rows written so far of a generating report. */
      recordProgress: (id: number, written: number, at: Date) => orDefect(progressOne({ id, written, at })),
      /** Records the rows a report will have. */
      recordTotal: (id: number, total: number) => orDefect(totalOne({ id, total })),
      /** Completes a generating report; false when it was no longer generating (taken over). */
      complete: (completion: typeof Completion.Type) => Effect.map(orDefect(completeOne(completion)), Option.isSome),
      /** Completed reports past their expiry at `at` (at most 10,000, earliest first). */
      findExpired: (at: Date) => orDefect(findExpired(at)),
      /** Marks a completed report expired. */
      markExpired: (id: number, at: Date) => orDefect(expireOne({ id, at }))
    } as const
  })
}) {}
