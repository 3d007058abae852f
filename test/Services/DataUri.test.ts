/**
 * A data URI read piece by piece judges exactly as the whole text did: trimmed, a prefix in any
 * case, standard padded base64 (the rule `mif.file` had when it was decoded whole).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { dataUriPrefixes, type MifFileType } from "../../src/Domain/Ecm/Mif.js"
import { dataUriDecoder, readDataUri } from "../../src/Services/DataUri.js"
import { dataUriFile, sourceMessages } from "../../src/Services/Ecm/MifSources.js"

/** The rule as it was, on the whole text. */
const wholeText = (text: string, maxFileBytes: number): Either.Either<{ bytes: Uint8Array; fileType: MifFileType }, string> => {
  const uri = text.trim()
  const entry = (Object.entries(dataUriPrefixes) as Array<[MifFileType, string]>)
    .find(([, prefix]) => uri.slice(0, prefix.length).toLowerCase() === prefix)
  if (entry === undefined) return Either.left(sourceMessages.dataUri)
  const [fileType, prefix] = entry
  const encodedLength = uri.length - prefix.length
  if (encodedLength === 0) return Either.left(sourceMessages.empty)
  if (Math.floor((encodedLength * 3) / 4) - 2 > maxFileBytes) return Either.left(sourceMessages.tooLarge(maxFileBytes))
  const encoded = uri.slice(prefix.length)
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return Either.left(sourceMessages.base64)
  return Either.right({ bytes: new Uint8Array(Buffer.from(encoded, "base64")), fileType })
}

const pieces = (text: string, cuts: ReadonlyArray<number>) => {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const out: Array<string> = []
  let from = 0
  for (const cut of at) {
    out.push(text.slice(from, cut))
    from = cut
  }
  out.push(text.slice(from))
  return out
}

const space = fc.constantFrom(" ", "\n", "\t", "\u00a0", "\ufeff", "\u2028", "")
const casedPrefix = fc.tuple(fc.constantFrom(...Object.values(dataUriPrefixes)), fc.nat())
  .map(([prefix, seed]) => [...prefix].map((c, i) => ((seed >> (i % 30)) & 1 ? c.toUpperCase() : c)).join(""))
const head = fc.oneof(casedPrefix, casedPrefix.map((p) => p.slice(0, -1)), fc.constantFrom("data:application/pdf;base64,", "x", ""))
const encoded = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString("base64")),
  fc.string({ unit: fc.constantFrom("A", "b", "9", "+", "/", "=", " ", "\n", "*", "\u0000", ",", "\u00e9"), maxLength: 24 })
)
const dataUriText = fc.tuple(fc.array(space, { maxLength: 3 }), head, encoded, fc.array(space, { maxLength: 3 }))
  .map(([lead, h, e, trail]) => lead.join("") + h + e + trail.join(""))

describe("data URIs read piece by piece", () => {
  it("judge as the whole text did, however the text is cut", () => {
    fc.assert(
      fc.property(dataUriText, fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom(5, 30, 1_000), (text, cuts, maxFileBytes) => {
        const decoder = dataUriDecoder(cuts[0] ?? 0)
        for (const piece of pieces(text, cuts)) decoder.push(piece)
        const read = decoder.finish()
        const expected = wholeText(text, maxFileBytes)
        const actual = dataUriFile(read, maxFileBytes)
        expect(Either.isRight(actual)).toBe(Either.isRight(expected))
        if (Either.isLeft(expected)) expect(actual).toEqual(expected)
        else expect(Either.getOrThrow(actual)).toEqual({ ...expected.right, bytes: expect.anything() })
        if (Either.isRight(expected)) expect(Buffer.from(Either.getOrThrow(actual).bytes)).toEqual(Buffer.from(expected.right.bytes))
        expect(read.nul).toBe(text.includes("\u0000"))
        expect(read.blank).toBe(text.trim() === "")
      }),
      { numRuns: 500 }
    )
  })

  it("decodes a large file in one buffer, pieces of any size", () => {
    const file = Buffer.alloc(3 * 1024 * 1024 + 1)
    for (let i = 0; i < file.length; i++) file[i] = (i * 7919) & 0xff
    const text = "data:text/csv;base64," + file.toString("base64")
    const decoder = dataUriDecoder(10)
    for (let i = 0; i < text.length; i += 65_531) decoder.push(text.slice(i, i + 65_531))
    const read = decoder.finish()
    expect(read.base64).toBe(true)
    expect(Buffer.from(read.bytes).equals(file)).toBe(true)
    expect(Buffer.from(readDataUri(text).bytes).equals(file)).toBe(true)
  })
})
