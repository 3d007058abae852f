/**
 * Text of any language into a pdfkit document: the report PDFs and the signed session note share it.
 *
 * Text that pdfkit's standard fonts encode (WinAnsi: Latin-1 and a few typographic signs) is left
 * to them: the fast path, one regular-expression test (`isStandardText`). Other text is cut into
 * runs, each drawn in the first font of PdfFonts.ts's chain that has its characters; a character
 * no font has becomes U+FFFD (a visible placeholder of its own width). pdfkit has no bidirectional
 * layout: the Unicode bidi algorithm (bidi-js) gives each character its level, runs are put in
 * visual order (rule L2), and fontkit shapes each run (Arabic joining forms) and lays a
 * right-to-left script's run out from right to left itself.
 */
import bidiJs from "bidi-js"
import type * as fontkit from "fontkit"
import { baseFont, fontFor, openFont, type PdfFont } from "./PdfFonts.js"

/** Characters outside what pdfkit's standard fonts encode (WinAnsi), or controls. */
const nonStandard = /[^\t\n\r\x20-\x7e\xa0-\xff\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014\u2018-\u201a\u201c-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]/

/** Whether pdfkit's standard fonts (Helvetica, Courier) draw the text as it is. */
export const isStandardText = (text: string) => !nonStandard.test(text)

// bidi-js is CommonJS whose typings declare an ES default export: the module itself is the factory.
const bidi = (bidiJs as unknown as typeof bidiJs.default)()

/** Drawn as nothing: bidi controls and other invisible format characters the levels already account for. */
const invisible = /[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/
/** Not drawn as themselves: controls (a tab or line break inside a line is a space). */
// eslint-disable-next-line no-control-regex
const control = /[\x00-\x1f\x7f-\x9f]/
/** Characters that take the font of the run they follow when it has them: spaces, digits, punctuation, combining marks. */
const neutral = /[\p{Script=Common}\p{Script=Inherited}]/u
/** Scripts fontkit lays out from right to left by itself (of those the fonts draw). */
const rightToLeftScript = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u
const placeholder = "\ufffd"

/** A paragraph's base direction: its first strong character's ("auto"), or set. */
type Direction = "auto" | "ltr" | "rtl"

interface Run {
  readonly font: PdfFont
  readonly level: number
  text: string
}

/** Runs of one font and bidi level, in logical order. */
const logicalRuns = (text: string, direction: Direction): Array<Run> => {
  const { levels } = bidi.getEmbeddingLevels(text, direction)
  const runs: Array<Run> = []
  let current: Run | undefined
  for (let i = 0; i < text.length;) {
    const codePoint = text.codePointAt(i)!
    const level = levels[i]!
    let char = String.fromCodePoint(codePoint)
    i += char.length
    if (invisible.test(char)) continue
    if (control.test(char)) char = char === "\t" || char === "\n" || char === "\r" ? " " : placeholder
    // A neutral stays in its run's font only at the run's level: a space or bracket between Arabic and
    // Latin that bidi puts on the Latin side is drawn (and read back) with the Latin.
    let font = current !== undefined && current.level === level && neutral.test(char) && current.font.coverage.hasGlyphForCodePoint(char.codePointAt(0)!)
      ? current.font
      : fontFor(char.codePointAt(0)!)
    if (font === undefined) {
      char = placeholder
      font = baseFont()
    }
    if (current !== undefined && current.font === font && current.level === level) current.text += char
    else runs.push(current = { font, level, text: char })
  }
  return runs
}

/** Rule L2: from the highest level to the lowest odd one, each sequence of runs at that level or above is reversed. */
const visualOrder = (runs: Array<Run>): Array<Run> => {
  const ordered = [...runs]
  const highest = Math.max(0, ...runs.map((r) => r.level))
  const lowestOdd = Math.min(...runs.map((r) => r.level | 1))
  for (let level = highest; level >= lowestOdd; level--) {
    for (let start = 0; start < ordered.length;) {
      if (ordered[start]!.level < level) {
        start++
        continue
      }
      let end = start
      while (end < ordered.length && ordered[end]!.level >= level) end++
      const reversed = ordered.slice(start, end).reverse()
      ordered.splice(start, end - start, ...reversed)
      start = end
    }
  }
  return ordered
}

const reversedCodePoints = (text: string, mirror: boolean) =>
  [...text].reverse().map((c) => (mirror ? bidi.getMirroredCharacter(c) ?? c : c)).join("")

/**
 * The text of a run as fontkit must get it to draw it in visual order: fontkit reverses a run of a
 * right-to-left script itself, so a right-to-left run of other characters (spaces, brackets) is
 * reversed (and mirrored) here, and a left-to-right run of right-to-left script (Arabic-Indic
 * digits) is reversed here for fontkit to put back.
 */
const drawnText = (run: Run) => {
  const rightToLeft = run.level % 2 === 1
  if (rightToLeft === rightToLeftScript.test(run.text)) return run.text
  return reversedCodePoints(run.text, rightToLeft)
}

interface PlacedRun {
  readonly font: PdfFont
  readonly text: string
  readonly width: number
}

/** Each document's own parsed fonts (PdfFonts.ts `openFont`), registered with it under their names. */
const documentFonts = new WeakMap<PDFKit.PDFDocument, Map<string, fontkit.Font>>()

const fontIn = (doc: PDFKit.PDFDocument, font: PdfFont): fontkit.Font => {
  let fonts = documentFonts.get(doc)
  if (fonts === undefined) documentFonts.set(doc, fonts = new Map())
  let opened = fonts.get(font.name)
  if (opened === undefined) {
    fonts.set(font.name, opened = openFont(font))
    // pdfkit takes a parsed font as it is (anything with `layout`).
    doc.registerFont(font.name, opened as unknown as string)
  }
  return opened
}

/** One line's runs in visual order, measured at the size with the document's fonts. */
const placedRuns = (doc: PDFKit.PDFDocument, text: string, size: number, direction: Direction = "auto"): Array<PlacedRun> =>
  visualOrder(logicalRuns(text.normalize("NFC"), direction)).map((run) => {
    const drawn = drawnText(run)
    const font = fontIn(doc, run.font)
    return { font: run.font, text: drawn, width: (font.layout(drawn, run.font.features).advanceWidth / font.unitsPerEm) * size }
  })

const widthOf = (runs: ReadonlyArray<PlacedRun>) => runs.reduce((sum, run) => sum + run.width, 0)

/** The line's runs, cut at the end (with "…") to the width. */
const fittedRuns = (doc: PDFKit.PDFDocument, text: string, size: number, maxWidth: number): Array<PlacedRun> => {
  const whole = placedRuns(doc, text, size)
  if (widthOf(whole) <= maxWidth) return whole
  const chars = [...text]
  // The longest start of the text that fits with the ellipsis: a binary search over its length.
  let fits = 0
  let tooLong = chars.length
  let best = placedRuns(doc, "…", size)
  while (tooLong - fits > 1) {
    const middle = Math.floor((fits + tooLong) / 2)
    const runs = placedRuns(doc, `${chars.slice(0, middle).join("").trimEnd()}…`, size)
    if (widthOf(runs) <= maxWidth) {
      fits = middle
      best = runs
    } else {
      tooLong = middle
    }
  }
  return best
}

/** What the writer needs of pdfkit 0.20.2's document (pinned) beyond its typings: the current font, to put it back. */
interface DocumentFontState {
  _font: unknown
  _fontSource: unknown
  _fontFamily: unknown
  _fontSize: number
}

const drawRuns = (doc: PDFKit.PDFDocument, runs: ReadonlyArray<PlacedRun>, x: number, baseline: number, size: number) => {
  const state = doc as unknown as DocumentFontState
  const previous = { ...state }
  const { x: previousX, y: previousY } = doc
  let left = x
  for (const run of runs) {
    // Features given, pdfkit lays the run out whole (it otherwise lays it out word by word, left to right).
    doc.font(run.font.name).fontSize(size).text(run.text, left, baseline, { features: run.font.features as never, lineBreak: false, baseline: "alphabetic" })
    left += run.width
  }
  state._font = previous._font
  state._fontSource = previous._fontSource
  state._fontFamily = previous._fontFamily
  state._fontSize = previous._fontSize
  doc.x = previousX
  doc.y = previousY
}

/**
 * Draws one line of text with its left end at x and its baseline at `baseline`, cut with "…" to
 * `maxWidth` when given; the document's font and position are left as they were.
 */
export const drawLine = (doc: PDFKit.PDFDocument, text: string, x: number, baseline: number, size: number, maxWidth = Infinity) =>
  drawRuns(doc, fittedRuns(doc, text, size, maxWidth), x, baseline, size)

/** Break opportunities: after spaces, and around each Han or kana character (which need none). */
const pieces = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef][\s]*|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]+\s*|\s+/gu

/**
 * The lines a paragraph breaks into at the width (a piece wider than a line is cut between
 * characters). Pieces are measured one by one: their widths add up (no shaping or kerning joins
 * across a break opportunity).
 */
const wrap = (doc: PDFKit.PDFDocument, paragraph: string, size: number, width: number, direction: Direction): Array<string> => {
  const measure = (text: string) => widthOf(placedRuns(doc, text, size, direction))
  const lines: Array<string> = []
  let line = ""
  let lineWidth = 0
  const breakLine = () => {
    if (line !== "") lines.push(line.trimEnd())
    line = ""
    lineWidth = 0
  }
  for (const piece of paragraph.match(pieces) ?? []) {
    const word = piece.trimEnd()
    const wordWidth = measure(word)
    if (lineWidth + wordWidth > width) breakLine()
    if (wordWidth <= width) {
      line += piece
      lineWidth += word === piece ? wordWidth : measure(piece)
      continue
    }
    for (const char of piece) {
      const charWidth = measure(char)
      if (line !== "" && lineWidth + charWidth > width) breakLine()
      line += char
      lineWidth += charWidth
    }
  }
  lines.push(line.trimEnd())
  return lines
}

/**
 * Writes a paragraph at the document's position (doc.x, doc.y) in the fallback fonts, wrapped to the
 * page's width, adding pages as needed, and moves doc.y below it; right-to-left paragraphs are
 * aligned right.
 */
export const writeParagraph = (doc: PDFKit.PDFDocument, text: string, size: number) => {
  const x = doc.x
  const width = doc.page.width - doc.page.margins.right - x
  // Noto's Arabic and CJK faces reach further above and below the baseline than Helvetica.
  const lineHeight = size * 1.45
  for (const paragraph of text.normalize("NFC").split(/\r\n|\r|\n/)) {
    const rightToLeft = bidi.getEmbeddingLevels(paragraph, "auto").paragraphs[0]?.level === 1
    const direction = rightToLeft ? "rtl" : "ltr"
    for (const line of wrap(doc, paragraph, size, width, direction)) {
      if (doc.y + lineHeight > doc.page.height - doc.page.margins.bottom) doc.addPage()
      const runs = placedRuns(doc, line, size, direction)
      const left = rightToLeft ? x + width - widthOf(runs) : x
      drawRuns(doc, runs, left, doc.y + size * 1.1, size)
      doc.y += lineHeight
    }
  }
  doc.x = x
}
