/**
 * The PRTF CSV writer: the shared CSV text of src/Domain/Csv.ts (RFC 4180 quoting, CRLF,
 * formulas neutralised, numbers as numbers), UTF-8 without a byte order mark.
 * Written by hand rather than with papaparse's `unparse`: 800,000 cells a report, and the tests
 * read every file back with papaparse's parser (test/Domain/Ecm/PrtfReport.test.ts).
 */
import { Chunk, Effect, Stream } from "effect"
import { csvLines } from "../../Domain/Csv.js"
import { type Cell, prtfColumns } from "../../Domain/Ecm/PrtfReport.js"

export { csvLines }

const encoder = new TextEncoder()

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
