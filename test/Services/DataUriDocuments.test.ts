/**
 * The document uploads (patient, claim and content files) judge a data URI read piece by piece
 * exactly as they judged the whole text: each rule as it was, on the whole string, is the oracle.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { documentContentTypes as claimTypes, sniffDocumentType } from "../../src/Domain/Billing/DocumentFile.js"
import { documentContentTypes, maxDocumentBytes } from "../../src/Domain/Patients/Records.js"
import { documentFileOf } from "../../src/Services/Billing/DocumentFiles.js"
import { decodeDataUri } from "../../src/Services/Content/ContentFiles.js"
import { type DataUri, dataUriDecoder } from "../../src/Services/DataUri.js"
import { contentMatches, documentMessages, documentOf } from "../../src/Services/Patients/PatientDocuments.js"

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

/** Patient documents, as they were: the trimmed text. */
const patientRule = (file: string) => {
  const match = /^data:([a-z0-9.+/-]+)(?:;[a-z0-9=.-]+)*;base64,/i.exec(file.trim())
  if (match === null) return documentMessages.dataUri
  const contentType = match[1]!.toLowerCase()
  if (!(documentContentTypes as ReadonlyArray<string>).includes(contentType)) return documentMessages.contentType
  const encoded = file.trim().slice(match[0].length)
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) return documentMessages.base64
  if ((encoded.length / 4) * 3 - (encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0) > maxDocumentBytes) return documentMessages.tooLarge
  const bytes = new Uint8Array(Buffer.from(encoded, "base64"))
  if (bytes.byteLength === 0) return documentMessages.empty
  if (!contentMatches(contentType, bytes)) return documentMessages.mismatch
  return { contentType, bytes }
}

/** Claim documents (and signatures), as they were: the untrimmed text. */
const claimRule = (uri: string, maxBytes: number) => {
  const match = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i.exec(uri.slice(0, 100))
  if (match === null) return { problem: "format" }
  const declared = match[1]!.toLowerCase() === "image/jpg" ? "image/jpeg" : match[1]!.toLowerCase()
  if (!(claimTypes as ReadonlyArray<string>).includes(declared)) return { problem: "type" }
  const encoded = uri.slice(match[0].length)
  if (encoded.length === 0) return { problem: "empty" }
  if (Math.floor((encoded.length * 3) / 4) - 2 > maxBytes) return { problem: "tooLarge" }
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) return { problem: "base64" }
  const bytes = new Uint8Array(Buffer.from(encoded, "base64"))
  if (bytes.length > maxBytes) return { problem: "tooLarge" }
  if (sniffDocumentType(bytes) !== declared) return { problem: "mismatch" }
  return { bytes, contentType: declared }
}

/** Content files, as they were: the untrimmed text. */
const contentRule = (uri: string, maxBytes: number) => {
  const match = /^data:[a-z0-9.+-]+\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*;base64,/i.exec(uri.slice(0, 200))
  if (match === null) return "must be a base64 data URI (data:<type>;base64,…)"
  const encoded = uri.slice(match[0].length)
  if (encoded.length === 0) return "can't be blank"
  if (Math.floor((encoded.length * 3) / 4) - 2 > maxBytes) return `is too large (maximum is ${maxBytes / (1024 * 1024)} MB)`
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) return "is not valid base64"
  const bytes = new Uint8Array(Buffer.from(encoded, "base64"))
  if (bytes.byteLength > maxBytes) return `is too large (maximum is ${maxBytes / (1024 * 1024)} MB)`
  return bytes
}

const readInPieces = (text: string, cuts: ReadonlyArray<number>): DataUri => {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  // The size hint varies too, but stays small: the decoder allocates a buffer that size.
  const decoder = dataUriDecoder((cuts[0] ?? 0) % 64)
  let from = 0
  for (const cut of [...at, text.length]) {
    decoder.push(text.slice(from, cut))
    from = cut
  }
  return decoder.finish()
}

/** Bytes compared by value, whatever buffer holds them. */
const plain = (result: unknown): unknown =>
  result instanceof Uint8Array
    ? [...result]
    : typeof result === "object" && result !== null
    ? Object.fromEntries(Object.entries(result).map(([key, value]) => [key, plain(value)]))
    : result

const space = fc.constantFrom(" ", "\n", "\t", "\u00a0", "\ufeff", "")
const pdf = Buffer.from("%PDF-1.4\n%%EOF\n")
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0])
/** A media type and a payload, mostly one that matches it. */
const typedPayload = fc.oneof(
  { arbitrary: fc.constantFrom<[string, Buffer]>(["application/pdf", pdf], ["APPLICATION/PDF", pdf], ["image/png", png], ["image/jpg", jpeg], ["text/plain", Buffer.from("notes ✓")]).map(([type, bytes]) => [type, bytes.toString("base64")] as const), weight: 3 },
  fc.tuple(
    fc.constantFrom("application/pdf", "image/png", "image/jpeg", "text/csv", "image/tiff", "application/x-msdownload", "text/html", "image/svg+xml", "pdf", "a b/c"),
    fc.oneof(
      fc.constantFrom(pdf, png, jpeg, Buffer.from([0xff, 0xfe, 0x00]), Buffer.alloc(0)).map((bytes) => bytes.toString("base64")),
      fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.from(bytes).toString("base64")),
      fc.string({ unit: fc.constantFrom("A", "b", "9", "+", "/", "=", " ", "\n", "*", "\u0000", ",", "é", "😀", "\ud83d"), maxLength: 24 })
    )
  )
)
/** Mostly none; a long one makes the head longer than a claim's or content file's rule reads. */
const parameters = fc.oneof(
  { arbitrary: fc.constant([]), weight: 2 },
  fc.array(fc.oneof(fc.constantFrom(";charset=utf-8", ";name=a.pdf", ";", ";a b", ";x+y"), fc.nat(300).map((n) => `;p=${"q".repeat(n)}`)), { minLength: 1, maxLength: 2 })
)
/** Mostly the well-formed choice, so that accepted files are common too. */
const mostly = <A>(usual: A, ...others: Array<A>) =>
  fc.oneof({ arbitrary: fc.constant(usual), weight: 3 * others.length }, fc.constantFrom(...others))
const scheme = mostly("data:", "DATA:", "dat:", "data", "")
const edgeSpace = fc.oneof({ arbitrary: fc.constant([]), weight: 3 }, fc.array(space, { maxLength: 2 }))
const marker = mostly(";base64,", ";base64", ",", ";BASE64,")
const dataUriText = fc.tuple(edgeSpace, scheme, typedPayload, parameters, marker, edgeSpace)
  .map(([lead, s, [type, data], params, m, trail]) => lead.join("") + s + type + params.join("") + m + data + trail.join(""))
const anyText = fc.oneof(dataUriText, fc.string({ maxLength: 40 }))

describe("document data URIs read piece by piece", () => {
  it("judge as each upload's rule did on the whole text, however the text is cut; characters counted as code points", () => {
    fc.assert(
      fc.property(anyText, fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom(3, 12, 1_000), (text, cuts, maxBytes) => {
        const read = readInPieces(text, cuts)
        expect(plain(documentOf(read))).toEqual(plain(patientRule(text)))
        expect(plain(documentFileOf(read, maxBytes))).toEqual(plain(claimRule(text, maxBytes)))
        expect(plain(decodeDataUri(read, maxBytes))).toEqual(plain(contentRule(text, maxBytes)))
        expect(read.characters).toBe([...text].length)
      }),
      { numRuns: 2000 }
    )
  })
})
