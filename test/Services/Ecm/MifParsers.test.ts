import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import fc from "fast-check"
import type { RawRecord } from "../../../src/Domain/Ecm/Mif.js"
import ExcelJS from "exceljs"
import { readdirSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { mifLimits, readCsv, readXlsx, readXml } from "../../../src/Services/Ecm/MifParsers.js"
import { zipOf } from "../../support/zip.js"

const bytes = (s: string) => new TextEncoder().encode(s)
const all = async (batches: AsyncGenerator<ReadonlyArray<RawRecord>>) => {
  const out: Array<RawRecord> = []
  for await (const batch of batches) out.push(...batch)
  return out
}
const failure = async (batches: AsyncGenerator<ReadonlyArray<RawRecord>>) => {
  try {
    await all(batches)
    return undefined
  } catch (error) {
    return String(error)
  }
}

describe("CSV reader", () => {
  it("reads the same records whatever the piece size, with physical line numbers", async () => {
    const field = fc.string({ unit: fc.constantFrom("a", "b", ",", "\"", "\n", " ", "é", "😀"), maxLength: 8 })
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(field, field), { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 64 }), async (rows, pieceBytes) => {
      const quote = (s: string) => `"${s.replace(/"/g, "\"\"")}"`
      const text = "FIRST_NAME,LAST_NAME,DOB\n" + rows.map(([a, b]) => `${quote(a)},${quote(b)},01-01-2000`).join("\n") + "\n"
      const whole = await all(readCsv(bytes(text)))
      const pieces = await all(readCsv(bytes(text), { pieceBytes }))
      expect(pieces).toEqual(whole)
      expect(whole.map((r) => [r.cells.first_name, r.cells.last_name])).toEqual(rows)
      // Each record starts on the line after the previous one ended.
      let line = 2
      whole.forEach((r, i) => {
        expect(r.line).toBe(line)
        line += 1 + (rows[i]![0].split("\n").length - 1) + (rows[i]![1].split("\n").length - 1)
      })
    }), { numRuns: 200 })
  })

  it("skips blank lines but keeps counting them", async () => {
    const records = await all(readCsv(bytes("FIRST_NAME,LAST_NAME,DOB\n\na,b,c\n , ,\nd,e,f")))
    expect(records.map((r) => r.line)).toEqual([3, 5])
  })

  it("reports malformed files with their line", async () => {
    expect(await failure(readCsv(bytes("FIRST_NAME,LAST_NAME,DOB\na,b,c\nd,e,f,g\n"))))
      .toBe("MalformedFile: Invalid CSV format: line 3: 4 fields, but the header has 3")
    expect(await failure(readCsv(bytes("")))).toBe("MalformedFile: Invalid CSV format: line 1: the file has no header row")
    expect(await failure(readCsv(new Uint8Array([0x41, 0x2c, 0xc3, 0x28, 0x0a]), { pieceBytes: 2 }))).toBe("MalformedFile: Invalid CSV format: the file is not UTF-8 text")
  })
})

describe("hostile files", () => {
  it("a record longer than the limit fails as soon as it is seen, naming its line; one at the limit is read", async () => {
    const oneLine = ",".repeat(10_000_000)
    const started = performance.now()
    expect(await failure(readCsv(bytes(oneLine)))).toBe("MalformedFile: Invalid CSV format: line 1: the record is longer than 65,536 characters")
    expect(performance.now() - started).toBeLessThan(1_000)
    const header = "FIRST_NAME,LAST_NAME,DOB\n"
    /** A record of `length` characters and its newline. */
    const long = (length: number) => `a,b,"${"x".repeat(length - 6)}"\n`
    expect(long(mifLimits.recordChars).length).toBe(mifLimits.recordChars + 1)
    const [record] = await all(readCsv(bytes(header + long(mifLimits.recordChars)), { pieceBytes: 1000 }))
    expect(record?.cells.date_of_birth).toHaveLength(mifLimits.recordChars - 6)
    expect(await failure(readCsv(bytes(header + "a,b,c\n" + long(mifLimits.recordChars + 1) + "d,e,f\n"), { pieceBytes: 1000 })))
      .toBe("MalformedFile: Invalid CSV format: line 3: the record is longer than 65,536 characters")
    // Quoted newlines belong to the record; the line is where it starts.
    expect(await failure(readCsv(bytes(header + `a,b,"${"x\n".repeat(40_000)}"\n`))))
      .toBe("MalformedFile: Invalid CSV format: line 2: the record is longer than 65,536 characters")
  })

  it("a header of more than 1,000 columns is refused", async () => {
    expect(await failure(readCsv(bytes("FIRST_NAME,LAST_NAME,DOB" + ",X".repeat(998) + "\n"))))
      .toBe("MalformedFile: Invalid CSV format: line 1: the header has 1,001 columns (maximum is 1,000)")
    expect(await all(readCsv(bytes("FIRST_NAME,LAST_NAME,DOB" + ",X".repeat(997) + "\na,b,c\n")))).toHaveLength(1)
  })

  it("XML nested deeper than 32 elements is refused, naming the line", async () => {
    /** Members > Member > X, then `<a>`s (one per line) to `depth`. */
    const nested = (depth: number) =>
      "<Members><Member><DOB>01-01-2000</DOB><X>\n" + "<a>\n".repeat(depth - 3) + "</a>".repeat(depth - 3) + "</X></Member></Members>"
    expect(await all(readXml(bytes(nested(mifLimits.xmlDepth))))).toHaveLength(1)
    expect(await failure(readXml(bytes(nested(mifLimits.xmlDepth + 1)))))
      .toBe("MalformedFile: Invalid XML format: line 31: elements are nested more than 32 deep")
    // Self-closing elements, comments, CDATA and quoted `>` do not nest.
    const flat = `<!-- <a><a> --><Members x="b>">${"<Member><DOB/><![CDATA[<c><c>]]></Member>".repeat(40)}<e/><e/></Members>`
    expect(await all(readXml(bytes(flat)))).toHaveLength(40)
  })
})

describe("XML reader", () => {
  it("decodes the predefined entities and character references only", async () => {
    const text = "a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233; &#x1F600; &custom;"
    const [record] = await all(readXml(bytes(`<Members><Member><FIRST_NAME>${text}</FIRST_NAME></Member></Members>`)))
    expect(record?.cells.first_name).toBe("a & b <c> \"d\" 'e' é 😀 &custom;")
    expect(await failure(readXml(bytes("<Members><Member><FIRST_NAME>&#0;</FIRST_NAME></Member></Members>"))))
      .toBe("MalformedFile: Invalid XML format: line 1: malformed character entity.")
  })

  it("reads a member's fields: the first element naming a field, trimmed; nested or repeated elements are no value", async () => {
    const xml = "<Members>\n<Member><CIN>1</CIN><CIN>2</CIN><DOB> 01-01-2000 </DOB><DATE_OF_BIRTH>x</DATE_OF_BIRTH>" +
      "<LAST_NAME><b>q</b></LAST_NAME><FIRST_NAME/><![CDATA[ignored]]><Member><DOB>inner</DOB></Member></Member>\n</Members>"
    expect(await all(readXml(bytes(xml)))).toEqual([
      { line: 1, label: "Member 1", cells: { cin: null, date_of_birth: "01-01-2000", last_name: null, first_name: "" } }
    ])
  })

  it("streams: members come in batches as the text is read, and a fault late in the file still refuses it", async () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `<Member><DOB>01-01-2000</DOB><CIN>${i}</CIN></Member>`).join("\n")
    const batches: Array<number> = []
    for await (const batch of readXml(bytes(`<Members>${members(25)}</Members>`), 10, 64)) batches.push(batch.length)
    expect(batches).toEqual([10, 10, 5])
    expect(await failure(readXml(bytes(`<Members>${members(25)}\n<Member><DOB>x</Member></Members>`), 10, 64)))
      .toBe("MalformedFile: Invalid XML format: line 26: unexpected close tag.")
    expect(await failure(readXml(bytes(""))))
      .toBe("MalformedFile: Invalid XML format: line 1: document must contain a root element.")
  })

  it("finds Member elements at any depth, in any case, numbering them", async () => {
    const records = await all(readXml(bytes("<a><b><c><member><Dob>01-01-2000</Dob></member><MEMBER><DOB>02-02-2000</DOB></MEMBER></c></b></a>"), 1))
    expect(records).toEqual([
      { line: 1, label: "Member 1", cells: { date_of_birth: "01-01-2000" } },
      { line: 2, label: "Member 2", cells: { date_of_birth: "02-02-2000" } }
    ])
  })

  it("does not expand entities a DOCTYPE declares (billion laughs)", async () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
      `<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><Members><Member><FIRST_NAME>&lol3;</FIRST_NAME></Member></Members>`
    const [record] = await all(readXml(bytes(laughs)))
    expect(record?.cells.first_name).toBe("&lol3;")
  })
})

describe("XLSX reader", () => {
  /**
   * A workbook whose worksheet comes before its shared strings in the file (as exceljs' streaming
   * writer makes it): reading it, exceljs copies the worksheet to a temporary file.
   */
  const workbook = async (rows: ReadonlyArray<ReadonlyArray<string>>) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-xlsx-"))
    const file = path.join(dir, "members.xlsx")
    const writer = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true })
    const sheet = writer.addWorksheet("Members")
    for (const row of rows) sheet.addRow([...row]).commit()
    sheet.commit()
    await writer.commit()
    const bytes = new Uint8Array(await fs.readFile(file))
    await fs.rm(dir, { recursive: true })
    return bytes
  }
  /** exceljs' temporary files of this process (the `tmp` package's names). */
  const copies = () => readdirSync(os.tmpdir()).filter((name) => name.startsWith(`tmp-${process.pid}-`))

  it("refuses a workbook that unpacks to more than its bound (a zip bomb), whatever sizes the zip declares", async () => {
    const bomb = zipOf("xl/worksheets/sheet1.xml", Buffer.alloc(3 * 1024 * 1024, 0x20))
    expect(bomb.length).toBeLessThan(10 * 1024)
    expect(await failure(readXlsx(bomb, 5000, 2 * 1024 * 1024))).toBe("MalformedFile: Invalid XLSX format: the workbook unpacks to more than 2 MB")
    const members = await workbook([["FIRST_NAME", "LAST_NAME", "DOB"], ["Rosa", "Diaz", "07-09-1984"]])
    expect(await all(readXlsx(members, 5000, 64 * 1024))).toHaveLength(1)
  })

  it("leaves no copy of the worksheet behind, whether read through, refused, or left early", async () => {
    const members = await workbook([["FIRST_NAME", "LAST_NAME", "DOB"], ["Rosa", "Diaz", "07-09-1984"], ["Ana", "Lopez", "01-02-1990"]])
    expect(await all(readXlsx(members))).toHaveLength(2)
    expect(await failure(readXlsx(await workbook([["FIRST_NAME", "LAST_NAME"], ["Rosa", "Diaz"]]))))
      .toBe("MalformedFile: Invalid XLSX format: line 1: missing column DOB")
    // The importer stops at the first batch (an invalid record fails the import).
    for await (const batch of readXlsx(members, 1)) {
      expect(batch).toHaveLength(1)
      break
    }
    // exceljs removes a copy through callbacks, a moment after it is done with it: wait for that.
    await vi.waitFor(() => expect(copies()).toEqual([]), { timeout: 5_000 })
  })
})
