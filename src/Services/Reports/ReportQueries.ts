/**
 * What each report file holds (docs/reports.md): its parameters, columns, the count taken before
 * writing (progress), the rows streamed from a cursor in order, and the totals written after them.
 */
import type { SqlClient, Statement } from "@effect/sql"
import type { GroupBy, ReportType } from "../../Domain/Reports/Report.js"
import type { ReportColumn } from "./ReportCells.js"
import type { ReportParams } from "./ReportsRepo.js"
import type { Column, ReportLayout } from "./ReportWriters.js"

export type { ReportParams } from "./ReportsRepo.js"

/** A totals section: a grouped query in the report's snapshot, one value a column (money as text). */
export interface TotalsQuery {
  readonly title: string
  readonly columns: ReadonlyArray<Column>
  readonly rows: Statement.Statement<unknown>
}

export interface ReportDefinition {
  readonly layout: ReportLayout & { readonly columns: ReadonlyArray<ReportColumn> }
  /** The rows to write, counted before writing (progress): `SELECT count(*)::int`. */
  readonly count: Statement.Statement<unknown>
  /** `FROM … WHERE …`: the rows, whose columns' `sql` the layout names (ReportCells.ts `reportRows`). */
  readonly from: Statement.Fragment
  /** The rows' order: expressions, each ascending (nulls last). */
  readonly order: ReadonlyArray<Statement.Fragment>
  /** The totals written after the rows, in order. */
  readonly totals: ReadonlyArray<TotalsQuery>
}

const column = (key: string, label: string, type: Column["type"], chars: number): Column => ({ key, label, type, chars })

/** A column of the rows: `sql` gives its value (ReportCells.ts), `plain` text needs no quoting. */
const cell = (key: string, label: string, type: Column["type"], chars: number, sql: Statement.Fragment, plain = false): ReportColumn => ({
  key, label, type, chars, sql, plain
})

/** The instants a range of clinic days covers: [start day 00:00, day after the end 00:00) in the zone. */
export const rangeOf = (sql: SqlClient.SqlClient, zone: string, params: Pick<ReportParams, "start_date" | "end_date">) => ({
  from: sql`(${params.start_date}::date::timestamp AT TIME ZONE ${zone})`,
  to: sql`((${params.end_date}::date + 1)::timestamp AT TIME ZONE ${zone})`
})

export const providerFilter = (sql: SqlClient.SqlClient, alias: string, ids: ReadonlyArray<number> | null) =>
  ids === null || ids.length === 0 ? sql`TRUE` : sql`${sql(alias)}.provider_id IN ${sql.in(ids)}`

const parameterList = (params: ReportParams, type: ReportType): ReadonlyArray<readonly [string, string]> => {
  const list: Array<readonly [string, string]> = [
    ["start_date", params.start_date],
    ["end_date", params.end_date],
    ["provider_ids", params.provider_ids === null || params.provider_ids.length === 0 ? "all" : params.provider_ids.join(" ")]
  ]
  if (type === "patient_follow_up") list.push(["patient_status", params.patient_status ?? "all"])
  if (type === "provider_appointments") {
    list.push(["include_rates", String(params.include_rates)])
    list.push(["group_by", params.group_by ?? "none"])
  }
  return list
}

export const reportTitles: Record<ReportType, string> = {
  patient_follow_up: "Patient follow-up schedule",
  provider_appointments: "Provider appointments with rates"
}

export interface Summary {
  readonly total_appointments: number
  readonly total_revenue: number
  readonly average_rate: number
}

export const appointmentsDefinition = (
  sql: SqlClient.SqlClient,
  zone: string,
  params: ReportParams,
  generatedAt: Date
): ReportDefinition => {
  const { from, to } = rangeOf(sql, zone, params)
  const where = sql`a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND ${providerFilter(sql, "a", params.provider_ids)}`
  const rates = params.include_rates
  const grouping = params.group_by
  const local = sql`(a.scheduled_at AT TIME ZONE ${zone})`
  const providerName = sql`u.first_name || ' ' || u.last_name`
  const columns: Array<ReportColumn> = [
    ...(grouping === "week" ? [cell("week", "Week of", "date", 10, sql`date_trunc('week', ${local})::date`)] : []),
    cell("date", "Date", "date", 10, sql`${local}::date`),
    // ISO time text is HH:MM:SS.
    cell("time", "Time", "text", 5, sql`left(${local}::time::text, 5)`, true),
    cell("appointment_id", "Appointment", "integer", 11, sql`a.id`),
    cell("provider_id", "Provider ID", "integer", 11, sql`a.provider_id`),
    cell("provider", "Provider", "text", 22, providerName),
    cell("patient_id", "Patient ID", "integer", 10, sql`a.patient_id`),
    // Type and status: vocabularies of appointments' CHECK constraints.
    cell("appointment_type", "Type", "text", 17, sql`a.appointment_type`, true),
    cell("status", "Status", "text", 11, sql`a.status`, true),
    cell("duration_minutes", "Minutes", "integer", 7, sql`a.duration_minutes`),
    ...(rates
      ? [
        cell("cpt_code", "CPT", "text", 5, sql`c.cpt_code`),
        cell("billed_amount", "Billed", "money", 10, sql`c.amount`),
        cell("paid_amount", "Paid", "money", 10, sql`c.payment_amount`)
      ]
      : [])
  ]
  const joined = sql`FROM appointments a JOIN providers p ON p.id = a.provider_id JOIN users u ON u.id = p.user_id
    LEFT JOIN claims c ON c.appointment_id = a.id AND c.status <> 'denied'
    WHERE ${where}`
  const inTime = [sql`a.scheduled_at`, sql`a.id`]
  const order = grouping === "provider"
    ? [sql`lower(u.last_name)`, sql`lower(u.first_name)`, sql`a.provider_id`, ...inTime]
    : grouping === "appointment_type"
    ? [sql`a.appointment_type`, ...inTime]
    : inTime
  const totalColumns = (first: Column): ReadonlyArray<Column> => [
    first,
    column("appointments", "Appointments", "integer", 12),
    ...(rates ? [column("billed_amount", "Billed", "money", 14), column("paid_amount", "Paid", "money", 14)] : [])
  ]
  // Σ over the rows' claims: exact (numeric), as the rows show them.
  const sums = rates ? sql`, coalesce(sum(c.amount), 0)::text, coalesce(sum(c.payment_amount), 0)::text` : sql``
  const groupLabels: Record<GroupBy, string> = { provider: "provider", week: "week", appointment_type: "appointment type" }
  // Groups in the order the rows come in.
  const groupTotals = (group: GroupBy): Statement.Statement<unknown> => {
    switch (group) {
      case "provider":
        return sql`SELECT ${providerName} || ' (' || a.provider_id || ')', count(*)::int ${sums} ${joined}
          GROUP BY a.provider_id, u.first_name, u.last_name ORDER BY lower(u.last_name), lower(u.first_name), a.provider_id`
      case "week":
        return sql`SELECT date_trunc('week', ${local})::date::text, count(*)::int ${sums} ${joined} GROUP BY 1 ORDER BY 1`
      case "appointment_type":
        return sql`SELECT coalesce(a.appointment_type, 'none'), count(*)::int ${sums} ${joined}
          GROUP BY a.appointment_type ORDER BY a.appointment_type NULLS LAST`
    }
  }
  return {
    layout: { title: reportTitles.provider_appointments, generatedAt, parameters: parameterList(params, "provider_appointments"), columns },
    count: sql`SELECT count(*)::int FROM appointments a WHERE ${where}`,
    from: joined,
    order,
    totals: [
      {
        title: "Totals",
        columns: totalColumns(column("scope", "", "text", 20)),
        rows: sql`SELECT 'All appointments', count(*)::int ${sums} ${joined}`
      },
      ...(grouping === null ? [] : [{
        title: `Totals by ${groupLabels[grouping]}`,
        columns: totalColumns(column(grouping, groupLabels[grouping], grouping === "week" ? "date" : "text", 28)),
        rows: groupTotals(grouping)
      }])
    ]
  }
}

export const followUpDefinition = (
  sql: SqlClient.SqlClient,
  zone: string,
  params: ReportParams,
  generatedAt: Date
): ReportDefinition => {
  const { from, to } = rangeOf(sql, zone, params)
  const now = generatedAt
  const statusFilter = params.patient_status === null ? sql`TRUE` : sql`pa.active = ${params.patient_status === "active"}`
  // Patients seen in the range: a completed appointment in it (with one of the providers, if named).
  const seen = sql`SELECT a.patient_id, count(*)::int AS visits FROM appointments a
    WHERE a.status = 'completed' AND a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND ${providerFilter(sql, "a", params.provider_ids)}
    GROUP BY a.patient_id`
  const lastDay = sql`(l.scheduled_at AT TIME ZONE ${zone})::date`
  const columns: ReadonlyArray<ReportColumn> = [
    cell("patient_id", "Patient ID", "integer", 10, sql`s.patient_id`),
    cell("patient_name", "Patient", "text", 24, sql`pa.first_name || ' ' || pa.last_name`),
    cell("patient_status", "Status", "text", 8, sql`CASE WHEN pa.active THEN 'active' ELSE 'inactive' END`, true),
    cell("visits_in_range", "Visits", "integer", 6, sql`s.visits`),
    cell("last_visit", "Last visit", "date", 10, lastDay),
    cell("days_since_last_visit", "Days since", "integer", 10, sql`((${now}::timestamptz AT TIME ZONE ${zone})::date - ${lastDay})`),
    cell("provider", "Provider", "text", 22, sql`lu.first_name || ' ' || lu.last_name`),
    cell("next_appointment", "Next appointment", "text", 16, sql`to_char(n.scheduled_at AT TIME ZONE ${zone}, 'YYYY-MM-DD HH24:MI')`, true),
    cell("next_appointment_type", "Next type", "text", 17, sql`n.appointment_type`, true),
    cell("next_provider", "Next provider", "text", 22, sql`nu.first_name || ' ' || nu.last_name`)
  ]
  const joined = sql`FROM (${seen}) s JOIN patients pa ON pa.id = s.patient_id
      CROSS JOIN LATERAL (SELECT a.scheduled_at, a.provider_id FROM appointments a
        WHERE a.patient_id = s.patient_id AND a.status = 'completed'
        ORDER BY a.scheduled_at DESC, a.id DESC LIMIT 1) l
      JOIN providers lp ON lp.id = l.provider_id JOIN users lu ON lu.id = lp.user_id
      LEFT JOIN LATERAL (SELECT a.scheduled_at, a.appointment_type, a.provider_id FROM appointments a
        WHERE a.patient_id = s.patient_id AND a.status IN ('scheduled', 'confirmed') AND a.scheduled_at > ${now}
        ORDER BY a.scheduled_at, a.id LIMIT 1) n ON TRUE
      LEFT JOIN providers np ON np.id = n.provider_id LEFT JOIN users nu ON nu.id = np.user_id
    WHERE ${statusFilter}`
  return {
    layout: { title: reportTitles.patient_follow_up, generatedAt, parameters: parameterList(params, "patient_follow_up"), columns },
    count: sql`SELECT count(*)::int FROM (${seen}) s JOIN patients pa ON pa.id = s.patient_id WHERE ${statusFilter}`,
    // Without a next appointment first (they need a follow-up), the longest since their last visit first.
    from: joined,
    order: [sql`(n.scheduled_at IS NOT NULL)`, sql`l.scheduled_at`, sql`s.patient_id`],
    totals: [{
      title: "Totals",
      columns: [column("patients", "Patients", "integer", 10), column("without_next", "Without a next appointment", "integer", 26)],
      rows: sql`SELECT count(*)::int, (count(*) FILTER (WHERE n.scheduled_at IS NULL))::int ${joined}`
    }]
  }
}
