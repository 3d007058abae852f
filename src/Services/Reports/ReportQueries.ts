/**
 * What each report file holds (docs/reports.md): its parameters, columns, the count taken before
 * writing (progress), the rows streamed from a cursor in order, and the totals written after them.
 */
import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect } from "effect"
import type { GroupBy, PatientStatus, ReportFormat, ReportType } from "../../Domain/Reports/Report.js"
import type { Column, ReportLayout, Row, Section } from "./ReportWriters.js"

/** A report's validated parameters, as stored in `reports.parameters`. */
export interface ReportParams {
  readonly start_date: string
  readonly end_date: string
  readonly provider_ids: ReadonlyArray<number> | null
  readonly patient_status: PatientStatus | null
  readonly include_rates: boolean
  readonly group_by: GroupBy | null
  readonly format: ReportFormat
}

/**
 * A fetched row: its values in the order of `layout.columns` (the cursor reads rows as arrays: no
 * object a row, no property names), converted in place by `toRow`.
 */
export type RawRow = Array<unknown>

export interface ReportDefinition {
  readonly layout: ReportLayout
  readonly count: Effect.Effect<number, SqlError.SqlError>
  /** The rows in order, one value a column of the layout, read through a cursor (ReportCursor.ts). */
  readonly rows: Statement.Statement<unknown>
  /** The row's cells (the same array, its values typed for the writers). */
  readonly toRow: (raw: RawRow) => Row
  /** Called with each row as written (after `toRow`); `sections` gives the totals at the end. */
  readonly tally: (row: Row) => void
  readonly sections: () => ReadonlyArray<Section>
}

const column = (key: string, label: string, type: Column["type"], chars: number): Column => ({ key, label, type, chars })

const cents = (amount: number | null) => (amount === null ? 0 : Math.round(amount * 100))
const dollars = (value: number) => Math.round(value) / 100
const money = (amount: string | null) => (amount === null ? null : Number(amount))

/** The instants a range of clinic days covers: [start day 00:00, day after the end 00:00) in the zone. */
const rangeOf = (sql: SqlClient.SqlClient, zone: string, params: Pick<ReportParams, "start_date" | "end_date">) => ({
  from: sql`(${params.start_date}::date::timestamp AT TIME ZONE ${zone})`,
  to: sql`((${params.end_date}::date + 1)::timestamp AT TIME ZONE ${zone})`
})

const providerFilter = (sql: SqlClient.SqlClient, alias: string, ids: ReadonlyArray<number> | null) =>
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

/**
 * The appointments-with-rates summary, in one grouped query: appointments in the range (every
 * status), Σ paid amounts of their claims (denied claims aside), mean billed amount of those with a claim.
 */
export const appointmentsSummary = (sql: SqlClient.SqlClient, zone: string, params: ReportParams) =>
  Effect.gen(function*() {
    const { from, to } = rangeOf(sql, zone, params)
    const [row] = yield* sql<{ total: number; revenue: string; average: string }>`
      SELECT count(*)::int AS total, coalesce(sum(c.payment_amount), 0)::text AS revenue,
        coalesce(round(avg(c.amount), 2), 0)::text AS average
      FROM appointments a LEFT JOIN claims c ON c.appointment_id = a.id AND c.status <> 'denied'
      WHERE a.scheduled_at >= ${from} AND a.scheduled_at < ${to} AND ${providerFilter(sql, "a", params.provider_ids)}`
    return {
      total_appointments: row?.total ?? 0,
      total_revenue: Number(row?.revenue ?? "0"),
      average_rate: Number(row?.average ?? "0")
    } satisfies Summary
  })

interface Totals {
  appointments: number
  billedCents: number
  paidCents: number
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
  const byWeek = grouping === "week"
  const columns: Array<Column> = [
    ...(byWeek ? [column("week", "Week of", "date", 10)] : []),
    column("date", "Date", "date", 10),
    column("time", "Time", "text", 5),
    column("appointment_id", "Appointment", "integer", 11),
    column("provider_id", "Provider ID", "integer", 11),
    column("provider", "Provider", "text", 22),
    column("patient_id", "Patient ID", "integer", 10),
    column("appointment_type", "Type", "text", 17),
    column("status", "Status", "text", 11),
    column("duration_minutes", "Minutes", "integer", 7),
    ...(rates ? [column("cpt_code", "CPT", "text", 5), column("billed_amount", "Billed", "money", 10), column("paid_amount", "Paid", "money", 10)] : [])
  ]
  const at = (key: string) => columns.findIndex((c) => c.key === key)
  const [providerAt, providerIdAt, typeAt, billedAt, paidAt] = [at("provider"), at("provider_id"), at("appointment_type"), at("billed_amount"), at("paid_amount")]
  const order = grouping === "provider"
    ? sql`ORDER BY lower(u.last_name), lower(u.first_name), a.provider_id, a.scheduled_at, a.id`
    : grouping === "appointment_type"
    ? sql`ORDER BY a.appointment_type NULLS LAST, a.scheduled_at, a.id`
    : sql`ORDER BY a.scheduled_at, a.id`
  const total: Totals = { appointments: 0, billedCents: 0, paidCents: 0 }
  const groups = new Map<string, Totals>()
  const groupOf = (row: Row): string =>
    grouping === "provider" ? `${row[providerAt]} (${row[providerIdAt]})` : grouping === "week" ? String(row[0]) : String(row[typeAt] ?? "none")
  const add = (totals: Totals, row: Row) => {
    totals.appointments += 1
    if (rates) {
      totals.billedCents += cents(row[billedAt] as number | null)
      totals.paidCents += cents(row[paidAt] as number | null)
    }
  }
  const totalColumns = (first: Column): ReadonlyArray<Column> => [
    first,
    column("appointments", "Appointments", "integer", 12),
    ...(rates ? [column("billed_amount", "Billed", "money", 14), column("paid_amount", "Paid", "money", 14)] : [])
  ]
  const totalRow = (label: string, totals: Totals): Row => [
    label, totals.appointments, ...(rates ? [dollars(totals.billedCents), dollars(totals.paidCents)] : [])
  ]
  const groupLabels: Record<GroupBy, string> = { provider: "provider", week: "week", appointment_type: "appointment type" }
  return {
    layout: { title: reportTitles.provider_appointments, generatedAt, parameters: parameterList(params, "provider_appointments"), columns },
    count: Effect.map(sql<{ count: number }>`SELECT count(*)::int AS count FROM appointments a WHERE ${where}`, (rows) => rows[0]?.count ?? 0),
    rows: sql`SELECT ${byWeek ? sql`to_char(date_trunc('week', a.scheduled_at AT TIME ZONE ${zone}), 'YYYY-MM-DD'),` : sql``}
        to_char(a.scheduled_at AT TIME ZONE ${zone}, 'YYYY-MM-DD'), to_char(a.scheduled_at AT TIME ZONE ${zone}, 'HH24:MI'),
        a.id, a.provider_id, u.first_name || ' ' || u.last_name, a.patient_id, a.appointment_type, a.status, a.duration_minutes
        ${rates ? sql`, c.cpt_code, c.amount::text, c.payment_amount::text` : sql``}
      FROM appointments a JOIN providers p ON p.id = a.provider_id JOIN users u ON u.id = p.user_id
        LEFT JOIN claims c ON c.appointment_id = a.id AND c.status <> 'denied'
      WHERE ${where} ${order}`,
    toRow: (raw) => {
      if (rates) {
        raw[billedAt] = money(raw[billedAt] as string | null)
        raw[paidAt] = money(raw[paidAt] as string | null)
      }
      return raw as Row
    },
    tally: (row) => {
      add(total, row)
      if (grouping !== null) {
        const key = groupOf(row)
        const totals = groups.get(key) ?? { appointments: 0, billedCents: 0, paidCents: 0 }
        add(totals, row)
        groups.set(key, totals)
      }
    },
    sections: () => [
      { title: "Totals", columns: totalColumns(column("scope", "", "text", 20)), rows: [totalRow("All appointments", total)] },
      ...(grouping === null ? [] : [{
        title: `Totals by ${groupLabels[grouping]}`,
        columns: totalColumns(column(grouping, groupLabels[grouping], grouping === "week" ? "date" : "text", 28)),
        rows: [...groups].map(([key, totals]) => totalRow(key, totals))
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
  const columns: ReadonlyArray<Column> = [
    column("patient_id", "Patient ID", "integer", 10),
    column("patient_name", "Patient", "text", 24),
    column("patient_status", "Status", "text", 8),
    column("visits_in_range", "Visits", "integer", 6),
    column("last_visit", "Last visit", "date", 10),
    column("days_since_last_visit", "Days since", "integer", 10),
    column("provider", "Provider", "text", 22),
    column("next_appointment", "Next appointment", "text", 16),
    column("next_appointment_type", "Next type", "text", 17),
    column("next_provider", "Next provider", "text", 22)
  ]
  const nextAt = columns.findIndex((c) => c.key === "next_appointment")
  let patients = 0
  let withoutNext = 0
  return {
    layout: { title: reportTitles.patient_follow_up, generatedAt, parameters: parameterList(params, "patient_follow_up"), columns },
    count: Effect.map(
      sql<{ count: number }>`SELECT count(*)::int AS count FROM (${seen}) s JOIN patients pa ON pa.id = s.patient_id WHERE ${statusFilter}`,
      (rows) => rows[0]?.count ?? 0
    ),
    // Without a next appointment first (they need a follow-up), the longest since their last visit first.
    rows: sql`SELECT s.patient_id, pa.first_name || ' ' || pa.last_name, CASE WHEN pa.active THEN 'active' ELSE 'inactive' END, s.visits,
        to_char(l.scheduled_at AT TIME ZONE ${zone}, 'YYYY-MM-DD'),
        ((${now}::timestamptz AT TIME ZONE ${zone})::date - (l.scheduled_at AT TIME ZONE ${zone})::date),
        lu.first_name || ' ' || lu.last_name,
        to_char(n.scheduled_at AT TIME ZONE ${zone}, 'YYYY-MM-DD HH24:MI'), n.appointment_type,
        nu.first_name || ' ' || nu.last_name
      FROM (${seen}) s JOIN patients pa ON pa.id = s.patient_id
        CROSS JOIN LATERAL (SELECT a.scheduled_at, a.provider_id FROM appointments a
          WHERE a.patient_id = s.patient_id AND a.status = 'completed'
          ORDER BY a.scheduled_at DESC, a.id DESC LIMIT 1) l
        JOIN providers lp ON lp.id = l.provider_id JOIN users lu ON lu.id = lp.user_id
        LEFT JOIN LATERAL (SELECT a.scheduled_at, a.appointment_type, a.provider_id FROM appointments a
          WHERE a.patient_id = s.patient_id AND a.status IN ('scheduled', 'confirmed') AND a.scheduled_at > ${now}
          ORDER BY a.scheduled_at, a.id LIMIT 1) n ON TRUE
        LEFT JOIN providers np ON np.id = n.provider_id LEFT JOIN users nu ON nu.id = np.user_id
      WHERE ${statusFilter}
      ORDER BY (n.scheduled_at IS NOT NULL), l.scheduled_at, s.patient_id`,
    toRow: (raw) => raw as Row,
    tally: (row) => {
      patients += 1
      if (row[nextAt] === null) withoutNext += 1
    },
    sections: () => [{
      title: "Totals",
      columns: [column("patients", "Patients", "integer", 10), column("without_next", "Without a next appointment", "integer", 26)],
      rows: [[patients, withoutNext]]
    }]
  }
}
