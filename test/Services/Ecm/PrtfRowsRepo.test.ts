/** The PRTF rows' decoding: one row schema in the file's column order, checked cell by cell as the batches stream. */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { prtfColumns } from "../../../src/Domain/Ecm/PrtfReport.js"
import { PrtfRow, PrtfRowBatch } from "../../../src/Services/Ecm/PrtfRowsRepo.js"

const decode = Schema.decodeUnknownEither(PrtfRowBatch)
const decodesAsStruct = (cells: ReadonlyArray<unknown>) =>
  Either.isRight(Schema.decodeUnknownEither(PrtfRow)(Object.fromEntries(Object.keys(PrtfRow.fields).map((key, i) => [key, cells[i]]))))

const fields = Object.values(PrtfRow.fields).map((field) => Schema.is(field as Schema.Schema.AnyNoContext))

/** A valid row: texts, nulls where a column may be empty, counts. */
const row = (): Array<unknown> => fields.map((accepts) => (accepts(7) ? 7 : accepts(null) ? null : "text"))

describe("PRTF rows", () => {
  it("has one field per column of the file", () => {
    expect(Object.keys(PrtfRow.fields)).toHaveLength(prtfColumns.length)
  })

  it("accepts a batch of valid rows unchanged, and an empty batch", () => {
    const batch = [row(), row()]
    const decoded = decode(batch)
    expect(Either.isRight(decoded) && decoded.right).toBe(batch)
    expect(Either.isRight(decode([]))).toBe(true)
  })

  it("refuses what the row schema refuses, cell by cell: wrong type, null in a required column, a fraction, a short row", () => {
    const columns = Object.keys(PrtfRow.fields)
    const at = (name: string) => columns.indexOf(name)
    const cases: Array<[string, number, unknown]> = [
      ["count as text", at("sms"), "3"],
      ["fractional count", at("call_minutes"), 1.5],
      ["null last name", at("last_name"), null],
      ["number as text column", at("cin"), 12],
      ["undefined cell", at("produced_on"), undefined]
    ]
    for (const [what, index, value] of cases) {
      const cells = row()
      cells[index] = value
      expect(decodesAsStruct(cells), what).toBe(false)
      expect(Either.isLeft(decode([row(), cells])), what).toBe(true)
    }
    expect(Either.isLeft(decode([row().slice(1)]))).toBe(true)
    expect(Either.isLeft(decode([{ ...row() }]))).toBe(true)
  })
})
