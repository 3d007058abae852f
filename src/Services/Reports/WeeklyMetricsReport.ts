/**
 * Weekly metrics (general §2.12, §4.13) in two grouped queries: the week's figures, and one row
 * per day of it (zeros included). Definitions: docs/reports.md.
 */
import { Effect } from "effect"
import { invalid, invalidField } from "../../Api/Errors.js"
import { maxMetricsDays, reportMessages } from "../../Api/Reports/Reports.js"
import { DailyFigures, WeeklyMetrics, WeeklyMetricValues } from "../../Domain/Reports/Report.js"
import { addDays, daysBetween } from "../../Domain/Time.js"
import { AppConfig } from "../AppConfig.js"
import { now } from "../Time.js"
import { ReportRowsRepo } from "./ReportRowsRepo.js"

export interface MetricsCriteria {
  readonly weekStart?: string | undefined
  readonly weekEnd?: string | undefined
  readonly providerId?: number | undefined
  readonly department?: string | undefined
}

export class WeeklyMetricsReport extends Effect.Service<WeeklyMetricsReport>()("app/WeeklyMetricsReport", {
  dependencies: [ReportRowsRepo.Default],
  effect: Effect.gen(function*() {
    const rows = yield* ReportRowsRepo
    const config = yield* AppConfig
    const zone = config.clinicTimeZone

    /** Monday of the current week in the clinic's zone. */
    const currentMonday = Effect.flatMap(now, (at) => rows.mondayOf(at, zone))

    const compute = Effect.fn("WeeklyMetricsReport.compute")(function*(criteria: MetricsCriteria) {
      const start = criteria.weekStart ?? (criteria.weekEnd === undefined ? yield* currentMonday : addDays(criteria.weekEnd, -6))
      const end = criteria.weekEnd ?? addDays(start, 6)
      if (end < start) return yield* Effect.fail(invalidField("week_end", reportMessages.afterWeekStart))
      if (daysBetween(start, end) + 1 > maxMetricsDays) return yield* Effect.fail(invalidField("week_end", reportMessages.rangeTooLong(maxMetricsDays)))
      if (criteria.providerId !== undefined) {
        const found = yield* rows.existingProviderIds([criteria.providerId])
        if (found.length === 0) return yield* Effect.fail(invalid({ provider_id: [reportMessages.mustExist] }))
      }
      const scope = { start, end, providerId: criteria.providerId, department: criteria.department }
      const figures = yield* rows.weekFigures(zone, scope)
      const days = yield* rows.dayFigures(zone, scope)
      const available = Number(figures.available_minutes)
      const utilization = available > 0 ? Math.round((Number(figures.booked_minutes) / available) * 10_000) / 10_000 : 0
      return WeeklyMetrics.make({
        week_start: start,
        week_end: end,
        metrics: WeeklyMetricValues.make({
          total_appointments: figures.total,
          completed_appointments: figures.completed,
          cancelled_appointments: figures.cancelled,
          no_show_appointments: figures.no_show,
          new_patients: figures.new_patients,
          total_revenue: Number(figures.revenue),
          average_session_duration: Number(figures.average_duration),
          provider_utilization: utilization
        }),
        daily_breakdown: days.map((d) => DailyFigures.make({ date: d.day, appointments: d.appointments, revenue: Number(d.revenue) }))
      })
    })

    return { compute } as const
  })
}) {}
