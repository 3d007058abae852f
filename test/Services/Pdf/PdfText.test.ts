/**
 * The text writer of every language, drawn into a pdfkit document and read back with pdf.js: the
 * fast-path test, placeholders, bidi order, Arabic shaping, cutting to a width, wrapping.
 */
import { describe, expect, it } from "@effect/vitest"
import { getDocument, OPS } from "pdfjs-dist/legacy/build/pdf.mjs"
import PDFDocument from "pdfkit"
import { drawLine, isStandardText, writeParagraph } from "../../../src/Services/Pdf/PdfText.js"
import { pdfItems } from "../../support/pdfText.js"

/** A one-page PDF drawn by `draw`, as bytes. */
const pdf = (draw: (doc: PDFKit.PDFDocument) => void) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const doc = new PDFDocument({ size: "LETTER", margin: 54 })
    const chunks: Array<Buffer> = []
    doc.on("data", (chunk: Buffer) => chunks.push(chunk))
    doc.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))))
    doc.on("error", reject)
    draw(doc)
    doc.end()
  })

/** The text of each line drawn at the baselines, as pdf.js reads it (pieces joined by a space). */
const linesOf = async (bytes: Uint8Array) => {
  const items = await pdfItems(bytes)
  const lines = new Map<number, Array<{ x: number; str: string }>>()
  for (const item of items) {
    const y = Math.round(item.y)
    lines.set(y, [...(lines.get(y) ?? []), item])
  }
  return [...lines.entries()].sort(([a], [b]) => b - a).map(([, pieces]) => pieces.sort((a, b) => a.x - b.x).map((p) => p.str).join(" "))
}

/** The glyphs each text-showing operator of the first page draws, left to right: their text and their glyph code in the font. */
const glyphRuns = async (bytes: Uint8Array) => {
  const document = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise
  const operators = await (await document.getPage(1)).getOperatorList()
  const runs: Array<Array<{ unicode: string; code: string }>> = []
  operators.fnArray.forEach((op, i) => {
    if (op !== OPS.showText) return
    const glyphs = (operators.argsArray[i] as [Array<unknown>])[0].filter((g): g is { unicode: string; fontChar: string } => typeof g === "object" && g !== null)
    runs.push(glyphs.map((g) => ({ unicode: g.unicode, code: g.fontChar })))
  })
  await document.destroy()
  return runs
}

describe("PDF text in every script", () => {
  it("the fast path: what the standard fonts encode (WinAnsi, including its typographic signs), nothing else", () => {
    for (const text of ["Plain ASCII 123", "Zoë Ångström", "O’Brien – “quoted” … €5", "tab\tand\nnewline"]) expect(isStandardText(text), text).toBe(true)
    for (const text of ["Łukasz", "Ана", "王", "محمد", "x\u0001y", "emoji 😀"]) expect(isStandardText(text), text).toBe(false)
  })

  it("a character no font draws is one U+FFFD, its neighbours drawn as they are", async () => {
    const bytes = await pdf((doc) => drawLine(doc, "Zoë \u{13000} Żółć 😀!", 54, 100, 10))
    expect(await linesOf(bytes)).toEqual(["Zoë \ufffd Żółć \ufffd!"])
  })

  it("each document lays text out with its own parsed fonts: what one PDF embedded leaves the next one's text map whole", async () => {
    await pdf((doc) => {
      doc.x = 54
      writeParagraph(doc, "Łukasz Żółć", 10)
    })
    const bytes = await pdf((doc) => drawLine(doc, "Zoë Zebra Łódź", 54, 100, 10))
    expect(await linesOf(bytes)).toEqual(["Zoë Zebra Łódź"])
  })

  it("right-to-left runs in visual order: pdf.js reads Arabic and Farsi back in logical order, with Latin and digits around them", async () => {
    const bytes = await pdf((doc) => {
      drawLine(doc, "محمد علي", 54, 100, 10)
      drawLine(doc, "Dr. مریم رضایی, room 12", 54, 130, 10)
      drawLine(doc, "تلفن ۱۲۳۴", 54, 160, 10)
    })
    const lines = await linesOf(bytes)
    expect(lines[0]).toBe("محمد علي")
    expect(lines[1]).toMatch(/^Dr\. مریم رضایی ?, room 12$/)
    // The Persian digits stay in their order (1234) though the line reads right to left.
    expect(lines[2]).toBe("تلفن ۱۲۳۴")
  })

  it("Arabic is shaped and laid out right to left: محمد's glyphs run د م ح م from left to right, its two meem in different (initial, medial) forms", async () => {
    const bytes = await pdf((doc) => drawLine(doc, "محمد", 54, 100, 10))
    const [glyphs] = await glyphRuns(bytes)
    expect(glyphs!.map((g) => g.unicode).join("")).toBe("دمحم")
    expect(glyphs![1]!.code).not.toBe(glyphs![3]!.code)
  })

  it("a line is cut with … to its width; a paragraph wraps between Chinese characters without losing one", async () => {
    const long = "王小明陳大文山田太郎".repeat(30)
    const bytes = await pdf((doc) => {
      drawLine(doc, "Nguyễn Thị Minh Khai Nguyễn Thị Minh Khai", 54, 100, 10, 80)
      doc.x = 54
      doc.y = 200
      writeParagraph(doc, long, 10)
    })
    const items = await pdfItems(bytes)
    const cut = items.find((item) => item.str.startsWith("Nguyễn"))!
    expect(cut.str).toMatch(/^Nguyễn Thị.*…$/)
    expect(cut.width).toBeLessThanOrEqual(80)
    const wrapped = items.filter((item) => item.y < 792 - 190)
    expect(new Set(wrapped.map((item) => Math.round(item.y))).size).toBeGreaterThan(1)
    expect(wrapped.map((item) => item.str).join("")).toBe(long)
  })
})
