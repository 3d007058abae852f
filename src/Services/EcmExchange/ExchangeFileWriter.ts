/**
 * Writes a return file into a local file, batch by batch, as its exchange profile says: CSV with
 * the profile's delimiter (RFC 4180 quoting, CRLF, formulas neutralised, UTF-8 without a byte
 * order mark), or XLSX through exceljs's streaming writer (one sheet, header row, text and numbers
 * as typed cells). exceljs is loaded with the first XLSX file, not at start-up.
 */
import { once } from "node:events"
import { createWriteStream } from "node:fs"
import { type Cell, delimitedLines, type ExchangeProfile, headerRow } from "../../Domain/EcmExchange/Files.js"

export interface FileWriter {
  readonly write: (rows: ReadonlyArray<ReadonlyArray<Cell>>) => Promise<void>
  readonly finish: () => Promise<void>
  /** Stops writing after a failure (the caller removes the file). */
  readonly abort: () => void
}

export const contentTypeOf = (profile: ExchangeProfile) =>
  profile.file_format === "xlsx"
    ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    : profile.delimiter === "tab"
    ? "text/tab-separated-values; charset=utf-8"
    : "text/csv; charset=utf-8"

const csvWriter = async (profile: ExchangeProfile, path: string): Promise<FileWriter> => {
  const out = createWriteStream(path)
  await once(out, "open")
  const put = async (text: string) => {
    if (!out.write(text)) await once(out, "drain")
  }
  await put(delimitedLines([headerRow(profile)], profile.delimiter))
  return {
    write: (rows) => put(delimitedLines(rows, profile.delimiter)),
    finish: () => new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve()))),
    abort: () => out.destroy()
  }
}

const xlsxWriter = async (profile: ExchangeProfile, path: string): Promise<FileWriter> => {
  const { default: ExcelJS } = await import("exceljs")
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: false, useSharedStrings: false })
  const sheet = workbook.addWorksheet("Sheet1")
  sheet.addRow(headerRow(profile)).commit()
  return {
    write: async (rows) => {
      for (const row of rows) sheet.addRow(row.map((cell) => cell ?? null)).commit()
    },
    finish: async () => {
      sheet.commit()
      await workbook.commit()
    },
    abort: () => {}
  }
}

/** A writer of the profile's format into `path` (header written). */
export const openFileWriter = (profile: ExchangeProfile, path: string): Promise<FileWriter> =>
  profile.file_format === "xlsx" ? xlsxWriter(profile, path) : csvWriter(profile, path)
