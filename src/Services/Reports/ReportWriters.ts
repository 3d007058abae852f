/**
 * Report files written row batch by row batch into a local file (then streamed into the
 * ObjectStore): never the whole report in memory. One table per report, typed columns, and totals
 * sections after it.
 * - csv: the table only (header + rows), the shared CSV text of src/Domain/Csv.ts (RFC 4180,
 *   formulas neutralised), UTF-8 without a byte order mark.
 * - json: `{report: {title, generated_at, parameters}, columns, rows: [{key: value}], totals}`.
 * - excel: exceljs's streaming `WorkbookWriter`; sheet "Report" (typed cells: dates as dates,
 *   money as numbers with a currency format), sheet "Summary" (parameters and totals).
 * - pdf: pdfkit (streamed to the file): title, parameters, the table in a monospaced font with the
 *   header repeated on every page, then the totals.
 * exceljs and pdfkit are loaded with the first file of their format, not at start-up.
 */
import { once } from "node:events"
import { createWriteStream, type WriteStream } from "node:fs"
import { csvLines } from "../../Domain/Csv.js"
import type { ReportFormat } from "../../Domain/Reports/Report.js"
import type ExcelJS from "exceljs"

export type ColumnType = "text" | "integer" | "date" | "money"

export interface Column {
  readonly key: string
  readonly label: string
  readonly type: ColumnType
  /** Characters the PDF gives the column. */
  readonly chars: number
}

/** A cell: text, a number (integer or dollars), a `YYYY-MM-DD` day for date columns, or empty. */
export type Value = string | number | null
export type Row = ReadonlyArray<Value>

export interface Section {
  readonly title: string
  readonly columns: ReadonlyArray<Column>
  readonly rows: ReadonlyArray<Row>
}

export interface ReportLayout {
  readonly title: string
  readonly generatedAt: Date
  readonly parameters: ReadonlyArray<readonly [string, string]>
  readonly columns: ReadonlyArray<Column>
}

export interface ReportFileWriter {
  /** Appends rows; resolves once the file can take more (backpressure). */
  readonly write: (rows: ReadonlyArray<Row>) => Promise<void>
  /** Writes the totals and closes the file. */
  readonly finish: (sections: ReadonlyArray<Section>) => Promise<void>
  /** Stops writing (the caller deletes the file). */
  readonly abort: () => void
}

const moneyFormat = "\"$\"#,##0.00"
const dateFormat = "yyyy-mm-dd"

const fileStream = async (filePath: string): Promise<WriteStream> => {
  const out = createWriteStream(filePath)
  await once(out, "open")
  return out
}

const writeText = async (out: WriteStream, text: string) => {
  if (!out.write(text)) await once(out, "drain")
}

const closeStream = async (out: WriteStream) => {
  out.end()
  await once(out, "finish")
}

const csvWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const out = await fileStream(filePath)
  await writeText(out, csvLines([layout.columns.map((c) => c.label)]))
  return {
    write: (rows) => writeText(out, csvLines(rows)),
    finish: () => closeStream(out),
    abort: () => out.destroy()
  }
}

const objectOf = (columns: ReadonlyArray<Column>, row: Row) => {
  const object: Record<string, Value> = {}
  columns.forEach((column, i) => {
    object[column.key] = row[i] ?? null
  })
  return object
}

const jsonWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const out = await fileStream(filePath)
  const report = { title: layout.title, generated_at: layout.generatedAt.toISOString(), parameters: Object.fromEntries(layout.parameters) }
  const columns = layout.columns.map((c) => ({ key: c.key, label: c.label, type: c.type }))
  await writeText(out, `{"report":${JSON.stringify(report)},"columns":${JSON.stringify(columns)},"rows":[`)
  let first = true
  return {
    write: (rows) => {
      let text = ""
      for (const row of rows) {
        text += (first ? "\n" : ",\n") + JSON.stringify(objectOf(layout.columns, row))
        first = false
      }
      return writeText(out, text)
    },
    finish: async (sections) => {
      const totals = sections.map((s) => ({ title: s.title, rows: s.rows.map((row) => objectOf(s.columns, row)) }))
      await writeText(out, `\n],"totals":${JSON.stringify(totals)}}\n`)
      await closeStream(out)
    },
    abort: () => out.destroy()
  }
}

/** A typed spreadsheet cell: days become dates (midnight UTC, shown as a day), money and counts numbers. */
const excelValue = (type: ColumnType, value: Value): string | number | Date | null => {
  if (value === null) return null
  if (type === "date" && typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) return new Date(`${value}T00:00:00.000Z`)
  return value
}

const excelFormat = (type: ColumnType): string | undefined =>
  type === "money" ? moneyFormat : type === "date" ? dateFormat : type === "integer" ? "0" : undefined

/** Lets the zip stream behind exceljs drain what the rows produced. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve))

const excelWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const { default: ExcelJS } = await import("exceljs")
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: filePath, useStyles: true, useSharedStrings: false })
  workbook.created = layout.generatedAt
  const sheet = workbook.addWorksheet("Report", { views: [{ state: "frozen", ySplit: 1 }] })
  sheet.columns = layout.columns.map((column) => ({ key: column.key, width: Math.max(column.chars, column.label.length) + 2 }))
  // One style object per column, set on each cell: exceljs caches a style by object identity, where
  // a column style would be merged into a new object per cell and serialised again (2–3× slower).
  const styleOf = (type: ColumnType): Partial<ExcelJS.Style> => {
    const numFmt = excelFormat(type)
    return numFmt === undefined ? {} : { numFmt }
  }
  const styles = layout.columns.map((column) => styleOf(column.type))
  const header = sheet.addRow(layout.columns.map((c) => c.label))
  header.font = { bold: true }
  header.commit()
  const typed = (columns: ReadonlyArray<Column>, row: Row) => columns.map((column, i) => excelValue(column.type, row[i] ?? null))
  return {
    write: async (rows) => {
      for (const values of rows) {
        const row = sheet.addRow(typed(layout.columns, values))
        for (let i = 0; i < styles.length; i++) row.getCell(i + 1).style = styles[i]!
        row.commit()
      }
      await yieldToIo()
    },
    finish: async (sections) => {
      sheet.commit()
      const summary = workbook.addWorksheet("Summary")
      summary.columns = [{ width: 28 }, { width: 18 }, { width: 18 }, { width: 18 }, { width: 18 }]
      const title = summary.addRow([layout.title])
      title.font = { bold: true, size: 14 }
      title.commit()
      summary.addRow(["Generated at", layout.generatedAt]).commit()
      for (const [name, value] of layout.parameters) summary.addRow([name, value]).commit()
      for (const section of sections) {
        summary.addRow([]).commit()
        const heading = summary.addRow([section.title])
        heading.font = { bold: true }
        heading.commit()
        const labels = summary.addRow(section.columns.map((c) => c.label))
        labels.font = { bold: true }
        labels.commit()
        for (const values of section.rows) {
          const row = summary.addRow(typed(section.columns, values))
          section.columns.forEach((column, i) => {
            const numFmt = excelFormat(column.type)
            if (numFmt !== undefined) row.getCell(i + 1).numFmt = numFmt
          })
          row.commit()
        }
      }
      summary.commit()
      await workbook.commit()
    },
    abort: () => {
      // The workbook has no abort: its zip stream is left to the garbage collector; the caller deletes the file.
    }
  }
}

const pdfText = (type: ColumnType, value: Value): string => {
  if (value === null) return ""
  if (type === "money" && typeof value === "number") return value.toFixed(2)
  return String(value)
}

/** A cell padded (numbers to the right) or cut to its width, with one space after it. */
const fit = (text: string, chars: number, right: boolean) => {
  const flat = text.replace(/[\r\n\t]+/g, " ")
  const cut = flat.length > chars ? `${flat.slice(0, Math.max(0, chars - 1))}…` : flat
  return (right ? cut.padStart(chars) : cut.padEnd(chars)) + " "
}

const pdfLine = (columns: ReadonlyArray<Column>, row: ReadonlyArray<Value>) =>
  columns.map((column, i) => fit(pdfText(column.type, row[i] ?? null), column.chars, column.type === "money" || column.type === "integer")).join("")

const pdfLabels = (columns: ReadonlyArray<Column>) =>
  columns.map((column) => fit(column.label, column.chars, column.type === "money" || column.type === "integer")).join("")

const pdfWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const { default: PDFDocument } = await import("pdfkit")
  const out = await fileStream(filePath)
  const margin = 36
  const doc = new PDFDocument({ size: "LETTER", layout: "landscape", margin, info: { Title: layout.title, CreationDate: layout.generatedAt } })
  doc.pipe(out)
  const characters = layout.columns.reduce((n, c) => n + c.chars + 1, 0)
  const usable = doc.page.width - 2 * margin
  // Courier's glyphs are 0.6 em wide: the largest size (at most 8 pt) that fits every column.
  const fontSize = Math.min(8, Math.floor((usable / (characters * 0.6)) * 10) / 10)
  const lineHeight = fontSize * 1.25
  const bottom = () => doc.page.height - margin - lineHeight
  const header = () => {
    doc.font("Courier-Bold").fontSize(fontSize).text(pdfLabels(layout.columns), margin, doc.y, { lineBreak: false })
    doc.y += lineHeight
    doc.font("Courier")
  }
  doc.font("Helvetica-Bold").fontSize(16).text(layout.title)
  doc.font("Helvetica").fontSize(9).text(`Generated at ${layout.generatedAt.toISOString()}`)
  for (const [name, value] of layout.parameters) doc.text(`${name}: ${value}`)
  doc.moveDown()
  header()
  const line = (text: string) => {
    if (doc.y > bottom()) {
      doc.addPage()
      header()
    }
    doc.text(text, margin, doc.y, { lineBreak: false })
    doc.y += lineHeight
  }
  const drained = async () => {
    // pdfkit pushes without waiting for the file: wait while its buffer holds more than 1 MB.
    while (doc.readableLength > 1024 * 1024) {
      if (out.writableNeedDrain) await once(out, "drain")
      else await yieldToIo()
    }
  }
  return {
    write: async (rows) => {
      for (const row of rows) line(pdfLine(layout.columns, row))
      await drained()
    },
    finish: async (sections) => {
      for (const section of sections) {
        if (doc.y > bottom() - 3 * lineHeight) doc.addPage()
        doc.y += lineHeight
        doc.font("Helvetica-Bold").fontSize(11).text(section.title, margin, doc.y)
        doc.font("Courier-Bold").fontSize(fontSize).text(pdfLabels(section.columns), margin, doc.y, { lineBreak: false })
        doc.y += lineHeight
        doc.font("Courier")
        for (const row of section.rows) line(pdfLine(section.columns, row))
      }
      doc.end()
      await once(out, "finish")
    },
    abort: () => {
      doc.unpipe(out)
      out.destroy()
    }
  }
}

export const openReportWriter = (format: ReportFormat, filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  switch (format) {
    case "csv":
      return csvWriter(filePath, layout)
    case "json":
      return jsonWriter(filePath, layout)
    case "excel":
      return excelWriter(filePath, layout)
    case "pdf":
      return pdfWriter(filePath, layout)
  }
}
