/**
 * The report statements that read other areas' tables (`providers`, `appointments`, `claims`,
 * `available_slots`; docs/reports.md): each one set-based statement with grouped aggregates, no
 * rows loaded to be counted in the app. Rows decoded, SQL errors defects. Ranges of days are the
 * clinic's days (`zone`).
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect } from "../Repository.js"
import { providerFilter, rangeOf, type ReportParams, type Summary } from "./ReportQueries.js"

export interface MetricsScope {
  /** First and last day, YYYY-MM-DD (clinic days, inclusive). */
  readonly start: string
  readonly end: string
  readonly providerId?: number | undefined
  /** Non-empty: the providers of this department (case-insensitive). */
  readonly department?: string | undefined
}

/** Booked time: every appointment that held the provider's time (not cancelled or moved away). */
const bookedStatuses = ["scheduled", "confirmed", "in_progress", "completed", "no_show"]

/** The week's figures; exact decimals as text. */
export const WeekFigures = Schema.Struct({
  total: Schema.Int,
  completed: Schema.Int,
  cancelled: Schema.Int,
  no_show: Schema.Int,
  new_patients: Schema.Int,
  revenue: Schema.String,
  average_duration: Schema.String,
  booked_minutes: Schema.String,
  available_minutes: Schema.String
})

/** One day of the range (zeros included); revenue as exact decimal text. */
export const DayFigures = Schema.Struct({ day: Schema.String, appointments: Schema.Int, revenue: Schema.String })

const SummaryRow = Schema.Struct({ total: Schema.Int, revenue: Schema.String, average: Schema.String })

export class ReportRowsRepo extends Effect.Service<ReportRowsRepo>()("app/ReportRowsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const existingProviders = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (ids) => sql`SELECT id FROM providers WHERE id IN ${sql.in(ids)}`
    })

    const mondayOf = SqlSchema.single({
      Request: Schema.Struct({ at: Schema.DateFromSelf, zone: Schema.String }),
      Result: Schema.Struct({ day: Schema.String }),
      execute: ({ at, zone }) =>
        sql`SELECT to_char(d - (extract(isodow FROM d)::int - 1), 'YYYY-MM-DD') AS day
          FROM (SELECT (${at}::timestamptz AT TIME ZONE ${zone})::date AS d) t`
    })

    /** The fragments both metrics statements share: the scope's providers, range and appointments. */
    const metricsParts = (zone: string, scope: MetricsScope) => {
      const clauses: Array<Statement.Fragment> = []
      if (scope.providerId !== undefined) clauses.push(sql`p.id = ${scope.providerId}`)
      const department = scope.department?.trim() ?? ""
      if (department !== "") clauses.push(sql`lower(p.department) = lower(${department})`)
      const providers = sql`SELECT p.id FROM providers p WHERE ${clauses.length === 0 ? sql`TRUE` : sql.and(clauses)}`
      const from = sql`(${scope.start}::date::timestamp AT TIME ZONE ${zone})`
      const to = sql`((${scope.end}::date + 1)::timestamp AT TIME ZONE ${zone})`
      const week = sql`SELECT a.* FROM appointments a
        WHERE a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND a.provider_id IN (${providers})`
      return { providers, from, to, week }
    }

    const Scoped = Schema.Struct({
      zone: Schema.String,
      scope: Schema.Struct({
        start: Schema.String,
        end: Schema.String,
        providerId: Schema.optional(Schema.Number),
        department: Schema.optional(Schema.String)
      })
    })

    const weekFigures = SqlSchema.single({
      Request: Scoped,
      Result: WeekFigures,
      execute: ({ scope, zone }) => {
        const { from, providers, to, week } = metricsParts(zone, scope)
        return sql`WITH week AS (${week})
          SELECT
            (SELECT count(*) FROM week)::int AS total,
            (SELECT count(*) FROM week WHERE status = 'completed')::int AS completed,
            (SELECT count(*) FROM week WHERE status = 'cancelled')::int AS cancelled,
            (SELECT count(*) FROM week WHERE status = 'no_show' OR (no_show AND status <> 'cancelled'))::int AS no_show,
            (SELECT count(DISTINCT w.patient_id) FROM week w WHERE w.status NOT IN ('cancelled', 'rescheduled')
              AND NOT EXISTS (SELECT 1 FROM appointments e WHERE e.patient_id = w.patient_id
                AND e.status NOT IN ('cancelled', 'rescheduled') AND e.scheduled_at < ${from}))::int AS new_patients,
            (SELECT coalesce(sum(c.payment_amount), 0) FROM claims c WHERE c.status = 'paid'
              AND c.service_date BETWEEN ${scope.start}::date AND ${scope.end}::date AND c.provider_id IN (${providers}))::text AS revenue,
            (SELECT coalesce(round(avg(duration_minutes), 2), 0) FROM week WHERE status = 'completed')::text AS average_duration,
            (SELECT coalesce(sum(duration_minutes), 0) FROM week WHERE status IN ${sql.in(bookedStatuses)})::text AS booked_minutes,
            (SELECT coalesce(sum(extract(epoch FROM least(s.end_time, ${to}) - greatest(s.start_time, ${from})) / 60), 0)
              FROM available_slots s WHERE (s.available OR s.booked) AND s.start_time < ${to} AND s.end_time > ${from}
                AND s.provider_id IN (${providers}))::text AS available_minutes`
      }
    })

    const dayFigures = SqlSchema.findAll({
      Request: Scoped,
      Result: DayFigures,
      execute: ({ scope, zone }) => {
        const { providers, week } = metricsParts(zone, scope)
        return sql`
          WITH days AS (SELECT d::date AS day FROM generate_series(${scope.start}::date, ${scope.end}::date, interval '1 day') d),
          counts AS (SELECT (a.scheduled_at AT TIME ZONE ${zone})::date AS day, count(*) AS n FROM (${week}) a GROUP BY 1),
          paid AS (SELECT c.service_date AS day, sum(c.payment_amount) AS amount FROM claims c WHERE c.status = 'paid'
            AND c.service_date BETWEEN ${scope.start}::date AND ${scope.end}::date AND c.provider_id IN (${providers}) GROUP BY 1)
          SELECT to_char(days.day, 'YYYY-MM-DD') AS day, coalesce(counts.n, 0)::int AS appointments, coalesce(paid.amount, 0)::text AS revenue
          FROM days LEFT JOIN counts ON counts.day = days.day LEFT JOIN paid ON paid.day = days.day
          ORDER BY days.day`
      }
    })

    const summaryOf = SqlSchema.single({
      Request: Schema.Struct({ zone: Schema.String, start_date: Schema.String, end_date: Schema.String, providerIds: Schema.NullOr(Schema.Array(Schema.Number)) }),
      Result: SummaryRow,
      execute: (r) => {
        const { from, to } = rangeOf(sql, r.zone, r)
        return sql`SELECT count(*)::int AS total, coalesce(sum(c.payment_amount), 0)::text AS revenue,
            coalesce(round(avg(c.amount), 2), 0)::text AS average
          FROM appointments a LEFT JOIN claims c ON c.appointment_id = a.id AND c.status <> 'denied'
          WHERE a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND ${providerFilter(sql, "a", r.providerIds)}`
      }
    })

    return {
      /** Of `ids`, those naming a provider. */
      existingProviderIds: (ids: ReadonlyArray<number>) =>
        ids.length === 0 ? Effect.succeed([]) : Effect.map(orDefect(existingProviders(ids)), (rows) => rows.map((row) => row.id)),
      /** Monday (YYYY-MM-DD) of the week holding `at` in `zone`. */
      mondayOf: (at: Date, zone: string) => Effect.map(orDefect(mondayOf({ at, zone })), (row) => row.day),
      /** The scope's figures over the range. */
      weekFigures: (zone: string, scope: MetricsScope) => orDefect(weekFigures({ zone, scope })),
      /** The scope's appointments and paid revenue by day of the range, every day, in order. */
      dayFigures: (zone: string, scope: MetricsScope) => orDefect(dayFigures({ zone, scope })),
      /**
       * The appointments-with-rates summary, in one grouped query: appointments in the range (every
       * status), Σ paid amounts of their claims (denied claims aside), mean billed amount of those with a claim.
       */
      appointmentsSummary: (zone: string, params: ReportParams) =>
        Effect.map(
          orDefect(summaryOf({ zone, start_date: params.start_date, end_date: params.end_date, providerIds: params.provider_ids })),
          (row): Summary => ({ total_appointments: row.total, total_revenue: Number(row.revenue), average_rate: Number(row.average) })
        )
    } as const
  })
}) {}
