/** Reads a claim document sent as a base64 data URI: its bytes, its type, checked by content. */
import { type DocumentContentType, documentContentTypes, sniffDocumentType } from "../../Domain/Billing/DocumentFile.js"
import { type DataUri, readDataUri } from "../DataUri.js"

export type DataUriProblem = "format" | "type" | "base64" | "empty" | "tooLarge" | "mismatch"

/** `data:<type>;base64,`, within the text's first 100 characters. */
const documentHead = /^data:([a-z]+\/[a-z0-9.+-]+);base64,$/i
const maxHeadLength = 100

/**
 * Reads `data:<type>;base64,<data>` (untrimmed: whitespace around it is refused as the wrong
 * format or bad base64): the bytes and type, or why not.
 */
export const documentFileOf = (
  uri: DataUri,
  maxBytes: number
): { readonly bytes: Uint8Array; readonly contentType: DocumentContentType } | { readonly problem: DataUriProblem } => {
  const match = uri.leadingSpace === 0 && uri.head.length <= maxHeadLength ? documentHead.exec(uri.head) : null
  if (match === null) return { problem: "format" }
  const declared = match[1]!.toLowerCase() === "image/jpg" ? "image/jpeg" : match[1]!.toLowerCase()
  if (!(documentContentTypes as ReadonlyArray<string>).includes(declared)) return { problem: "type" }
  const encodedLength = uri.encodedLength + uri.trailingSpace
  if (encodedLength === 0) return { problem: "empty" }
  // The decoded size is known from the text's length: refused before its bytes are looked at.
  if (Math.floor((encodedLength * 3) / 4) - 2 > maxBytes) return { problem: "tooLarge" }
  // Standard base64 (RFC 4648 §4) with padding, nothing after it.
  if (!uri.base64 || uri.trailingSpace > 0) return { problem: "base64" }
  const bytes = uri.bytes
  if (bytes.length > maxBytes) return { problem: "tooLarge" }
  if (sniffDocumentType(bytes) !== declared) return { problem: "mismatch" }
  return { bytes, contentType: declared as DocumentContentType }
}

/** `documentFileOf` a data URI given whole. */
export const readDocumentDataUri = (text: string, maxBytes: number) => documentFileOf(readDataUri(text), maxBytes)
