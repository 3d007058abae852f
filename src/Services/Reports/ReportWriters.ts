/**
 * Report files written row batch by row batch into a local file (then streamed into the
 * ObjectStore): never the whole report in memory. One table per report, typed columns, and totals
 * sections after it. csv, json and excel rows come formatted by PostgreSQL (ReportRowsRepo.ts).
 * - csv: the table only (header + rows), the shared CSV text of src/Domain/Csv.ts (RFC 4180,
 *   formulas neutralised), UTF-8 without a byte order mark.
 * - json: `{report: {title, generated_at, parameters}, columns, rows: [{key: value}], totals}`.
 * - excel: exceljs's streaming `WorkbookWriter`; sheet "Report" (typed cells: dates as dates,
 *   money as numbers with a currency format), sheet "Summary" (parameters and totals).
 * - pdf: pdfkit (streamed to the file): title, parameters, the table in a monospaced font with the
 *   header repeated on every page, then the totals. A cell Courier cannot draw (beyond WinAnsi:
 *   Łukasz, 王小明, محمد) is drawn on its own within its column by src/Services/Pdf/PdfText.ts.
 * exceljs and pdfkit are loaded with the first file of their format, not at start-up.
 */
import { once } from "node:events"
import { createWriteStream, type WriteStream } from "node:fs"
import { csvLines } from "../../Domain/Csv.js"
import type { ReportFormat } from "../../Domain/Reports/Report.js"
import { toValues } from "./ReportRowsRepo.js"
import type { RawRows } from "./ReportCursor.js"
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
  /** The style ids the excel cells' XML names, by column (ReportRowsRepo.ts); empty for other formats. */
  readonly excelStyleIds: ReadonlyArray<number>
  /**
   * Appends rows as the cursor reads `reportRows` of the format (ReportRowsRepo.ts): one finished
   * text a row, or a PDF row's values. Resolves once the file can take more (backpressure).
   */
  readonly write: (rows: RawRows) => Promise<void>
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

/**
 * Rows a string written: tens of kB, collected young, where a whole batch's text (hundreds of kB)
 * would be a large object, left for the old generation's collector (and its Buffer for the file too).
 */
const rowsPerWrite = 256

/** One-text rows (`reportRows`), each as `render` gives it, joined `rowsPerWrite` rows a string. */
function* rowTextChunks(rows: RawRows, render: (text: string) => string): Generator<string> {
  for (let from = 0; from < rows.length; from += rowsPerWrite) {
    const to = Math.min(rows.length, from + rowsPerWrite)
    let chunk = ""
    for (let i = from; i < to; i++) chunk += render(rows[i]![0] as string)
    yield chunk
  }
}

/** Writes one-text rows into the file, each as `render` gives it. */
const writeRowTexts = async (out: WriteStream, rows: RawRows, render: (text: string) => string) => {
  for (const chunk of rowTextChunks(rows, render)) await writeText(out, chunk)
}

const closeStream = async (out: WriteStream) => {
  out.end()
  await once(out, "finish")
}

const csvWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const out = await fileStream(filePath)
  await writeText(out, csvLines([layout.columns.map((c) => c.label)]))
  return {
    excelStyleIds: [],
    write: (lines) => writeRowTexts(out, lines, (line) => line),
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
    excelStyleIds: [],
    write: (objects) =>
      writeRowTexts(out, objects, (object) => {
        const separator = first ? "\n" : ",\n"
        first = false
        return separator + object
      }),
    finish: async (sections) => {
      const totals = sections.map((s) => ({ title: s.title, rows: s.rows.map((row) => objectOf(s.columns, row)) }))
      await writeText(out, `\n],"totals":${JSON.stringify(totals)}}\n`)
      await closeStream(out)
    },
    abort: () => out.destroy()
  }
}

const isDay = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text)

/** A typed spreadsheet cell: days become dates (midnight UTC, shown as a day), money and counts numbers. */
const excelValue = (type: ColumnType, value: Value): string | number | Date | null => {
  if (value === null) return null
  if (type === "date" && typeof value === "string" && isDay(value)) return new Date(`${value}T00:00:00.000Z`)
  return value
}

const excelFormat = (type: ColumnType): string | undefined =>
  type === "money" ? moneyFormat : type === "date" ? dateFormat : type === "integer" ? "0" : undefined

/** Lets the zip stream behind exceljs drain what the rows produced. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * What the table rows' XML needs of exceljs 4.4's streaming writer (its last release, pinned by the
 * lock file), beyond its typings: the worksheet's XML stream and the workbook's style table.
 */
interface WorksheetWriterInternals {
  readonly stream: {
    readonly write: (xml: string) => unknown
    /**
     * Where the sheet's XML goes: the zip's entry, a readable-stream PassThrough fed without regard
     * to backpressure (its `_writableState` is what every Writable implementation keeps).
     */
    readonly pipes: ReadonlyArray<NodeJS.WritableStream & { readonly _writableState?: { readonly needDrain: boolean } }>
  }
}
interface WorkbookWriterInternals {
  readonly styles: { readonly addStyleModel: (style: Partial<ExcelJS.Style>, cellType: number) => number }
}

/** exceljs's `ValueType`s of the cells the table holds. */
const excelValueType = { null: 0, number: 2, string: 3, date: 4 } as const

/** The exceljs value type of a column's cells (only styles without a number format depend on it). */
const excelCellType = (type: ColumnType) => (type === "date" ? excelValueType.date : type === "text" ? excelValueType.string : excelValueType.number)

const excelWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const { default: ExcelJS } = await import("exceljs")
  // Level 1 deflate: the rows' XML is repetitive, so it compresses almost as well as at level 6, faster.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: filePath, useStyles: true, useSharedStrings: false, zip: { zlib: { level: 1, chunkSize: 256 * 1024 } } })
  workbook.created = layout.generatedAt
  const sheet = workbook.addWorksheet("Report", { views: [{ state: "frozen", ySplit: 1 }] })
  sheet.columns = layout.columns.map((column) => ({ key: column.key, width: Math.max(column.chars, column.label.length) + 2 }))
  const styleOf = (type: ColumnType): Partial<ExcelJS.Style> => {
    const numFmt = excelFormat(type)
    return numFmt === undefined ? {} : { numFmt }
  }
  // The header goes through exceljs (it also opens the sheet's data); the rows through excelRowsXml.
  const header = sheet.addRow(layout.columns.map((c) => c.label))
  header.font = { bold: true }
  header.commit()
  // One style a column, registered as exceljs registers a cell's style (in column order, as the
  // first row's cells would be): the ids its style table gives.
  const { styles } = workbook as unknown as WorkbookWriterInternals
  const styleIds = layout.columns.map((column) => styles.addStyleModel(styleOf(column.type), excelCellType(column.type)))
  const sheetXml = (sheet as unknown as WorksheetWriterInternals).stream
  let nextRowNumber = 2
  const typed = (columns: ReadonlyArray<Column>, row: Row) => columns.map((column, i) => excelValue(column.type, row[i] ?? null))
  return {
    excelStyleIds: styleIds,
    write: async (cells) => {
      // The cells come without addresses: the row's first cell (`<c…`) gets its own.
      const rowXml = (rowCells: string) => {
        const number = nextRowNumber++
        return `<row r="${number}"><c r="A${number}"${rowCells.slice(2)}</row>`
      }
      for (const xml of rowTextChunks(cells, rowXml)) sheetXml.write(xml)
      // The rows' XML waits in the zip's entry until deflated: wait while it holds more than it wants.
      for (const zipEntry of sheetXml.pipes) if (zipEntry._writableState?.needDrain === true) await once(zipEntry, "drain")
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

const isNumeric = (column: Column) => column.type === "money" || column.type === "integer"

const pdfLine = (columns: ReadonlyArray<Column>, row: ReadonlyArray<Value>) =>
  columns.map((column, i) => fit(pdfText(column.type, row[i] ?? null), column.chars, isNumeric(column))).join("")

const pdfLabels = (columns: ReadonlyArray<Column>) =>
  columns.map((column) => fit(column.label, column.chars, isNumeric(column))).join("")

/** What the table lines' operators need of pdfkit 0.20.2 (pinned) beyond its typings: the current font. */
interface PdfDocumentInternals {
  readonly _font: {
    readonly id: string
    readonly ascender: number
    readonly font: { readonly encodeText: (text: string) => ReadonlyArray<string> }
  }
  readonly _fontSize: number
  readonly page: { readonly height: number; readonly fonts: Record<string, unknown> }
}

/** pdfkit's number formatting in content streams. */
const pdfNumber = (n: number) => Math.round(n * 1e6) / 1e6

/**
 * The operators pdfkit's `text(line, x, y, {lineBreak: false})` adds for one line in a standard
 * font without kerning (Courier), byte for byte, or null when the font is not on the page yet, or
 * undefined when the line holds a character the font cannot draw (`isStandardText`).
 * pdfkit measures every glyph's width and kerning pair to place each line (about 150 µs a table
 * line, minutes for a million rows); a monospaced line needs neither. Glyph codes are pdfkit's own
 * (its WinAnsi encoding), cached by character.
 */
const pdfLineOps = (document: object, isStandardText: (text: string) => boolean) => {
  const doc = document as unknown as PdfDocumentInternals
  // "" for a character the font cannot draw: the check costs the table lines nothing beyond the lookup they make anyway.
  const codes = new Map<string, Map<number, string>>()
  return (text: string, x: number, y: number): string | null | undefined => {
    const font = doc._font
    if (doc.page.fonts[font.id] === undefined) return null
    let fontCodes = codes.get(font.id)
    if (fontCodes === undefined) codes.set(font.id, fontCodes = new Map())
    let hex = ""
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      let glyph = fontCodes.get(code)
      if (glyph === undefined) fontCodes.set(code, glyph = isStandardText(text[i]!) ? font.font.encodeText(text[i]!).join("") : "")
      if (glyph === "") return undefined
      hex += glyph
    }
    const height = doc.page.height
    const baseline = height - y - (font.ascender / 1000) * doc._fontSize
    return `q\n1 0 0 -1 0 ${pdfNumber(height)} cm\nBT\n1 0 0 1 ${pdfNumber(x)} ${pdfNumber(baseline)} Tm\n/${font.id} ${
      pdfNumber(doc._fontSize)
    } Tf\n[<${hex}> 0] TJ\nET\nQ`
  }
}

/** The table's cells Courier draws as they are, and the others (blank in the line), with their column's offset in characters. */
const splitLine = (columns: ReadonlyArray<Column>, row: ReadonlyArray<Value>, isStandardText: (text: string) => boolean) => {
  const others: Array<{ readonly text: string; readonly offset: number; readonly chars: number }> = []
  let offset = 0
  const line = columns.map((column, i) => {
    const text = pdfText(column.type, row[i] ?? null)
    const cell = { text, offset, chars: column.chars }
    offset += column.chars + 1
    if (isStandardText(text)) return fit(text, column.chars, isNumeric(column))
    others.push(cell)
    return fit("", column.chars, false)
  }).join("")
  return { line, others }
}

const pdfWriter = async (filePath: string, layout: ReportLayout): Promise<ReportFileWriter> => {
  const { default: PDFDocument } = await import("pdfkit")
  const { drawLine, isStandardText, writeParagraph } = await import("../Pdf/PdfText.js")
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
  for (const [name, value] of layout.parameters) {
    const text = `${name}: ${value}`
    if (isStandardText(text)) doc.text(text)
    else writeParagraph(doc, text, 9)
  }
  doc.moveDown()
  header()
  const lineOps = pdfLineOps(doc, isStandardText)
  // Table lines whose operators wait to be added to the page at once (before anything else is drawn).
  let pending: Array<string> = []
  const flush = () => {
    if (pending.length > 0) doc.addContent(pending.join("\n"))
    pending = []
  }
  /** Draws a line in Courier, or answers false (drawing nothing) when a character of it is beyond Courier's. */
  const line = (text: string): boolean => {
    if (doc.y > bottom()) {
      flush()
      doc.addPage()
      header()
    }
    // The page's first line in the font goes through pdfkit (which adds the font to the page).
    const ops = lineOps(text, margin, doc.y)
    if (ops === undefined) return false
    if (ops === null) {
      if (!isStandardText(text)) return false
      doc.text(text, margin, doc.y, { lineBreak: false })
    } else {
      pending.push(ops)
    }
    doc.y += lineHeight
    return true
  }
  const charWidth = fontSize * 0.6
  // Courier's baseline below the line's top (its ascender, 629/1000 em).
  const baseline = fontSize * 0.629
  /** A table row: one Courier line, and any cell Courier cannot draw on its own. */
  const row = (columns: ReadonlyArray<Column>, values: ReadonlyArray<Value>) => {
    if (line(pdfLine(columns, values))) return
    const { line: standard, others } = splitLine(columns, values, isStandardText)
    line(standard)
    // The line's operators first, so that the content (what copying and screen readers follow) keeps the rows' order.
    flush()
    const top = doc.y - lineHeight
    for (const cell of others) {
      drawLine(doc, cell.text.replace(/[\r\n\t]+/g, " "), margin + cell.offset * charWidth, top + baseline, fontSize, cell.chars * charWidth)
    }
  }
  const drained = async () => {
    // pdfkit pushes without waiting for the file: wait while its buffer holds more than 1 MB.
    while (doc.readableLength > 1024 * 1024) {
      if (out.writableNeedDrain) await once(out, "drain")
      else await yieldToIo()
    }
  }
  return {
    excelStyleIds: [],
    write: async (rows) => {
      for (const values of rows) row(layout.columns, toValues(layout.columns, values))
      flush()
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
        for (const values of section.rows) row(section.columns, values)
        flush()
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
