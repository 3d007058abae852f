/**
 * Files content pieces are stored as: PDF, MP3, MP4, PNG or JPEG up to 50 MB, sent as
 * a base64 data URI. The type is sniffed from the bytes (`file-type`), whatever the data URI
 * declares; the file goes to `ObjectStore` and its key is recorded for bundles to name.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { maxContentFileBytes, UploadedContentFile } from "../../Api/Content/AdminContent.js"
import { invalidField } from "../../Api/Errors.js"
import { AuditLog } from "../AuditLog.js"
import { type DataUri, receivedDataUri } from "../DataUri.js"
import { ObjectStore } from "../ObjectStore.js"
import { ContentFilesRepo } from "./ContentFilesRepo.js"

/** What a piece may be stored as: sniffed extension → content type. */
export const contentFileTypes: Readonly<Record<string, string>> = {
  pdf: "application/pdf",
  mp3: "audio/mpeg",
  mp4: "video/mp4",
  png: "image/png",
  jpg: "image/jpeg"
}

/** `data:<type>;` any parameters, `base64,`, within the text's first 200 characters. */
const contentHead = /^data:[a-z0-9.+-]+\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*;base64,$/i
const maxHeadLength = 200

/** `data:<anything>;base64,<data>` (untrimmed) → the bytes, or the message for `file`. */
export const decodeDataUri = (uri: DataUri, maxBytes: number): Uint8Array | string => {
  if (uri.leadingSpace > 0 || uri.head.length > maxHeadLength || !contentHead.test(uri.head)) return "must be a base64 data URI (data:<type>;base64,…)"
  const encodedLength = uri.encodedLength + uri.trailingSpace
  if (encodedLength === 0) return "can't be blank"
  if (Math.floor((encodedLength * 3) / 4) - 2 > maxBytes) return `is too large (maximum is ${maxBytes / (1024 * 1024)} MB)`
  if (!uri.base64 || uri.trailingSpace > 0) return "is not valid base64"
  if (uri.bytes.byteLength > maxBytes) return `is too large (maximum is ${maxBytes / (1024 * 1024)} MB)`
  return uri.bytes
}

export class ContentFiles extends Effect.Service<ContentFiles>()("app/ContentFiles", {
  effect: Effect.gen(function*() {
    const files = yield* ContentFilesRepo
    const store = yield* ObjectStore
    const audit = yield* AuditLog

    const upload = Effect.fn("ContentFiles.upload")(function*(actorId: number, file: string, filename: string) {
      const bytes = decodeDataUri(yield* receivedDataUri(file), maxContentFileBytes)
      if (typeof bytes === "string") return yield* Effect.fail(invalidField("file", bytes))
      // file-type (and its tokenizers) loads on first upload, not with every instance.
      const { fileTypeFromBuffer } = yield* Effect.promise(() => import("file-type"))
      const sniffed = yield* Effect.promise(() => fileTypeFromBuffer(bytes).catch(() => undefined))
      const contentType = sniffed === undefined ? undefined : contentFileTypes[sniffed.ext]
      if (sniffed === undefined || contentType === undefined || contentType !== sniffed.mime) {
        return yield* Effect.fail(invalidField("file", "must be a PDF, MP3, MP4, PNG or JPEG"))
      }
      const key = `content/files/${randomUUID()}.${sniffed.ext}`
      yield* store.put(key, bytes, contentType)
      // A file whose row was not written is no one's: remove it again.
      yield* files.insert({ object_key: key, filename: filename.trim(), content_type: contentType, size: bytes.byteLength, created_by_id: actorId })
        .pipe(Effect.onError(() => store.delete(key)))
      yield* audit.record({ actorId, action: "content_file.create", targetType: "content_file", targetId: null })
      yield* Effect.annotateCurrentSpan({ "content_file.bytes": bytes.byteLength })
      return UploadedContentFile.make({ object_key: key })
    })

    return { upload } as const
  }),
  dependencies: [ContentFilesRepo.Default]
}) {}
