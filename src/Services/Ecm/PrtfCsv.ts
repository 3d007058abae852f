/**
 * The PRTF CSV writer (issue 16): RFC 4180 quoting (a cell with a comma, a quote, CR or LF — or
 * leading/trailing spaces — is quoted, quotes doubled), CRLF line ends, UTF-8 without a byte order
 * mark, and CSV injection neutralised with `neutralised` (src/Domain/Ecm/PrtfReport.ts): a text
 * cell a spreadsheet would run gets a leading `'` and quotes; numbers are written as numbers.
 * Written by hand rather than with papaparse's `unparse`: 800,000 cells a report, and the tests
 * read every file back with papaparse's parser (test/Domain/Ecm/PrtfReport.test.ts).
 */
import { Chunk, Effect, Stream } from "effect"
import { type Cell, formulaStart, prtfColumns } from "../../Domain/Ecm/PrtfReport.js"

const crlf = "\r\n"
const encoder = new TextEncoder()
const needsQuotes = /[",\r\n]|^\s|\s$/
const quotes = /"/g

const cellText = (cell: Cell): string => {
  if (cell === null) return ""
  if (typeof cell === "number") return String(cell)
  if (formulaStart.test(cell)) return `"'${cell.replace(quotes, "\"\"")}"`
  return needsQuotes.test(cell) ? `"${cell.replace(quotes, "\"\"")}"` : cell
}

/** Lines of the given rows, each ending with CRLF. */
export const csvLines = (rows: ReadonlyArray<ReadonlyArray<Cell>>): string => {
  let text = ""
  for (const row of rows) text += row.map(cellText).join(",") + crlf
  return text
}

export const csvHeader = csvLines([prtfColumns])

/** Batches of rows written as they arrive: the file's bytes and its row count. */
export const writeCsv = <E, R>(batches: Stream.Stream<ReadonlyArray<ReadonlyArray<Cell>>, E, R>) =>
  Effect.gen(function*() {
    let count = 0
    const chunks = yield* batches.pipe(
      Stream.map((batch) => {
        count += batch.length
        return encoder.encode(csvLines(batch))
      }),
      Stream.prepend(Chunk.of(encoder.encode(csvHeader))),
      Stream.runCollect
    )
    const parts = Chunk.toReadonlyArray(chunks)
    const body = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0))
    let offset = 0
    for (const part of parts) {
      body.set(part, offset)
      offset += part.byteLength
    }
    return { body, rowCount: count }
  })
