/**
 * A PDF's text as a reader gets it (pdf.js, the engine of Firefox's viewer): each text item with
 * its position, and the sample names the PDFs must render (the Medi-Cal threshold languages).
 */
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs"

const standardFontDataUrl = new URL("../../node_modules/pdfjs-dist/standard_fonts/", import.meta.url).pathname

export interface PdfItem {
  readonly page: number
  readonly str: string
  /** Left end and baseline, in points from the page's bottom left. */
  readonly x: number
  readonly y: number
  readonly width: number
}

export const pdfItems = async (bytes: Uint8Array): Promise<Array<PdfItem>> => {
  const document = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, standardFontDataUrl }).promise
  const items: Array<PdfItem> = []
  for (let page = 1; page <= document.numPages; page++) {
    const content = await (await document.getPage(page)).getTextContent()
    for (const item of content.items) {
      if ("str" in item && item.str.trim() !== "") {
        items.push({ page, str: item.str, x: item.transform[4] as number, y: item.transform[5] as number, width: item.width })
      }
    }
  }
  await document.destroy()
  return items
}

/** One name for each script the PDFs must draw: Latin (Polish, Vietnamese), Cyrillic, Armenian, Chinese, Korean, Japanese, Arabic, Farsi. */
export const sampleNames = [
  ["Łukasz", "Żółć"],
  ["Nguyễn", "Thị Minh Khai"],
  ["Ана", "Иванова"],
  ["Արամ", "Խաչատրյան"],
  ["王", "小明"],
  ["陳", "大文"],
  ["김", "민준"],
  ["山田", "太郎"],
  ["محمد", "علي"],
  ["مریم", "رضایی"]
] as const

/** A sample as the app joins first and last name. */
export const fullName = ([first, last]: readonly [string, string]) => `${first} ${last}`
