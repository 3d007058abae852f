/**
 * The report statements that read other areas' tables (`providers`, `appointments`, `claims`,
 * `available_slots`, `patients`, `users`; docs/reports.md), each one set-based statement with
 * grouped aggregates: no rows are loaded to be counted or summed in the app. Rows decoded, SQL
 * errors defects. Ranges of days are the clinic's days (`zone`).
 *
 * The report files' rows are generated statements (`appointmentsDefinition`, `followUpDefinition`,
 * `reportRows`) that the generator reads from a cursor in one snapshot (ReportCursor.ts); each
 * batch is checked cell by cell (`decodeRows`) without the schema parser's per-value cost.
 *
 * Formatting in SQL:
 * the select list a report's cursor reads, by format. For csv, json and excel PostgreSQL formats
 * each row into one finished piece of the file (a CSV line, a JSON object, a row's cells XML), so
 * the app decodes one value a row and writes it: decoding and formatting a dozen values a row in
 * the app cost more than the rest of a million-row report together. PDF rows come as values, which
 * the PDF writer lays out (ReportWriters.ts).
 *
 * Text cells go through the SQL twins of the app's own rules (sql/0025_report_cells.sql:
 * `report_csv_text` for src/Domain/Csv.ts, `report_xml_text` for exceljs's XML encoding), unless
 * the column is `plain`. The queries run with `DateStyle = ISO` (ReportCursor.ts), so a date's
 * text is `YYYY-MM-DD`.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, ParseResult, Schema } from "effect"
import type { GroupBy, ReportFormat, ReportType } from "../../Domain/Reports/Report.js"
import { orDefect, SqlSchema } from "../Repository.js"
import type { RawRows } from "./ReportCursor.js"
import type { ReportParams } from "./ReportsRepo.js"
import type { Column, ReportLayout } from "./ReportWriters.js"
import { dayEndIn, dayStartIn } from "../SqlFilters.js"

export type { ReportParams } from "./ReportsRepo.js"

export interface ReportColumn extends Column {
  /** The cell's value: text, an integer, a `date`, or dollars (numeric); NULL for an empty cell. */
  readonly sql: Statement.Fragment
  /** Text that never needs quoting or escaping: digits, or a vocabulary a CHECK constraint fixes. */
  readonly plain?: boolean
}

/** A cell's text for CSV, or NULL when empty. */
const csvText = (sql: SqlClient.SqlClient, column: ReportColumn) =>
  column.type === "text" && column.plain !== true ? sql`report_csv_text(${column.sql})` : sql`(${column.sql})::text`

/** The row as one CSV line, CRLF included (the text of `csvLines` in src/Domain/Csv.ts). */
const csvLine = (sql: SqlClient.SqlClient, columns: ReadonlyArray<ReportColumn>) =>
  sql`${sql.join(" || ',' || ", false)(columns.map((column) => sql`coalesce(${csvText(sql, column)}, '')`))} || ${"\r\n"}::text`

/**
 * The row as a compact JSON object, keys in column order: each value as `to_json` writes it
 * (text escaped, dates as `YYYY-MM-DD`, money as numbers).
 */
const jsonObject = (sql: SqlClient.SqlClient, columns: ReadonlyArray<ReportColumn>) =>
  sql`${sql.join(" || ", false)(columns.map((column, i) =>
    sql`${`${i === 0 ? "{" : ","}${JSON.stringify(column.key)}:`}::text || coalesce(to_json(${column.sql})::text, 'null')`
  ))} || '}'`

/**
 * The row's cells XML as exceljs's streaming writer types them, without addresses (the writer
 * gives the first cell its address, ReportWriters.ts): numbers, dates as serial days (1900 system),
 * text as `t="str"`, an empty cell as `<c/>`; each column's style.
 */
const excelCells = (sql: SqlClient.SqlClient, columns: ReadonlyArray<ReportColumn>, styleIds: ReadonlyArray<number>) =>
  sql.join(" || ", false)(columns.map((column, i) => {
    const open = styleIds[i] ? `<c s="${styleIds[i]}"` : "<c"
    const content = column.type === "date"
      ? sql`'><v>' || ((${column.sql}) - date '1899-12-30')::text`
      : column.type === "text"
      ? sql`' t="str"><v>' || ${column.plain === true ? column.sql : sql`report_xml_text(${column.sql})`}`
      : sql`'><v>' || (${column.sql})::text`
    return sql`coalesce(${open}::text || ${content} || '</v></c>', ${`${open}/>`}::text)`
  }))

/** A PDF row's values: dates and money as text (money becomes a number in `toValues`). */
const valueList = (sql: SqlClient.SqlClient, columns: ReadonlyArray<ReportColumn>) =>
  sql.join(", ", false)(columns.map((column) => (column.type === "date" || column.type === "money" ? sql`(${column.sql})::text` : column.sql)))

/** What the cursor selects for `format`: one text a row, or (pdf) one value a column. */
const reportSelect = (
  sql: SqlClient.SqlClient,
  format: ReportFormat,
  columns: ReadonlyArray<ReportColumn>,
  excelStyleIds: ReadonlyArray<number>
): Statement.Fragment => {
  switch (format) {
    case "csv":
      return csvLine(sql, columns)
    case "json":
      return jsonObject(sql, columns)
    case "excel":
      return excelCells(sql, columns, excelStyleIds)
    case "pdf":
      return valueList(sql, columns)
  }
}

/**
 * The rows of a report for `format`, in order: sorted first, formatted after. Formatting in the
 * same SELECT as the ORDER BY would make PostgreSQL format every row before sorting (and sort the
 * wide, formatted rows): the first row came after ~7 s for a million, during which the app had
 * nothing to write. Sorted in a subquery (`OFFSET 0` keeps it one) and formatted on the way out,
 * the first row comes after ~2.5 s and PostgreSQL formats while the app writes. The outer ORDER BY
 * restates the order on the subquery's own columns, which PostgreSQL knows to be sorted already
 * (no second sort).
 */
export const reportRows = (
  sql: SqlClient.SqlClient,
  format: ReportFormat,
  source: {
    readonly columns: ReadonlyArray<ReportColumn>
    readonly from: Statement.Fragment
    readonly order: ReadonlyArray<Statement.Fragment>
  },
  excelStyleIds: ReadonlyArray<number>
): Statement.Statement<unknown> => {
  const value = (i: number) => sql(`c${i}`)
  const key = (i: number) => sql(`k${i}`)
  const sorted = sql`SELECT ${
    sql.csv([
      ...source.columns.map((column, i) => sql`${column.sql} AS ${value(i)}`),
      ...source.order.map((expression, i) => sql`${expression} AS ${key(i)}`)
    ])
  } ${source.from} ORDER BY ${sql.csv(source.order)} OFFSET 0`
  const columns = source.columns.map((column, i) => ({ ...column, sql: sql`sorted.${value(i)}` }))
  return sql`SELECT ${reportSelect(sql, format, columns, excelStyleIds)} FROM (${sorted}) sorted
    ORDER BY ${sql.csv(source.order.map((_, i) => sql`sorted.${key(i)}`))}`
}

/** Values read as `valueList` gives them, typed for the writers in place: money as numbers. */
export const toValues = (columns: ReadonlyArray<Column>, row: Array<unknown>): Array<string | number | null> => {
  for (let i = 0; i < columns.length; i++) {
    if (columns[i]!.type === "money" && row[i] !== null) row[i] = Number(row[i])
  }
  return row as Array<string | number | null>
}

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
  /** `FROM … WHERE …`: the rows, whose columns' `sql` the layout names (`reportRows`). */
  readonly from: Statement.Fragment
  /** The rows' order: expressions, each ascending (nulls last). */
  readonly order: ReadonlyArray<Statement.Fragment>
  /** The totals written after the rows, in order. */
  readonly totals: ReadonlyArray<TotalsQuery>
}

const column = (key: string, label: string, type: Column["type"], chars: number): Column => ({ key, label, type, chars })

/** A column of the rows: `sql` gives its value (`reportSelect`), `plain` text needs no quoting. */
const cell = (key: string, label: string, type: Column["type"], chars: number, sql: Statement.Fragment, plain = false): ReportColumn => ({
  key, label, type, chars, sql, plain
})

/** The instants a range of clinic days covers: [start day 00:00, day after the end 00:00) in the zone. */
const rangeOf = (sql: SqlClient.SqlClient, zone: string, params: Pick<ReportParams, "start_date" | "end_date">) => ({
  from: dayStartIn(sql, params.start_date, zone),
  to: dayEndIn(sql, params.end_date, zone)
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

/** A cell of `valueList` (and of a totals row): integers as numbers, everything else as text; NULL when empty. */
const cellCheck = (column: Column): ((cell: unknown) => boolean) =>
  column.type === "integer" ? (cell) => cell === null || Number.isSafeInteger(cell) : (cell) => cell === null || typeof cell === "string"

/**
 * Rows as `reportRows` of `format` (or a totals query, as `pdf`) gives them: one text a row, or one
 * value a column. The same rows, or a defect naming the first row that is not.
 */
export const decodeRows = (format: ReportFormat, columns: ReadonlyArray<Column>) => {
  const checks = columns.map(cellCheck)
  const isRow = format === "pdf"
    ? (row: Array<unknown>) => {
      if (!Array.isArray(row) || row.length !== checks.length) return false
      for (let i = 0; i < checks.length; i++) if (!checks[i]!(row[i])) return false
      return true
    }
    : (row: Array<unknown>) => Array.isArray(row) && row.length === 1 && typeof row[0] === "string"
  return (rows: RawRows): Effect.Effect<RawRows> => {
    for (let i = 0; i < rows.length; i++) {
      if (!isRow(rows[i]!)) {
        return orDefect(Effect.fail(new ParseResult.ParseError({ issue: new ParseResult.Type(Schema.Unknown.ast, rows[i], `report row ${i} of the batch is not a ${format} row`) })))
      }
    }
    return Effect.succeed(rows)
  }
}

/** The rows a report will have (its `count` statement). */
export const decodeCount = (rows: RawRows): Effect.Effect<number> =>
  orDefect(Schema.decodeUnknown(Schema.Tuple(Schema.Tuple(Schema.Int)))(rows).pipe(Effect.map(([[total]]) => total)))

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
      const from = dayStartIn(sql, scope.start, zone)
      const to = dayEndIn(sql, scope.end, zone)
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
