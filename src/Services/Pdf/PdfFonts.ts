/**
 * The fonts PDFs draw text in where pdfkit's standard fonts (WinAnsi only) cannot: regular faces
 * from npm packages (Noto Sans families, Vazirmatn for Arabic script), together covering the
 * Medi-Cal threshold languages. A character is drawn in the first font of the chain that has a
 * glyph for it.
 *
 * A PDF gives text back (copy, search, screen readers) through each font's map from glyph to
 * characters, one entry a glyph. Faces that build letters from shared parts (Noto Sans Arabic's
 * dotless bases and separate dots; Noto Sans's ccmp splitting ị into i and a dot) cannot be
 * mapped back, so the chain holds faces and features that draw each letter as a glyph of its own.
 *
 * A font is read and parsed the first time a character needs it (an idle server holds none, and a
 * Latin-1 report none): the CJK faces are 6–10 MB each. pdfkit embeds only the glyphs a document
 * uses (subsetting), so a PDF with three Chinese names carries a few kB of font.
 */
import * as fontkit from "fontkit"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

/** Hangul (jamo, compatibility jamo, syllables): the Korean face's, never the Chinese one's. */
const isHangul = (codePoint: number) =>
  (codePoint >= 0x1100 && codePoint <= 0x11ff) || (codePoint >= 0x3130 && codePoint <= 0x318f) || (codePoint >= 0xa960 && codePoint <= 0xa97f)
  || (codePoint >= 0xac00 && codePoint <= 0xd7ff)

interface FontSource {
  /** The name the font is registered under in each document. */
  readonly name: string
  readonly file: string
  /** Characters the font is not asked about, though it may have them (so it is not loaded for them). */
  readonly skips?: (codePoint: number) => boolean
  /** OpenType features set for the font's runs (beside fontkit's defaults for the script). */
  readonly features?: Record<string, boolean>
}

const chain: ReadonlyArray<FontSource> = [
  // Latin (with Vietnamese and Tagalog), Greek, Cyrillic, and U+FFFD for what no font draws.
  { name: "NotoSans", file: "@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf", features: { ccmp: false } },
  { name: "NotoSansArmenian", file: "@expo-google-fonts/noto-sans-armenian/400Regular/NotoSansArmenian_400Regular.ttf" },
  // Arabic and Farsi: contextual forms as glyphs of their own (the Arabic-only build, Latin digits kept).
  { name: "Vazirmatn", file: "vazirmatn/misc/Non-Latin/fonts/ttf/Vazirmatn-NL-Regular.ttf" },
  // Han, simplified and traditional (every unified ideograph GB 18030 names), and kana.
  { name: "NotoSansSC", file: "@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf", skips: isHangul },
  // Hangul.
  { name: "NotoSansKR", file: "@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf" }
]

export interface PdfFont {
  readonly name: string
  readonly data: Buffer
  /** The parsed font, to ask which characters it has: never to lay text out (see `openFont`). */
  readonly coverage: fontkit.Font
  readonly features: Record<string, boolean>
}

const parse = (data: Buffer): fontkit.Font => {
  const font = fontkit.create(data)
  if (!("layout" in font)) throw new Error("a font collection, not a font")
  return font
}

/**
 * The font parsed anew, for one document to lay text out and embed with. fontkit keeps the glyphs it
 * has made, with the characters they were made for, and writing a document's subset makes some with
 * none: shared between documents, a font gave the next document's letters no text in its text map
 * (`Zebra` read back as `Z\u0005bra`).
 */
export const openFont = (font: PdfFont): fontkit.Font => parse(font.data)

const loaded: Array<PdfFont | undefined> = []

const load = (index: number): PdfFont => {
  const existing = loaded[index]
  if (existing !== undefined) return existing
  const source = chain[index]!
  const data = readFileSync(require.resolve(source.file))
  const pdfFont = { name: source.name, data, coverage: parse(data), features: source.features ?? {} }
  loaded[index] = pdfFont
  return pdfFont
}

/** The font placeholders (U+FFFD) and the Latin of mixed text are drawn in. */
export const baseFont = (): PdfFont => load(0)

/** Which font of the chain draws each code point (-1: none), as found. */
const fontIndexOf = new Map<number, number>()

/** The first font of the chain with a glyph for the code point, or undefined when none has one. */
export const fontFor = (codePoint: number): PdfFont | undefined => {
  let index = fontIndexOf.get(codePoint)
  if (index === undefined) {
    index = chain.findIndex((source, i) => source.skips?.(codePoint) !== true && load(i).coverage.hasGlyphForCodePoint(codePoint))
    fontIndexOf.set(codePoint, index)
  }
  return index < 0 ? undefined : load(index)
}
