/**
 * CSV text shared by every CSV the service writes (PRTF reports, admin report files): RFC 4180
 * quoting (a cell with a comma, a quote, CR or LF — or leading/trailing spaces — is quoted, quotes
 * doubled), CRLF line ends, and CSV injection neutralised: a text cell a spreadsheet would run as a
 * formula gets a leading `'` and quotes. Numbers are written as numbers, never touched.
 */

/** A cell: text (neutralised against formulas when written), a number, or empty. */
export type CsvCell = string | number | null

/**
 * A text cell a spreadsheet would run as a formula: starts with `=`, `+`, `-` or `@` (after any
 * spaces), or with a tab or carriage return (OWASP's CSV-injection advice).
 */
export const formulaStart = /^\s*[=+\-@]|^[\t\r]/
export const neutralised = (text: string) => (formulaStart.test(text) ? `'${text}` : text)

const crlf = "\r\n"
const needsQuotes = /[",\r\n]|^\s|\s$/
const quotes = /"/g

export const csvCell = (cell: CsvCell): string => {
  if (cell === null) return ""
  if (typeof cell === "number") return String(cell)
  if (formulaStart.test(cell)) return `"'${cell.replace(quotes, "\"\"")}"`
  return needsQuotes.test(cell) ? `"${cell.replace(quotes, "\"\"")}"` : cell
}

/** Lines of the given rows, each ending with CRLF. */
export const csvLines = (rows: ReadonlyArray<ReadonlyArray<CsvCell>>): string => {
  let text = ""
  for (const row of rows) text += row.map(csvCell).join(",") + crlf
  return text
}
