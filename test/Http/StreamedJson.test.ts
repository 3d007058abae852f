/**
 * The body scanner that takes a data URI field out of a JSON body as it arrives: what is left
 * parses to the same JSON with the field's placeholder in its place, the field reads as the whole
 * string would have, invalid JSON stays invalid and invalid UTF-8 is seen wherever it is, however
 * the body is cut into chunks.
 */
import { describe, expect, it } from "@effect/vitest"
import { isUtf8 } from "node:buffer"
import fc from "fast-check"
import { jsonBodyScanner } from "../../src/Layers/Http/StreamedJson.js"
import { hasAtMostCharacters } from "../../src/Api/Schemas.js"
import { readDataUri } from "../../src/Services/DataUri.js"

const scan = (body: Buffer, cuts: ReadonlyArray<number>) => {
  const scanner = jsonBodyScanner(["mif", "file"], body.length)
  const at = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b)
  let from = 0
  for (const cut of [...at, body.length]) {
    if (cut > from) scanner.push(body.subarray(from, cut))
    from = cut
  }
  return scanner.finish()
}

/** JSON text with `/` and every non-ASCII character escaped, as some encoders write it. */
const escapeAll = (json: string) => json.replace(/[/\u0080-\uffff]/g, (c) => (c === "/" ? "\\/" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))

const fileText = fc.oneof(
  fc.uint8Array({ maxLength: 60 }).map((bytes) => "data:text/csv;base64," + Buffer.from(bytes).toString("base64")),
  fc.string({ unit: fc.constantFrom("A", "/", "=", " ", "\n", "\"", "\\", "\u0000", "é", "😀", "data:text/csv;base64,"), maxLength: 30 })
)
const body = fc.record({
  file: fileText,
  before: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
  after: fc.jsonValue({ maxDepth: 3 }),
  escaped: fc.boolean(),
  spaced: fc.boolean()
})

describe("a JSON body with its data URI field taken out as it arrives", () => {
  it("leaves the same JSON, the field's placeholder in its place; the field reads as the whole string", () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 8 }), ({ after, before, escaped, file, spaced }, cuts) => {
        const value = { ...before, mif: { url: "u", file }, other: { mif: { file: "not this one" } }, after }
        let json = JSON.stringify(value, null, spaced ? 1 : undefined)
        if (escaped) json = escapeAll(json)
        const scanned = scan(Buffer.from(json), cuts)
        expect(scanned.utf8).toBe(true)
        const rest = JSON.parse(scanned.rest.toString("utf8")) as typeof value
        const placeholder = rest.mif.file
        expect({ ...rest, mif: { ...rest.mif, file }, other: rest.other }).toEqual(JSON.parse(json))
        if (file.includes("\u0000")) return void expect(placeholder).toBe("\u0000")
        if (file.trim() === "") return void expect(placeholder).toBe(" ")
        expect(scanned.dataUris.size).toBe(1)
        const read = scanned.dataUris.get(placeholder)!
        const whole = readDataUri(file)
        expect({ ...read, bytes: Buffer.from(read.bytes) }).toEqual({ ...whole, bytes: Buffer.from(whole.bytes) })
      }),
      { numRuns: 1000 }
    )
  })

  it("leaves invalid JSON invalid: a raw control character or a bad escape in the field", () => {
    const good = JSON.stringify({ mif: { file: "data:text/csv;base64,QUJD" } })
    for (const bad of [good.replace("QUJD", "QU\nJD"), good.replace("QUJD", "QU\\xJD"), good.replace("QUJD", "QU\\u00gJD"), good.slice(0, 30)]) {
      for (const cuts of [[], [20], [21, 22, 23, 24, 25, 26, 27, 28, 29]]) {
        const scanned = scan(Buffer.from(bad), cuts)
        expect(() => JSON.parse(scanned.rest.toString("utf8")), bad).toThrow()
      }
    }
  })

  it("sees invalid UTF-8 wherever it is, however the body is cut", () => {
    fc.assert(
      fc.property(fileText, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0x80, max: 0xff })), { maxLength: 2 }), fc.array(fc.nat(), { maxLength: 8 }), (file, flips, cuts) => {
        const bytes = Buffer.from(JSON.stringify({ a: "é", mif: { file }, b: "😀" }))
        for (const [at, byte] of flips) bytes[at % bytes.length] = byte
        expect(scan(bytes, cuts).utf8).toBe(isUtf8(bytes))
      }),
      { numRuns: 1000 }
    )
  })

  it("replaces a field longer than its maxLength by one the schema refuses the same way, before a NUL or a blank one", () => {
    fc.assert(
      // Any maxLength the placeholder itself fits in (a data URI field's is millions of characters).
      fc.property(fileText, fc.integer({ min: "received-data-uri-1".length, max: 80 }), fc.array(fc.nat(), { maxLength: 8 }), (file, maxCharacters, cuts) => {
        const json = JSON.stringify({ mif: { file } })
        const scanner = jsonBodyScanner(["mif", "file"], json.length, maxCharacters)
        const body = Buffer.from(json)
        const at = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b)
        let from = 0
        for (const cut of [...at, body.length]) {
          if (cut > from) scanner.push(body.subarray(from, cut))
          from = cut
        }
        const standIn = (JSON.parse(scanner.finish().rest.toString("utf8")) as { mif: { file: string } }).mif.file
        expect(hasAtMostCharacters(standIn, maxCharacters)).toBe(hasAtMostCharacters(file, maxCharacters))
        if (!hasAtMostCharacters(file, maxCharacters)) expect(standIn).toBe("x".repeat(maxCharacters + 1))
      }),
      { numRuns: 1000 }
    )
  })
})
