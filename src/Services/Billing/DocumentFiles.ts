/** Reads a claim document sent as a base64 data URI: its bytes, its type, checked by content. */
import { type DocumentContentType, documentContentTypes, sniffDocumentType } from "../../Domain/Billing/DocumentFile.js"

export type DataUriProblem = "format" | "type" | "base64" | "empty" | "tooLarge" | "mismatch"

/** Standard base64 (RFC 4648 §4) with padding: Buffer.from would silently skip anything else. */
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

/** Reads `data:<type>;base64,<data>`: the bytes and type, or why not. */
export const readDocumentDataUri = (
  uri: string,
  maxBytes: number
): { readonly bytes: Uint8Array; readonly contentType: DocumentContentType } | { readonly problem: DataUriProblem } => {
  const match = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i.exec(uri.slice(0, 100))
  if (match === null) return { problem: "format" }
  const declared = match[1]!.toLowerCase() === "image/jpg" ? "image/jpeg" : match[1]!.toLowerCase()
  if (!(documentContentTypes as ReadonlyArray<string>).includes(declared)) return { problem: "type" }
  const encoded = uri.slice(match[0].length)
  if (encoded.length === 0) return { problem: "empty" }
  // The decoded size is known before decoding: refuse early.
  if (Math.floor((encoded.length * 3) / 4) - 2 > maxBytes) return { problem: "tooLarge" }
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) return { problem: "base64" }
  const buffer = Buffer.from(encoded, "base64")
  const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  if (bytes.length > maxBytes) return { problem: "tooLarge" }
  if (sniffDocumentType(bytes) !== declared) return { problem: "mismatch" }
  return { bytes, contentType: declared as DocumentContentType }
}
