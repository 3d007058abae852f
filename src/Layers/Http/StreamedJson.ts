/**
 * A JSON request body read as it arrives, with one string field taken out of it: the field (at a
 * fixed path of object keys, `["mif", "file"]`) carries a whole file as a base64 data URI, and is
 * decoded piece by piece (src/Services/DataUri.ts) instead of being held as text, parsed by
 * `JSON.parse` and decoded at once (a 50 MB file was a 67 MB string held three times, and the
 * event loop was held for each step). What is left of the body is small: the field's value is
 * replaced by a placeholder the service looks up in `ReceivedDataUris`.
 *
 * The scanner only finds strings; it does not check the JSON, which the Api still parses (what is
 * left of it). It keeps every answer the whole body would have had:
 * - the field's text is checked as JSON string content (escapes, no raw control characters) and as
 *   UTF-8; a field that is not valid JSON is replaced by an invalid string (`"\q"`), so the body
 *   is refused as invalid JSON, as it was;
 * - a field longer than its schema's `maxLength` is replaced by a string one character longer (as
 *   large as what was sent, but only when it is refused), one holding a NUL by `"\u0000"` and a
 *   blank one by `" "`, which the request schema and the service refuse as before, in that order.
 * Each chunk of the body is scanned once, in time proportional to its size.
 */
import { isAscii, isUtf8 } from "node:buffer"
import { TextDecoder } from "node:util"
import { type DataUri, dataUriDecoder } from "../../Services/DataUri.js"

const quote = 0x22
const backslash = 0x5c

const escapes: Readonly<Record<number, string>> = {
  0x22: "\"",
  0x5c: "\\",
  0x2f: "/",
  0x62: "\b",
  0x66: "\f",
  0x6e: "\n",
  0x72: "\r",
  0x74: "\t"
}

// Raw control characters are not allowed in a JSON string.
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001f]/

/** Keys longer than this (raw) are none of the path's. */
const maxKeyBytes = 64

interface Frame {
  readonly object: boolean
  expectKey: boolean
  key: string | undefined
}

export interface ScannedBody {
  /** The body, each of the field's values replaced by its placeholder (or a stand-in that fails as it did). */
  readonly rest: Buffer
  /** The whole body was UTF-8. */
  readonly utf8: boolean
  readonly dataUris: ReadonlyMap<string, DataUri>
}

/** A JSON string of `maxCharacters + 1` characters. */
const tooLongStandIn = (maxCharacters: number) => {
  const text = Buffer.alloc(maxCharacters + 3, "x")
  text[0] = quote
  text[text.length - 1] = quote
  return text
}

const placeholderOf = (n: number) => `received-data-uri-${n}`

/**
 * Scans a JSON body chunk by chunk (`push`), taking out every string value at `path` (object keys
 * from the top) into a data URI decoder; `finish` at the body's end. `expectedBytes` (the declared
 * Content-Length, or 0) sizes the decoded file's buffer; `maxCharacters` is the field's `maxLength`.
 */
export const jsonBodyScanner = (path: ReadonlyArray<string>, expectedBytes: number, maxCharacters = Infinity) => {
  const rest: Array<Buffer> = []
  const dataUris = new Map<string, DataUri>()
  const frames: Array<Frame> = []
  let depth = 0
  let utf8 = true

  /** Where we are: outside strings, in a string to keep (a key or any other value), in the field. */
  let mode: "value" | "string" | "key" | "field" = "value"
  /** In a kept string: the last byte was a backslash. */
  let escaped = false
  /** The raw bytes of a key being read (up to `maxKeyBytes`). */
  let keyBytes: Array<Buffer> = []
  let keyLength = 0

  // The field being read.
  let decoder = dataUriDecoder()
  let fieldValid = true
  /** 0: none; 1: after a backslash; 2–5: reading the hex digits of \u. */
  let escapeState = 0
  let unicode = 0
  let utf8Decoder: TextDecoder | undefined
  let pieces: Array<string> = []

  const frameAt = (d: number): Frame | undefined => (d >= 1 && d <= path.length ? frames[d - 1] : undefined)

  const isFieldPosition = () => {
    if (depth !== path.length) return false
    for (let d = 0; d < path.length; d++) {
      const frame = frames[d]!
      if (!frame.object || frame.key !== path[d]) return false
    }
    return !frames[depth - 1]!.expectKey
  }

  const startField = () => {
    decoder = dataUriDecoder(expectedBytes)
    fieldValid = true
    escapeState = 0
    utf8Decoder = undefined
    pieces = []
  }

  const flushPieces = () => {
    if (pieces.length === 0) return
    const text = pieces.length === 1 ? pieces[0]! : pieces.join("")
    pieces = []
    if (fieldValid) decoder.push(text)
  }

  const invalid = () => {
    fieldValid = false
    pieces = []
  }

  /** Ends a run of the field's raw text (at an escape, the closing quote): a pending UTF-8 sequence is incomplete. */
  const endRun = () => {
    if (utf8Decoder === undefined) return
    try {
      const tail = utf8Decoder.decode()
      if (tail.length > 0 && fieldValid) pieces.push(tail)
    } catch {
      utf8 = false
      invalid()
    }
    utf8Decoder = undefined
  }

  /** Raw text of the field (no quote, no backslash), maybe continued in the next chunk. */
  const fieldRun = (run: Buffer) => {
    if (run.length === 0) return
    if (utf8Decoder === undefined && isAscii(run)) {
      if (!fieldValid) return
      const text = run.toString("latin1")
      if (controlCharacter.test(text)) return invalid()
      pieces.push(text)
      return
    }
    utf8Decoder ??= new TextDecoder("utf-8", { fatal: true })
    let text: string
    try {
      text = utf8Decoder.decode(run, { stream: true })
    } catch {
      utf8 = false
      utf8Decoder = undefined
      return invalid()
    }
    if (!fieldValid) return
    if (controlCharacter.test(text)) return invalid()
    pieces.push(text)
  }

  const endField = () => {
    endRun()
    flushPieces()
    const read = decoder.finish()
    decoder = dataUriDecoder()
    if (!fieldValid || escapeState !== 0) return rest.push(Buffer.from("\"\\q\""))
    if (read.characters > maxCharacters) return rest.push(tooLongStandIn(maxCharacters))
    if (read.nul) return rest.push(Buffer.from("\"\\u0000\""))
    if (read.blank) return rest.push(Buffer.from("\" \""))
    const placeholder = placeholderOf(dataUris.size + 1)
    dataUris.set(placeholder, read)
    rest.push(Buffer.from(`"${placeholder}"`))
  }

  // Positions of the next quote and backslash in the chunk being scanned (`chunk.length`: none):
  // scanning only moves forward, so each chunk is searched once for each.
  let chunk: Buffer = Buffer.alloc(0)
  let quoteAt = -1
  let backslashAt = -1
  const nextQuote = (i: number) => {
    if (quoteAt < i) {
      quoteAt = chunk.indexOf(quote, i)
      if (quoteAt === -1) quoteAt = chunk.length
    }
    return quoteAt
  }
  const nextBackslash = (i: number) => {
    if (backslashAt < i) {
      backslashAt = chunk.indexOf(backslash, i)
      if (backslashAt === -1) backslashAt = chunk.length
    }
    return backslashAt
  }

  /** The field's text from `i`; where scanning goes on (past the closing quote, or the chunk's end). */
  const scanField = (from: number): number => {
    let i = from
    while (i < chunk.length) {
      if (escapeState === 1) {
        const c = chunk[i]!
        escapeState = 0
        if (c >= 0x80) {
          // Not JSON; the byte is read as text (it may not be UTF-8 either).
          invalid()
          continue
        }
        i++
        if (c === 0x75) {
          escapeState = 2
          unicode = 0
          continue
        }
        const escape = escapes[c]
        if (escape === undefined) invalid()
        else if (fieldValid) pieces.push(escape)
        continue
      }
      if (escapeState >= 2) {
        const c = chunk[i]!
        const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1
        if (digit === -1) {
          // Not JSON; the string goes on to its closing quote, read from this byte as usual.
          escapeState = 0
          invalid()
          continue
        }
        i++
        unicode = unicode * 16 + digit
        if (++escapeState === 6) {
          escapeState = 0
          if (fieldValid) pieces.push(String.fromCharCode(unicode))
        }
        continue
      }
      const q = nextQuote(i)
      const b = nextBackslash(i)
      if (b < q) {
        fieldRun(chunk.subarray(i, b))
        endRun()
        escapeState = 1
        i = b + 1
        continue
      }
      fieldRun(chunk.subarray(i, q))
      if (q === chunk.length) break
      endField()
      mode = "value"
      return q + 1
    }
    flushPieces()
    return chunk.length
  }

  /** A kept string from `i` (a key's raw bytes are collected); where scanning goes on. */
  const scanString = (from: number): number => {
    let i = from
    while (i < chunk.length) {
      if (escaped) {
        escaped = false
        i++
        continue
      }
      const q = nextQuote(i)
      const b = nextBackslash(i)
      if (b < q) {
        escaped = true
        i = b + 1
        continue
      }
      if (q === chunk.length) break
      if (mode === "key") {
        keyPart(from, q)
        const frame = frameAt(depth)
        if (frame !== undefined) frame.key = keyLength <= maxKeyBytes ? keyOf(Buffer.concat(keyBytes)) : undefined
        keyBytes = []
        keyLength = 0
      }
      mode = "value"
      return q + 1
    }
    if (mode === "key") keyPart(from, chunk.length)
    return chunk.length
  }

  const keyPart = (from: number, to: number) => {
    keyLength += to - from
    if (keyLength <= maxKeyBytes) keyBytes.push(Buffer.from(chunk.subarray(from, to)))
  }

  const keyOf = (raw: Buffer): string | undefined => {
    try {
      const key: unknown = JSON.parse(`"${raw.toString("utf8")}"`)
      return typeof key === "string" ? key : undefined
    } catch {
      return undefined
    }
  }

  const push = (data: Buffer) => {
    chunk = data
    quoteAt = -1
    backslashAt = -1
    /** Start of the part of this chunk that goes to `rest`. */
    let keptFrom = 0
    let i = 0
    while (i < chunk.length) {
      if (mode === "field") {
        i = scanField(i)
        // mode is "value" again once the closing quote was read.
        keptFrom = i
        continue
      }
      if (mode === "string" || mode === "key") {
        i = scanString(i)
        continue
      }
      const c = chunk[i]!
      switch (c) {
        case 0x7b: // {
        case 0x5b: // [
          depth++
          if (depth <= path.length) frames[depth - 1] = { object: c === 0x7b, expectKey: c === 0x7b, key: undefined }
          break
        case 0x7d: // }
        case 0x5d: // ]
          if (depth > 0) depth--
          break
        case 0x2c: { // ,
          const frame = frameAt(depth)
          if (frame?.object === true) frame.expectKey = true
          break
        }
        case 0x3a: { // :
          const frame = frameAt(depth)
          if (frame?.object === true) frame.expectKey = false
          break
        }
        case quote: {
          const frame = frameAt(depth)
          escaped = false
          if (frame?.object === true && frame.expectKey) {
            mode = "key"
            keyBytes = []
            keyLength = 0
          } else if (isFieldPosition()) {
            if (i > keptFrom) rest.push(Buffer.from(chunk.subarray(keptFrom, i)))
            mode = "field"
            startField()
          } else {
            mode = "string"
          }
          break
        }
      }
      i++
    }
    if (mode !== "field" && chunk.length > keptFrom) rest.push(keptFrom === 0 ? chunk : Buffer.from(chunk.subarray(keptFrom)))
    chunk = Buffer.alloc(0)
  }

  /** At the body's end: what is left of it, and the data URIs taken out. */
  const finish = (): ScannedBody => {
    if (mode === "field") {
      // Unterminated: so is what is left.
      endRun()
      decoder.finish()
      rest.push(Buffer.from("\""))
    }
    const kept = Buffer.concat(rest)
    rest.length = 0
    return { rest: kept, utf8: utf8 && isUtf8(kept), dataUris }
  }

  return { push, finish } as const
}
