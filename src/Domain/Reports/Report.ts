/** Admin reports (general §2.12, §4.13): states, formats, the weekly metrics and report representations. */
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../Time.js"

export const reportStatuses = ["queued", "generating", "completed", "failed", "expired"] as const
export const ReportStatus = Schema.Literal(...reportStatuses)
export type ReportStatus = typeof ReportStatus.Type

export const reportFormats = ["pdf", "excel", "csv", "json"] as const
export const ReportFormat = Schema.Literal(...reportFormats).annotations({ message: () => "is not included in the list" })
export type ReportFormat = typeof ReportFormat.Type

/** The two report kinds generated as files (of the spec's list, the ones §4.13 has endpoints for). */
export type ReportType = "patient_follow_up" | "provider_appointments"

export const groupings = ["provider", "week", "appointment_type"] as const
export const GroupBy = Schema.Literal(...groupings).annotations({ message: () => "is not included in the list" })
export type GroupBy = typeof GroupBy.Type

export const PatientStatus = Schema.Literal("active", "inactive").annotations({ message: () => "is not included in the list" })
export type PatientStatus = typeof PatientStatus.Type


/** Files are kept, and links to them work, this long after generation (general §4.13: 30 days). */
export const reportLifetimeDays = 30

export const fileExtensions: Record<ReportFormat, string> = { pdf: "pdf", excel: "xlsx", csv: "csv", json: "json" }
export const contentTypes: Record<ReportFormat, string> = {
  pdf: "application/pdf",
  excel: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  csv: "text/csv; charset=utf-8",
  json: "application/json"
}

/**
 * Honest progress: rows written ÷ rows counted before writing, 99 at most until the file is
 * stored (rows may have been added between the count and the cursor), 100 once completed. With
 * no rows counted there is nothing to measure: 0 until the file is stored.
 */
export const progressOf = (status: ReportStatus, written: number, total: number | null): number => {
  if (status === "completed" || status === "expired") return 100
  if (status === "queued" || total === null || total <= 0) return 0
  return Math.max(0, Math.min(99, Math.floor((written * 100) / total)))
}

/**
 * When a running report should finish: the time it has taken so far, scaled by what is left.
 * Null when nothing is written yet (no rate to scale).
 */
export const estimateFinish = (startedMs: number, nowMs: number, written: number, total: number): number | null => {
  if (written <= 0 || total <= 0) return null
  const elapsed = Math.max(0, nowMs - startedMs)
  return nowMs + Math.ceil((elapsed * Math.max(0, total - written)) / written)
}

export class ReportSummary extends Schema.Class<ReportSummary>("ReportSummary")({
  total_appointments: Schema.Int.annotations({ description: "Appointments in the range (every status)" }),
  total_revenue: Schema.Number.annotations({ description: "Σ paid amounts of their claims, dollars" }),
  average_rate: Schema.Number.annotations({ description: "Mean billed amount of the appointments with a claim, dollars" })
}) {}

export class ReportState extends Schema.Class<ReportState>("ReportState")({
  report_id: Schema.String,
  status: ReportStatus,
  progress_percentage: Schema.Int.annotations({ description: "Rows written ÷ rows counted before writing, 0–100" }),
  generated_at: Schema.NullOr(IsoTimestamp),
  estimated_completion: Schema.NullOr(IsoTimestamp),
  download_url: Schema.NullOr(Schema.String).annotations({
    description: "This report's download operation (admin token needed; it redirects to a short-lived signed link); null until completed"
  }),
  expires_at: Schema.NullOr(IsoTimestamp),
  failure_reason: Schema.NullOr(Schema.String).annotations({ description: "Why generation failed; null unless failed" })
}) {}

export class FollowUpReportQueued extends Schema.Class<FollowUpReportQueued>("FollowUpReportQueued")({
  report_id: Schema.String,
  status: ReportStatus,
  estimated_completion: Schema.NullOr(IsoTimestamp),
  download_url: Schema.Null
}) {}

export class AppointmentsReportQueued extends Schema.Class<AppointmentsReportQueued>("AppointmentsReportQueued")({
  report_id: Schema.String,
  status: ReportStatus,
  generated_at: Schema.Null,
  download_url: Schema.Null,
  summary: ReportSummary
}) {}

export class WeeklyMetricValues extends Schema.Class<WeeklyMetricValues>("WeeklyMetricValues")({
  total_appointments: Schema.Int,
  completed_appointments: Schema.Int,
  cancelled_appointments: Schema.Int,
  no_show_appointments: Schema.Int,
  new_patients: Schema.Int,
  total_revenue: Schema.Number.annotations({ description: "Dollars" }),
  average_session_duration: Schema.Number.annotations({ description: "Minutes, over completed appointments; 0 when none" }),
  provider_utilization: Schema.Number.annotations({ description: "Booked minutes ÷ available minutes (0 when no availability); may pass 1" })
}) {}

export class DailyFigures extends Schema.Class<DailyFigures>("DailyFigures")({
  date: IsoDate,
  appointments: Schema.Int,
  revenue: Schema.Number
}) {}

export class WeeklyMetrics extends Schema.Class<WeeklyMetrics>("WeeklyMetrics")({
  week_start: IsoDate,
  week_end: IsoDate,
  metrics: WeeklyMetricValues,
  daily_breakdown: Schema.Array(DailyFigures)
}) {}
