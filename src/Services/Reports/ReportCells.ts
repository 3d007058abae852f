/**
 * The select list a report's cursor reads, by format. For csv, json and excel PostgreSQL formats
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
import type { SqlClient, Statement } from "@effect/sql"
import type { ReportFormat } from "../../Domain/Reports/Report.js"
import type { Column } from "./ReportWriters.js"

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
