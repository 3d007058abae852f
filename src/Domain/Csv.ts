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

/** A text starting with an ASCII letter or digit cannot be a formula: no pattern test needed (most cells). */
const startsPlain = (text: string) => {
  const c = text.charCodeAt(0)
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

export const csvCell = (cell: CsvCell | undefined): string => {
  if (cell === null || cell === undefined) return ""
  if (typeof cell === "number") return String(cell)
  if (!startsPlain(cell) && formulaStart.test(cell)) return `"'${cell.replace(quotes, "\"\"")}"`
  return needsQuotes.test(cell) ? `"${cell.replace(quotes, "\"\"")}"` : cell
}

/** Lines of the given rows, each ending with CRLF (plain loops: report files write millions of cells). */
export const csvLines = (rows: ReadonlyArray<ReadonlyArray<CsvCell>>): string => {
  let text = ""
  for (const row of rows) {
    let line = row.length > 0 ? csvCell(row[0]) : ""
    for (let i = 1; i < row.length; i++) line += "," + csvCell(row[i])
    text += line + crlf
  }
  return text
}
