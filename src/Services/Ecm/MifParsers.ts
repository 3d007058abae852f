/**
 * Readers of member information files: each turns the file's bytes into batches of raw records
 * (`RawRecord`), yielding to the event loop between batches so a large file never holds it for
 * long. A file that cannot be read as its type fails with `MalformedFile` naming the line.
 *
 * - CSV (papaparse): header row; comma or tab; UTF-8 with or without BOM. The text is cut into
 *   64 KB pieces at record boundaries (a newline outside quotes) and each piece parsed on its own,
 *   so memory holds one piece of rows at a time. A record and the header are bounded (`mifLimits`).
 * - XML (saxes, a streaming parser): any root; one `Member` element per member; entities a DOCTYPE
 *   declares are not expanded. Read in 64 KB pieces of text, nesting bounded (`mifLimits`).
 * - XLSX (exceljs streaming reader): the first worksheet; first row headers; number and date cells
 *   read back as the spreadsheet shows them. What the zip unpacks to is bounded first.
 */
import type ExcelJS from "exceljs"
import Papa from "papaparse"
import { Readable } from "node:stream"
import { setImmediate as yieldToEventLoop } from "node:timers/promises"
import { createInflateRaw } from "node:zlib"
import { type Cell, fieldOfColumn, type MifField, type MifFileType, type RawRecord } from "../../Domain/Ecm/Mif.js"

export class MalformedFile extends Error {
  override readonly name = "MalformedFile"
}

export type RecordBatches = AsyncGenerator<ReadonlyArray<RawRecord>, void, undefined>

/** Columns a file must have (by any of their accepted names). */
const requiredFields: ReadonlyArray<readonly [MifField, string]> = [
  ["first_name", "FIRST_NAME"], ["last_name", "LAST_NAME"], ["date_of_birth", "DOB"]
]

/** Column index → field, from a header row; fails when a required column is missing. */
const headerFields = (header: ReadonlyArray<unknown>, format: string): Array<MifField | undefined> => {
  const seen = new Set<MifField>()
  const fields = header.map((name) => {
    const field = typeof name === "string" ? fieldOfColumn(name) : undefined
    // A repeated column: the first one counts.
    if (field === undefined || seen.has(field)) return undefined
    seen.add(field)
    return field
  })
  const missing = requiredFields.filter(([field]) => !seen.has(field)).map(([, column]) => column)
  if (missing.length > 0) throw new MalformedFile(`Invalid ${format} format: line 1: missing column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`)
  return fields
}

export interface ReadOptions {
  /**
   * Bytes of CSV text parsed at once (default 64 KiB). Kept under V8's large-object size (128 KiB),
   * so a piece's strings are young-generation garbage; larger pieces land in large-object space,
   * which only a full collection frees, and peak memory grew by hundreds of MB on large files.
   */
  readonly pieceBytes?: number
}

const decoderFor = (format: string) => {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  return (bytes: Uint8Array, stream: boolean) => {
    try {
      return decoder.decode(bytes, { stream })
    } catch {
      throw new MalformedFile(`Invalid ${format} format: the file is not UTF-8 text`)
    }
  }
}

/**
 * What one file may hold, so a hostile file is refused in milliseconds instead of holding the event
 * loop (a single 10 MB line of a million columns once took 7 s): a member's record is a few hundred
 * characters, and the MIF layout has 17 columns.
 */
export const mifLimits = {
  /** Characters of one CSV record (its header too), quoted newlines included. */
  recordChars: 64 * 1024,
  /** Columns of a CSV header. */
  columns: 1000,
  /** Element nesting of an XML file (Members > Member > FIELD is 3). */
  xmlDepth: 32
} as const

/**
 * Finds where CSV records end in text that arrives piece by piece: each character is looked at
 * once (the text kept from the previous piece is not scanned again), and a record longer than
 * `mifLimits.recordChars` fails as soon as it is seen.
 */
const recordSplitter = () => {
  let inQuotes = false
  /** Characters of the kept text already scanned. */
  let scanned = 0
  /** Physical line of the record the kept text starts. */
  let recordLine = 1
  let newlines = 0
  /** Index just past the last record end in `text` (the kept text followed by the new piece), or -1. */
  return (text: string): number => {
    let end = -1
    for (let i = scanned; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 0x22) inQuotes = !inQuotes
      else if (c === 0x0a) {
        newlines++
        if (!inQuotes) {
          end = i + 1
          recordLine = newlines + 1
        }
      }
      if (i + 1 - Math.max(end, 0) > mifLimits.recordChars) {
        throw new MalformedFile(`Invalid CSV format: line ${recordLine}: the record is longer than ${mifLimits.recordChars.toLocaleString("en-US")} characters`)
      }
    }
    scanned = end === -1 ? text.length : text.length - end
    return end
  }
}

/** Comma unless the header line has more tabs than commas (outside quotes). */
const delimiterOf = (firstLine: string): "," | "\t" => {
  let commas = 0
  let tabs = 0
  let inQuotes = false
  for (const ch of firstLine) {
    if (ch === "\"") inQuotes = !inQuotes
    else if (!inQuotes && ch === ",") commas++
    else if (!inQuotes && ch === "\t") tabs++
  }
  return tabs > commas ? "\t" : ","
}

const newlinesIn = (row: ReadonlyArray<string>) => {
  let count = 0
  for (const field of row) {
    for (let i = field.indexOf("\n"); i !== -1; i = field.indexOf("\n", i + 1)) count++
  }
  return count
}

const isBlankRow = (row: ReadonlyArray<string>) => row.every((field) => field.trim() === "")

export async function* readCsv(bytes: Uint8Array, options: ReadOptions = {}): RecordBatches {
  const pieceBytes = options.pieceBytes ?? 64 * 1024
  const decode = decoderFor("CSV")
  let carry = ""
  let delimiter: "," | "\t" | undefined
  let newline: "\r\n" | "\n" | undefined
  let fields: Array<MifField | undefined> | undefined
  /** Physical line of the next row (the header is line 1). */
  let line = 1

  const parsePiece = (text: string): Array<RawRecord> => {
    if (text.length === 0) return []
    if (delimiter === undefined) {
      const firstLine = text.slice(0, text.search(/\n|$/))
      delimiter = delimiterOf(firstLine)
      newline = firstLine.endsWith("\r") ? "\r\n" : "\n"
    }
    const parsed = Papa.parse<Array<string>>(text, { delimiter, newline: newline!, header: false, skipEmptyLines: false })
    // A piece ends with a newline, after which papaparse reads one more (empty) row.
    if (text.endsWith("\n") && parsed.data.length > 0 && isBlankRow(parsed.data[parsed.data.length - 1]!)) parsed.data.pop()
    const error = parsed.errors[0]
    if (error !== undefined) {
      // Rows before the failing one may span several lines: count them.
      let errorLine = line
      for (let r = 0; r < (error.row ?? 0) && r < parsed.data.length; r++) errorLine += 1 + newlinesIn(parsed.data[r]!)
      throw new MalformedFile(`Invalid CSV format: line ${errorLine}: ${error.message}`)
    }
    const records: Array<RawRecord> = []
    for (const row of parsed.data) {
      const rowLine = line
      line += 1 + newlinesIn(row)
      if (isBlankRow(row)) continue
      if (fields === undefined) {
        if (row.length > mifLimits.columns) {
          throw new MalformedFile(`Invalid CSV format: line ${rowLine}: the header has ${row.length.toLocaleString("en-US")} columns (maximum is ${mifLimits.columns.toLocaleString("en-US")})`)
        }
        fields = headerFields(row, "CSV")
        continue
      }
      if (row.length > fields.length) {
        throw new MalformedFile(`Invalid CSV format: line ${rowLine}: ${row.length} fields, but the header has ${fields.length}`)
      }
      const cells: Partial<Record<MifField, Cell>> = {}
      for (let c = 0; c < row.length; c++) {
        const field = fields[c]
        if (field !== undefined) cells[field] = row[c]
      }
      records.push({ line: rowLine, cells })
    }
    return records
  }

  const recordEnd = recordSplitter()
  for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
    const last = offset + pieceBytes >= bytes.length
    const text = carry + decode(bytes.subarray(offset, offset + pieceBytes), !last)
    // Papaparse reads a trailing `\r` of the piece as a line end: cut after `\n` only.
    const found = recordEnd(text)
    const end = last ? text.length : found
    if (end === -1) {
      carry = text
      await yieldToEventLoop()
      continue
    }
    carry = text.slice(end)
    const records = parsePiece(text.slice(0, end))
    if (records.length > 0) yield records
    await yieldToEventLoop()
  }
  if (carry.length > 0) {
    const records = parsePiece(carry)
    if (records.length > 0) yield records
  }
  if (fields === undefined) throw new MalformedFile("Invalid CSV format: line 1: the file has no header row")
}

/** One `Member` being read: its depth, its cells, and the element names that filled them. */
interface OpenMember {
  readonly depth: number
  readonly cells: Partial<Record<MifField, Cell>>
  readonly filledBy: Partial<Record<MifField, string>>
  /** The child element being read: its field, its text so far, whether it holds elements (then it is no value). */
  field?: { readonly field: MifField; readonly name: string; text: string; nested: boolean } | undefined
}

/**
 * Streams the document through saxes, 64 KB of text at a time, yielding to the event loop between
 * pieces: memory holds one piece and one batch of records, never the document or its tree (a 50 MB
 * file parsed whole took ~700 MB and held the event loop for seconds). Every `Member` element not
 * inside another one is a record; its child elements are its fields (the first element naming a
 * field fills it; text is trimmed; `<CIN/>` is ""; a field that holds elements, or whose element
 * repeats, is no value). Entities a DOCTYPE declares are never expanded: they stay as written.
 */
export async function* readXml(bytes: Uint8Array, batchSize = 5000, pieceBytes = 64 * 1024): RecordBatches {
  // Loaded with the first XML file: most instances never see one (idle memory).
  const { SaxesParser } = await import("saxes")
  const parser = new SaxesParser({ position: true })
  // Any entity the document names but XML does not predefine reads as itself: no DOCTYPE is
  // expanded (billion laughs), and a reference left as written is no error.
  parser.ENTITIES = new Proxy(parser.ENTITIES, {
    get: (predefined, name) => typeof name === "string" ? predefined[name] ?? `&${name};` : undefined
  })
  const malformed = (message: string) => new MalformedFile(`Invalid XML format: line ${parser.line}: ${message}`)
  let failure: MalformedFile | undefined
  // saxes reports a well-formedness error through this handler and would read on: the first one ends the file.
  parser.on("error", (error) => {
    const position = `${parser.line}:${parser.column}: `
    failure ??= malformed(error.message.startsWith(position) ? error.message.slice(position.length) : error.message)
    throw failure
  })
  let depth = 0
  let members = 0
  let member: OpenMember | undefined
  const records: Array<RawRecord> = []
  parser.on("opentag", (tag) => {
    depth++
    if (depth > mifLimits.xmlDepth) {
      failure = malformed(`elements are nested more than ${mifLimits.xmlDepth} deep`)
      throw failure
    }
    if (member === undefined) {
      if (tag.name.toLowerCase() === "member") member = { depth, cells: {}, filledBy: {} }
    } else if (depth === member.depth + 1) {
      const field = fieldOfColumn(tag.name)
      member.field = field === undefined ? undefined : { field, name: tag.name, text: "", nested: false }
    } else if (member.field !== undefined) {
      member.field.nested = true
    }
    // A self-closing element gets its close event at once, like any other.
  })
  const appendText = (text: string) => {
    if (member?.field !== undefined && depth === member.depth + 1) member.field.text += text
  }
  parser.on("text", appendText)
  parser.on("cdata", appendText)
  parser.on("closetag", () => {
    if (member !== undefined) {
      if (depth === member.depth + 1 && member.field !== undefined) {
        const { field, name, text, nested } = member.field
        const filledBy = member.filledBy[field]
        if (filledBy === undefined) {
          member.filledBy[field] = name
          member.cells[field] = nested ? null : text.trim()
        } else if (filledBy === name) {
          // The same element twice: a list of values, not one.
          member.cells[field] = null
        }
        member.field = undefined
      } else if (depth === member.depth) {
        members++
        records.push({ line: members, label: `Member ${members}`, cells: member.cells })
        member = undefined
      }
    }
    depth--
  })
  const decode = decoderFor("XML")
  try {
    for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
      const end = Math.min(offset + pieceBytes, bytes.length)
      parser.write(decode(bytes.subarray(offset, end), end < bytes.length))
      while (records.length >= batchSize) yield records.splice(0, batchSize)
      await yieldToEventLoop()
    }
    parser.close()
  } catch (error) {
    throw failure ?? error
  }
  if (members === 0) throw new MalformedFile("Invalid XML format: no Member elements found")
  if (records.length > 0) yield records
}

/** A number cell formatted with zeros only (`00000`): a ZIP code or id the sheet pads. */
const zeroPadded = (value: number, numFmt: string | undefined): string | undefined => {
  const format = numFmt?.replace(/^"|"$/g, "")
  return format !== undefined && /^0+$/.test(format) && Number.isInteger(value) && value >= 0
    ? String(value).padStart(format.length, "0")
    : undefined
}

/** A worksheet cell as the sheet shows it. */
const xlsxCell = (cell: ExcelJS.Cell): Cell => {
  const value = cell.value as unknown
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value
  if (typeof value === "number") return zeroPadded(value, cell.numFmt) ?? value
  if (typeof value === "string") return value
  if (typeof value === "boolean") return String(value)
  if (typeof value === "object") {
    const v = value as { richText?: Array<{ text: string }>; result?: unknown; text?: unknown; error?: unknown }
    if (Array.isArray(v.richText)) return v.richText.map((r) => r.text).join("")
    if ("result" in v) {
      const result = v.result
      if (result instanceof Date || typeof result === "string") return result
      if (typeof result === "number") return zeroPadded(result, cell.numFmt) ?? result
      return null
    }
    if (typeof v.text === "string") return v.text
  }
  return null
}

/** Bytes `compressed` (a raw deflate stream, maybe followed by other data) inflates to, counted up to just past `limit`. */
const inflatedSize = (compressed: Uint8Array, limit: number) =>
  new Promise<number>((resolve) => {
    const inflate = createInflateRaw()
    let size = 0
    inflate.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        inflate.destroy()
        resolve(size)
      }
    })
    inflate.on("end", () => resolve(size))
    // A corrupt stream: what it gave so far (exceljs refuses the file).
    inflate.on("error", () => resolve(size))
    inflate.end(compressed)
  })

/**
 * Refuses a workbook (a zip) whose entries unpack to more than `maxBytes` in all: a small zip can
 * unpack to gigabytes. Each entry is inflated once from where its local header says its data
 * starts, to the end of its deflate stream (not trusting the sizes the zip declares), off the
 * event loop and keeping nothing.
 */
const checkUnpackedSize = async (bytes: Uint8Array, maxBytes: number) => {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const tooLarge = () =>
    new MalformedFile(`Invalid XLSX format: the workbook unpacks to more than ${Math.floor(maxBytes / (1024 * 1024))} MB`)
  // End of central directory: the last record with its signature, within the last 64 KiB + 22 bytes.
  let end = -1
  for (let i = view.length - 22; i >= Math.max(0, view.length - 22 - 0xffff); i--) {
    if (view.readUInt32LE(i) === 0x06054b50) {
      end = i
      break
    }
  }
  if (end === -1) return // Not a zip: exceljs says so.
  const entries = view.readUInt16LE(end + 10)
  let entry = view.readUInt32LE(end + 16)
  let total = 0
  for (let n = 0; n < entries && entry + 46 <= view.length; n++) {
    if (view.readUInt32LE(entry) !== 0x02014b50) return
    const method = view.readUInt16LE(entry + 10)
    const compressedSize = view.readUInt32LE(entry + 20)
    const local = view.readUInt32LE(entry + 42)
    entry += 46 + view.readUInt16LE(entry + 28) + view.readUInt16LE(entry + 30) + view.readUInt16LE(entry + 32)
    if (local + 30 > view.length || view.readUInt32LE(local) !== 0x04034b50) return
    const data = local + 30 + view.readUInt16LE(local + 26) + view.readUInt16LE(local + 28)
    total += method === 8 ? await inflatedSize(view.subarray(data), maxBytes - total) : compressedSize
    if (total > maxBytes) throw tooLarge()
  }
}

/** Asks an iterator for everything it has left, ignoring it (and any failure). */
const drain = async (iterator: AsyncIterator<unknown>) => {
  try {
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) void next
  } catch {
    // A rest that cannot be read holds nothing to clean up.
  }
}

export async function* readXlsx(bytes: Uint8Array, batchSize = 5000, maxUnpackedBytes = Number.POSITIVE_INFINITY): RecordBatches {
  await checkUnpackedSize(bytes, maxUnpackedBytes)
  // exceljs is large: loaded with the first XLSX file, not at start-up (idle memory).
  const { default: ExcelJS } = await import("exceljs")
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]), {
    sharedStrings: "cache",
    styles: "cache",
    hyperlinks: "ignore",
    worksheets: "emit"
  })
  let fields: Array<MifField | undefined> | undefined
  let batch: Array<RawRecord> = []
  // The worksheets by hand, never `return()`ed: a worksheet that comes before the shared strings in
  // the file is copied to a temporary file (member names, birth dates), which exceljs deletes only
  // when asked for the next worksheet; left early, the copy stayed until the process ended.
  const worksheets = reader[Symbol.asyncIterator]()
  try {
    const first = await worksheets.next()
    // Only the first worksheet holds members.
    if (first.done !== true) {
      for await (const row of first.value) {
        const cells = (row as ExcelJS.Row)
        if (fields === undefined) {
          const header: Array<unknown> = []
          cells.eachCell({ includeEmpty: false }, (cell, column) => {
            header[column - 1] = typeof cell.value === "string" ? cell.value : cell.text
          })
          if (header.length === 0) continue
          fields = headerFields(Array.from(header, (h) => h ?? ""), "XLSX")
          continue
        }
        const record: Partial<Record<MifField, Cell>> = {}
        let blank = true
        cells.eachCell({ includeEmpty: false }, (cell, column) => {
          const field = fields![column - 1]
          if (field === undefined) return
          const value = xlsxCell(cell)
          if (value !== null && value !== "") blank = false
          record[field] = value
        })
        if (blank) continue
        batch.push({ line: cells.number, cells: record })
        if (batch.length >= batchSize) {
          yield batch
          batch = []
          await yieldToEventLoop()
        }
      }
    }
  } catch (error) {
    if (error instanceof MalformedFile) throw error
    throw new MalformedFile("Invalid XLSX format: the file is not a readable Excel 2007+ workbook")
  } finally {
    // Also when the import stopped reading (a bad record, a failure): through to the end, unread.
    await drain(worksheets)
  }
  if (fields === undefined) throw new MalformedFile("Invalid XLSX format: line 1: the first worksheet has no header row")
  if (batch.length > 0) yield batch
}

/** How much an XLSX file may unpack to, against the largest file accepted (MIF_MAX_FILE_BYTES). */
export const xlsxUnpackFactor = 16

export const readMif = (fileType: MifFileType, bytes: Uint8Array, maxFileBytes: number): RecordBatches => {
  switch (fileType) {
    case "csv":
      return readCsv(bytes)
    case "xml":
      return readXml(bytes)
    case "xlsx":
      return readXlsx(bytes, undefined, xlsxUnpackFactor * maxFileBytes)
  }
}
