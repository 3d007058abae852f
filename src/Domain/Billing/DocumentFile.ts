/**
 * Claim documents are PDFs or images. The declared type of a data URI is only a claim: the
 * content must start with that format's signature (magic bytes), so a script renamed `.pdf` or an
 * HTML page sent as `image/png` is refused.
 */

export const documentContentTypes = ["application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "image/tiff"] as const
export type DocumentContentType = (typeof documentContentTypes)[number]

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, offset = 0) =>
  bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b)

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

/** The format the content is, by its signature; undefined for anything else. */
export const sniffDocumentType = (bytes: Uint8Array): DocumentContentType | undefined => {
  if (startsWith(bytes, ascii("%PDF-"))) return "application/pdf"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp"
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "image/tiff"
  return undefined
}
