/** Files (uploads, generated reports) by key; downloads go through time-limited signed URLs. */
import { Context, Data, type Duration, Effect, Option } from "effect"

export interface StoredObject {
  readonly body: Uint8Array
  readonly contentType: string
}

export interface ObjectStoreShape {
  readonly put: (key: string, body: Uint8Array, contentType: string) => Effect.Effect<void>
  readonly get: (key: string) => Effect.Effect<Option.Option<StoredObject>>
  /** A URL anyone holding it can GET until `lifetime` has passed. */
  readonly signedUrl: (key: string, lifetime: Duration.DurationInput) => Effect.Effect<string>
  readonly delete: (key: string) => Effect.Effect<void>
  /**
   * Streams a local file into the store (large files: generated reports, videos), never holding
   * it in memory. The file is left in place; the caller owns it.
   */
  readonly putFile: (key: string, filePath: string, contentType: string) => Effect.Effect<void>
  /** Streams the object into a local file (created or truncated); false when there is no object. */
  readonly getToFile: (key: string, filePath: string) => Effect.Effect<boolean>
  /**
   * Multipart uploads (large files the client sends in parts, straight to the store, resumable):
   * S3's CreateMultipartUpload / UploadPart / ListParts / Complete / Abort, and the same contract
   * on disk (parts PUT to the app's signed `/objects/uploads/<id>/<part>` route) and in memory.
   */
  readonly multipart: MultipartShape
}

export interface UploadedPart {
  readonly partNumber: number
  /** As the store answered the part's PUT: quoted (`"<md5 hex>"` on disk and S3). */
  readonly etag: string
  readonly size: number
}

export interface PartToComplete {
  readonly partNumber: number
  readonly etag: string
}

/**
 * The store cannot be reached (S3 down, a network partition): raised as a defect, like every store
 * failure, but one the API answers 503 with `Retry-After` for, as for an unreachable database.
 */
export class ObjectStoreUnavailable extends Data.TaggedError("ObjectStoreUnavailable")<{ readonly reason: string }> {}

/** The store refused to assemble the parts: one is missing, unknown, out of order or too small. */
export class MultipartRejected extends Data.TaggedError("MultipartRejected")<{ readonly reason: string }> {}

export interface MultipartShape {
  /** Starts an upload of `key`; the id names it in every later call. */
  readonly create: (key: string, contentType: string) => Effect.Effect<string>
  /**
   * A URL the client PUTs part `partNumber` (1 … 10,000) to until `lifetime` has passed; the
   * response's `ETag` is what `complete` needs. The disk store refuses bodies over `maxBytes`.
   */
  readonly presignPart: (
    key: string,
    uploadId: string,
    partNumber: number,
    lifetime: Duration.DurationInput,
    maxBytes: number
  ) => Effect.Effect<string>
  /** The parts stored so far, by part number; empty when the upload is unknown (completed, aborted). */
  readonly listParts: (key: string, uploadId: string) => Effect.Effect<ReadonlyArray<UploadedPart>>
  /** Assembles the parts, in order, into the object; answers its size in bytes. */
  readonly complete: (
    key: string,
    uploadId: string,
    parts: ReadonlyArray<PartToComplete>
  ) => Effect.Effect<number, MultipartRejected>
  /** Drops the upload and its parts; an unknown upload is fine. */
  readonly abort: (key: string, uploadId: string) => Effect.Effect<void>
}

/** Upload ids the disk and memory stores make, and the only ones their part route takes. */
export const isValidUploadId = (id: string): boolean => /^[0-9a-f]{32}$/.test(id)

export class ObjectStore extends Context.Tag("app/ObjectStore")<ObjectStore, ObjectStoreShape>() {}

/**
 * Keys are chosen by the application, never by clients, so a bad key is a bug (a defect), not an
 * error to handle. The rule keeps keys safe as relative file paths and as S3 keys: `/`-separated
 * segments of [A-Za-z0-9._-], each starting with a letter or digit (no `..`, no hidden files).
 */
export const isValidObjectKey = (key: string): boolean =>
  key.length > 0 && key.length <= 1024 && /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/.test(key)

export class InvalidObjectKey extends Data.TaggedError("InvalidObjectKey")<{ readonly key: string }> {
  override get message() {
    return "Invalid object key"
  }
}

/** Dies with `InvalidObjectKey` unless the key follows the rule above. */
export const checkObjectKey = (key: string): Effect.Effect<void> =>
  isValidObjectKey(key) ? Effect.void : Effect.die(new InvalidObjectKey({ key }))

/** The span every store's `get` records: the key's length, found or not, and the size. */
export const tracedGet = Effect.fn("ObjectStore.get")(function*<E, R>(key: string, lookup: Effect.Effect<Option.Option<StoredObject>, E, R>) {
  yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
  const found = yield* lookup
  yield* Effect.annotateCurrentSpan({
    "object.found": Option.isSome(found),
    "object.bytes": Option.match(found, { onNone: () => 0, onSome: (o) => o.body.byteLength })
  })
  return found
})
