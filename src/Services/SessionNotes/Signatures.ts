/**
 * Signature images of addenda and sign-offs: base64 PNG data URIs, checked (PNG signature bytes,
 * size cap, dimensions read from the header before anything is decoded, then a full decode by
 * `pngjs` so a truncated or corrupt file is refused), stored through `ObjectStore` under a key of
 * their SHA-256, and handed out as the spec's base64 PNG data URIs with signed links beside them.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { PNG } from "pngjs"
import { invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { sessionNoteLimits, sessionNoteMessages, signatureUrlMinutes } from "../../Api/SessionNotes/SessionNotes.js"
import { readDocumentDataUri } from "../Billing/DocumentFiles.js"
import { ObjectStore } from "../ObjectStore.js"

export interface StoredSignature {
  readonly key: string
  readonly sha256: string
  readonly bytes: Uint8Array
}

const messages = sessionNoteMessages.signature

export const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex")

/**
 * The PNG's bytes, or the message of why not. The width and height come from the IHDR chunk,
 * which a valid PNG must start with (bytes 12–23), so an image of huge dimensions is refused
 * before `pngjs` allocates its pixels.
 */
export const checkSignaturePng = (uri: string): { readonly bytes: Uint8Array } | { readonly problem: string } => {
  const read = readDocumentDataUri(uri, sessionNoteLimits.signatureBytes)
  if ("problem" in read) {
    switch (read.problem) {
      case "empty":
        return { problem: messages.blank }
      case "tooLarge":
        return { problem: messages.tooLarge }
      default:
        return { problem: messages.png }
    }
  }
  if (read.contentType !== "image/png") return { problem: messages.png }
  const bytes = read.bytes
  if (bytes.length < 33 || Buffer.from(bytes.subarray(12, 16)).toString("latin1") !== "IHDR") return { problem: messages.corrupt }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  if (width === 0 || height === 0) return { problem: messages.corrupt }
  if (width > sessionNoteLimits.signatureSide || height > sessionNoteLimits.signatureSide) return { problem: messages.dimensions }
  try {
    const decoded = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    if (decoded.width !== width || decoded.height !== height) return { problem: messages.corrupt }
  } catch {
    return { problem: messages.corrupt }
  }
  return { bytes }
}

export class Signatures extends Effect.Service<Signatures>()("app/SessionNoteSignatures", {
  effect: Effect.gen(function*() {
    const store = yield* ObjectStore

    /** Checks the image (422 on `field`) without storing it. */
    const check = (field: string, uri: string): Effect.Effect<Uint8Array, ValidationFailed> => {
      const result = checkSignaturePng(uri)
      return "problem" in result ? Effect.fail(invalidField(field, result.problem)) : Effect.succeed(result.bytes)
    }

    /** Stores a checked image under the note; the same image is stored once. */
    const store_ = Effect.fn("Signatures.store")(function*(noteId: number, bytes: Uint8Array): Effect.fn.Return<StoredSignature> {
      yield* Effect.annotateCurrentSpan({ "session_note.id": noteId, "signature.bytes": bytes.length })
      const sha256 = sha256Hex(bytes)
      const key = `session-notes/${noteId}/signature-${sha256}.png`
      yield* store.put(key, bytes, "image/png")
      return { key, sha256, bytes }
    })

    const url = (key: string) => store.signedUrl(key, `${signatureUrlMinutes} minutes`)
    const urlOrNull = (key: string | null) => key === null ? Effect.succeed(null) : url(key)

    /** The image bytes (for the PDF); undefined when the object is gone. */
    const image = (key: string) =>
      Effect.map(store.get(key), (found) => found._tag === "Some" ? found.value.body : undefined)

    /** The image as the spec hands it out: a base64 PNG data URI; null when the object is gone. */
    const dataUri = (key: string) =>
      Effect.map(image(key), (bytes) => bytes === undefined ? null : `data:image/png;base64,${Buffer.from(bytes).toString("base64")}`)
    const dataUriOrNull = (key: string | null) => key === null ? Effect.succeed(null) : dataUri(key)

    return { check, store: store_, url, urlOrNull, image, dataUri, dataUriOrNull } as const
  })
}) {}
