/**
 * The SQL twins of the app's text rules (sql/0025_report_cells.sql) give the same text as the rules
 * themselves: `report_csv_text` as `csvCell` (src/Domain/Csv.ts), `report_xml_text` as exceljs's
 * `xmlEncode`, on every three-character text of a tricky alphabet and on random longer ones; and
 * the rows `reportRows` formats read back as the writers' formats would, and pass `decodeRows`,
 * which stops a row of another shape.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { createRequire } from "node:module"
import { csvCell, csvLines } from "../../../src/Domain/Csv.js"
import { decodeRows, type ReportColumn, reportRows } from "../../../src/Services/Reports/ReportRowsRepo.js"
import { withReportSnapshot } from "../../../src/Services/Reports/ReportCursor.js"
import { TestSqlLive } from "../../support/database.js"

const { xmlEncode } = createRequire(import.meta.url)("exceljs/lib/utils/utils.js") as { xmlEncode: (text: string) => string }

// White space JavaScript's \s knows and the locale may not, formula starts, quotes, separators,
// XML's specials and forbidden controls (PostgreSQL text holds no NUL), a letter and an emoji.
const alphabet = [
  "a", "0", " ", "\t", "\r", "\n", "\v", "\u00a0", "\u3000", "\ufeff", "\u2028", "=", "+", "-", "@", "\"", ",", "'", "<", ">", "&",
  "\x01", "\x1f", "\x7f", "é", "😀"
]

const allOfLength3 = alphabet.flatMap((a) => alphabet.flatMap((b) => alphabet.map((c) => a + b + c)))
const randomTexts = fc.sample(fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }), 3000)

const twins = (texts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ csv: string; xml: string }>`SELECT report_csv_text(t) AS csv, report_xml_text(t) AS xml
      FROM unnest(${texts}::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n`).pipe(Effect.orDie)

layer(TestSqlLive)("report cells in SQL", (it) => {
  it.effect("report_csv_text and report_xml_text give csvCell's and exceljs's text, character for character", () =>
    Effect.gen(function*() {
      const texts = ["", ...allOfLength3, ...randomTexts]
      const rows = yield* twins(texts)
      expect(rows).toHaveLength(texts.length)
      expect(rows.map((row) => row.csv)).toEqual(texts.map((text) => csvCell(text)))
      expect(rows.map((row) => row.xml)).toEqual(texts.map((text) => xmlEncode(text)))
      // The alphabet reaches every branch: neutralised, quoted, escaped, dropped.
      expect(rows.some((row) => row.csv.startsWith("\"'"))).toBe(true)
      expect(rows.some((row) => row.xml.includes("&quot;"))).toBe(true)
    }))
})

layer(TestSqlLive)("report rows formatted in SQL", (it) => {
  it.effect("csv lines, JSON objects and excel cells of every column type, empty cells included", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const texts = ["", ...randomTexts.slice(0, 500)]
      const columns: ReadonlyArray<ReportColumn> = [
        { key: "text", label: "Text", type: "text", chars: 10, sql: sql`NULLIF(v.t, '')` },
        { key: "code", label: "Code", type: "text", chars: 4, sql: sql`'ok'::text`, plain: true },
        { key: "number", label: "Number", type: "integer", chars: 6, sql: sql`v.n::int` },
        { key: "day", label: "Day", type: "date", chars: 10, sql: sql`date '1970-01-01' + v.n::int` },
        { key: "money", label: "Money", type: "money", chars: 10, sql: sql`CASE WHEN v.n % 2 = 0 THEN (v.n * 1.5)::numeric(10, 2) END` }
      ]
      const read = (format: "csv" | "json" | "excel") =>
        withReportSnapshot(sql, (snapshot) =>
          snapshot.values(reportRows(sql, format, {
            columns,
            from: sql`FROM unnest(${texts}::text[]) WITH ORDINALITY AS v(t, n)`,
            order: [sql`v.n`]
          }, [0, 0, 0, 7, 9]))).pipe(
          Effect.map((rows) => rows.map((row) => row[0] as string)),
          Effect.orDie
        )
      const expected = texts.map((text, i) => {
        const n = i + 1
        const day = new Date(n * 86_400_000).toISOString().slice(0, 10)
        const money = n % 2 === 0 ? (n * 1.5).toFixed(2) : null
        return { text: text === "" ? null : text, n, day, money }
      })
      for (const format of ["csv", "json", "excel"] as const) {
        const rows = (yield* read(format)).map((text) => [text])
        expect(yield* decodeRows(format, columns)(rows)).toBe(rows)
      }
      const values = yield* withReportSnapshot(sql, (snapshot) =>
        snapshot.values(reportRows(sql, "pdf", { columns, from: sql`FROM unnest(${texts}::text[]) WITH ORDINALITY AS v(t, n)`, order: [sql`v.n`] }, []))
      ).pipe(Effect.orDie)
      expect(yield* decodeRows("pdf", columns)(values)).toBe(values)
      // Another shape is a defect: a number where text is due, a missing cell, two values for one text.
      const fails = (format: "csv" | "pdf", rows: ReadonlyArray<Array<unknown>>) =>
        Effect.map(Effect.exit(decodeRows(format, columns)(rows)), Exit.isFailure)
      expect(yield* fails("pdf", [values[0]!, ["x", 1, 2, "1970-01-02", null]])).toBe(true)
      expect(yield* fails("pdf", [values[0]!.slice(1)])).toBe(true)
      expect(yield* fails("csv", [["a", "b"]])).toBe(true)
      expect(yield* fails("csv", [[1]])).toBe(true)
      expect(yield* read("csv")).toEqual(expected.map((row) => csvLines([[row.text, "ok", row.n, row.day, row.money]])))
      expect((yield* read("json")).map((text) => JSON.parse(text))).toEqual(expected.map((row) => ({
        text: row.text, code: "ok", number: row.n, day: row.day, money: row.money === null ? null : Number(row.money)
      })))
      expect(yield* read("excel")).toEqual(expected.map((row) =>
        (row.text === null ? "<c/>" : `<c t="str"><v>${xmlEncode(row.text)}</v></c>`) +
        `<c t="str"><v>ok</v></c><c><v>${row.n}</v></c><c s="7"><v>${25569 + row.n}</v></c>` +
        (row.money === null ? "<c s=\"9\"/>" : `<c s="9"><v>${row.money}</v></c>`)
      ))
    }))
})
