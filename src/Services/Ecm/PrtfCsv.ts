/**
 * The PRTF CSV writer (issue 16): papaparse's quoting (a cell with a comma, a quote, CR or LF is
 * quoted, quotes doubled), CRLF line ends, UTF-8 without a byte order mark, and CSV-injection
 * neutralised with `formulaStart` (src/Domain/Ecm/PrtfReport.ts): a text cell a spreadsheet would
 * run gets a leading `'` and quotes; numbers are written as numbers.
 */
import { Chunk, Effect, Stream } from "effect"
import Papa from "papaparse"
import { type Cell, formulaStart, prtfColumns } from "../../Domain/Ecm/PrtfReport.js"

const crlf = "\r\n"
const config: Papa.UnparseConfig = { newline: crlf, escapeFormulae: formulaStart, header: false }
const encoder = new TextEncoder()

/** Lines of the given rows, each ending with CRLF. */
export const csvLines = (rows: ReadonlyArray<ReadonlyArray<Cell>>): string =>
  rows.length === 0 ? "" : Papa.unparse(rows as Array<Array<Cell>>, config) + crlf

export const csvHeader = csvLines([prtfColumns])

/** Rows written as they arrive (a batch at a time); the file's bytes and its row count. */
export const writeCsv = <E>(rows: Stream.Stream<ReadonlyArray<Cell>, E>, batchSize = 1000) =>
  Effect.gen(function*() {
    let count = 0
    const chunks = yield* rows.pipe(
      Stream.grouped(batchSize),
      Stream.map((batch) => {
        count += Chunk.size(batch)
        return encoder.encode(csvLines(Chunk.toReadonlyArray(batch)))
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
