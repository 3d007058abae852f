/**
 * Weekly metrics (general §2.12, §4.13) in two grouped queries: the week's figures, and one row
 * per day of it (zeros included). Definitions: docs/reports.md.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import { invalid, invalidField } from "../../Api/Errors.js"
import { maxMetricsDays, reportMessages } from "../../Api/Reports/Reports.js"
import { addDays, DailyFigures, daysBetween, WeeklyMetrics, WeeklyMetricValues } from "../../Domain/Reports/Report.js"
import { AppConfig } from "../AppConfig.js"

export interface MetricsCriteria {
  readonly weekStart?: string | undefined
  readonly weekEnd?: string | undefined
  readonly providerId?: number | undefined
  readonly department?: string | undefined
}


/** Booked time: every appointment that held the provider's time (not cancelled or moved away). */
const bookedStatuses = ["scheduled", "confirmed", "in_progress", "completed", "no_show"]

export class WeeklyMetricsReport extends Effect.Service<WeeklyMetricsReport>()("app/WeeklyMetricsReport", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const zone = config.clinicTimeZone

    /** Monday of the current week in the clinic's zone. */
    const currentMonday = Effect.flatMap(Clock.currentTimeMillis, (ms) =>
      sql<{ day: string }>`SELECT to_char(d - (extract(isodow FROM d)::int - 1), 'YYYY-MM-DD') AS day
        FROM (SELECT (${new Date(ms)}::timestamptz AT TIME ZONE ${zone})::date AS d) t`).pipe(
        Effect.map((rows) => rows[0]!.day),
        Effect.orDie
      )

    const compute = (criteria: MetricsCriteria) =>
      Effect.gen(function*() {
        const start = criteria.weekStart ?? (criteria.weekEnd === undefined ? yield* currentMonday : addDays(criteria.weekEnd, -6))
        const end = criteria.weekEnd ?? addDays(start, 6)
        if (end < start) return yield* Effect.fail(invalidField("week_end", reportMessages.afterWeekStart))
        if (daysBetween(start, end) + 1 > maxMetricsDays) return yield* Effect.fail(invalidField("week_end", reportMessages.rangeTooLong(maxMetricsDays)))
        if (criteria.providerId !== undefined) {
          const found = yield* sql`SELECT 1 FROM providers WHERE id = ${criteria.providerId}`.pipe(Effect.orDie)
          if (found.length === 0) return yield* Effect.fail(invalid({ provider_id: [reportMessages.mustExist] }))
        }
        const clauses: Array<Statement.Fragment> = []
        if (criteria.providerId !== undefined) clauses.push(sql`p.id = ${criteria.providerId}`)
        const department = criteria.department?.trim() ?? ""
        if (department !== "") clauses.push(sql`lower(p.department) = lower(${department})`)
        const providers = sql`SELECT p.id FROM providers p WHERE ${clauses.length === 0 ? sql`TRUE` : sql.and(clauses)}`
        const from = sql`(${start}::date::timestamp AT TIME ZONE ${zone})`
        const to = sql`((${end}::date + 1)::timestamp AT TIME ZONE ${zone})`
        const week = sql`SELECT a.* FROM appointments a
          WHERE a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND a.provider_id IN (${providers})`
        const [figures] = yield* sql<{
          total: number; completed: number; cancelled: number; no_show: number; new_patients: number; revenue: string
          average_duration: string; booked_minutes: string; available_minutes: string
        }>`WITH week AS (${week})
          SELECT
            (SELECT count(*) FROM week)::int AS total,
            (SELECT count(*) FROM week WHERE status = 'completed')::int AS completed,
            (SELECT count(*) FROM week WHERE status = 'cancelled')::int AS cancelled,
            (SELECT count(*) FROM week WHERE status = 'no_show' OR (no_show AND status <> 'cancelled'))::int AS no_show,
            (SELECT count(DISTINCT w.patient_id) FROM week w WHERE w.status NOT IN ('cancelled', 'rescheduled')
              AND NOT EXISTS (SELECT 1 FROM appointments e WHERE e.patient_id = w.patient_id
                AND e.status NOT IN ('cancelled', 'rescheduled') AND e.scheduled_at < ${from}))::int AS new_patients,
            (SELECT coalesce(sum(c.payment_amount), 0) FROM claims c WHERE c.status = 'paid'
              AND c.service_date BETWEEN ${start}::date AND ${end}::date AND c.provider_id IN (${providers}))::text AS revenue,
            (SELECT coalesce(round(avg(duration_minutes), 2), 0) FROM week WHERE status = 'completed')::text AS average_duration,
            (SELECT coalesce(sum(duration_minutes), 0) FROM week WHERE status IN ${sql.in(bookedStatuses)})::text AS booked_minutes,
            (SELECT coalesce(sum(extract(epoch FROM least(s.end_time, ${to}) - greatest(s.start_time, ${from})) / 60), 0)
              FROM available_slots s WHERE (s.available OR s.booked) AND s.start_time < ${to} AND s.end_time > ${from}
                AND s.provider_id IN (${providers}))::text AS available_minutes`.pipe(Effect.orDie)
        const days = yield* sql<{ day: string; appointments: number; revenue: string }>`
          WITH days AS (SELECT d::date AS day FROM generate_series(${start}::date, ${end}::date, interval '1 day') d),
          counts AS (SELECT (a.scheduled_at AT TIME ZONE ${zone})::date AS day, count(*) AS n FROM (${week}) a GROUP BY 1),
          paid AS (SELECT c.service_date AS day, sum(c.payment_amount) AS amount FROM claims c WHERE c.status = 'paid'
            AND c.service_date BETWEEN ${start}::date AND ${end}::date AND c.provider_id IN (${providers}) GROUP BY 1)
          SELECT to_char(days.day, 'YYYY-MM-DD') AS day, coalesce(counts.n, 0)::int AS appointments, coalesce(paid.amount, 0)::text AS revenue
          FROM days LEFT JOIN counts ON counts.day = days.day LEFT JOIN paid ON paid.day = days.day
          ORDER BY days.day`.pipe(Effect.orDie)
        const available = Number(figures!.available_minutes)
        const utilization = available > 0 ? Math.round((Number(figures!.booked_minutes) / available) * 10_000) / 10_000 : 0
        return WeeklyMetrics.make({
          week_start: start,
          week_end: end,
          metrics: WeeklyMetricValues.make({
            total_appointments: figures!.total,
            completed_appointments: figures!.completed,
            cancelled_appointments: figures!.cancelled,
            no_show_appointments: figures!.no_show,
            new_patients: figures!.new_patients,
            total_revenue: Number(figures!.revenue),
            average_session_duration: Number(figures!.average_duration),
            provider_utilization: utilization
          }),
          daily_breakdown: days.map((d) => DailyFigures.make({ date: d.day, appointments: d.appointments, revenue: Number(d.revenue) }))
        })
      }).pipe(Effect.withSpan("WeeklyMetricsReport.compute"))

    return { compute } as const
  })
}) {}
