import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { RawRecord } from "../../../src/Domain/Ecm/Mif.js"
import { decodeXmlText, readCsv, readXml } from "../../../src/Services/Ecm/MifParsers.js"

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

describe("XML reader", () => {
  it("decodes the predefined entities and character references only", () => {
    expect(decodeXmlText("a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233; &#x1F600; &custom; &#0; &#xD800;"))
      .toBe("a & b <c> \"d\" 'e' é 😀 &custom; &#0; &#xD800;")
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
