/** In-memory `ObjectStore` for tests; its signed URLs (`memory://<key>?expires=…`) are not fetchable. */
import { Clock, Context, Duration, Effect, Layer, Option, Ref } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { checkObjectKey, MultipartRejected, ObjectStore, type StoredObject } from "../Services/ObjectStore.js"

/** Bytes copied between turns of the event loop. */
const copyPieceBytes = 1024 * 1024

/**
 * A copy of `body`, made a megabyte at a time with the event loop free between pieces, as a real
 * store's upload would leave it: writing a fresh 60 MB buffer in one go held the loop ~260 ms on
 * a machine with slow page faults, which the hostile-file test (MifHostile) counts against the app.
 */
const copied = (body: Uint8Array) =>
  Effect.promise(async () => {
    const copy = new Uint8Array(body.byteLength)
    for (let offset = 0; offset < body.byteLength; offset += copyPieceBytes) {
      copy.set(body.subarray(offset, offset + copyPieceBytes), offset)
      if (offset + copyPieceBytes < body.byteLength) await new Promise((resolve) => setImmediate(resolve))
    }
    return copy
  })

interface MemoryUpload {
  readonly key: string
  readonly contentType: string
  readonly parts: ReadonlyMap<number, { readonly body: Uint8Array; readonly etag: string }>
}

/** The test's handle on the in-memory store. */
export class MemoryObjectStore extends Context.Tag("app/MemoryObjectStore")<MemoryObjectStore, {
  readonly objects: Effect.Effect<ReadonlyMap<string, StoredObject>>
  /** Multipart uploads in progress, by id. */
  readonly uploads: Effect.Effect<ReadonlyMap<string, MemoryUpload>>
  /**
   * What a client's PUT to a presigned part URL does: stores the part (replacing one sent
   * before) and answers its ETag; None when the upload is gone.
   */
  readonly uploadPart: (uploadId: string, partNumber: number, body: Uint8Array) => Effect.Effect<Option.Option<string>>
}>() {
  /** Provides both `ObjectStore` and this handle, sharing one map. */
  static readonly layer: Layer.Layer<ObjectStore | MemoryObjectStore> = Layer.effectContext(Effect.gen(function*() {
    const objects = yield* Ref.make<ReadonlyMap<string, StoredObject>>(new Map())
    const uploads = yield* Ref.make<ReadonlyMap<string, MemoryUpload>>(new Map())
    const withoutUpload = (uploadId: string) => Ref.update(uploads, (map) => {
      const next = new Map(map)
      next.delete(uploadId)
      return next
    })
    const uploadOf = (key: string, uploadId: string) =>
      Effect.map(Ref.get(uploads), (map) => Option.filter(Option.fromNullable(map.get(uploadId)), (u) => u.key === key))
    const put = (key: string, body: Uint8Array, contentType: string) =>
      checkObjectKey(key).pipe(
        // Copied, so a caller reusing its buffer cannot change what was stored.
        Effect.zipRight(copied(body)),
        Effect.flatMap((copy) => Ref.update(objects, (map) => new Map(map).set(key, { body: copy, contentType })))
      )
    const get = (key: string) =>
      checkObjectKey(key).pipe(Effect.zipRight(Effect.map(Ref.get(objects), (map) => Option.fromNullable(map.get(key)))))
    return Context.make(ObjectStore, {
      put,
      get,
      putFile: (key, filePath, contentType) =>
        Effect.flatMap(Effect.promise(() => fs.readFile(filePath)), (body) => put(key, body, contentType)),
      getToFile: (key, filePath) =>
        Effect.flatMap(get(key), Option.match({
          onNone: () => Effect.succeed(false),
          onSome: (object) => Effect.as(Effect.promise(() => fs.writeFile(filePath, object.body)), true)
        })),
      signedUrl: (key, lifetime) =>
        checkObjectKey(key).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.map((now) => `memory://${key}?expires=${Math.ceil((now + Duration.toMillis(lifetime)) / 1000)}`)
        ),
      delete: (key) =>
        checkObjectKey(key).pipe(Effect.zipRight(Ref.update(objects, (map) => {
          const next = new Map(map)
          next.delete(key)
          return next
        }))),
      multipart: {
        create: (key, contentType) =>
          checkObjectKey(key).pipe(
            Effect.zipRight(Effect.sync(() => randomBytes(16).toString("hex"))),
            Effect.tap((id) => Ref.update(uploads, (map) => new Map(map).set(id, { key, contentType, parts: new Map() })))
          ),
        presignPart: (key, uploadId, partNumber, lifetime, maxBytes) =>
          checkObjectKey(key).pipe(
            Effect.zipRight(Clock.currentTimeMillis),
            Effect.map((now) =>
              `memory://uploads/${uploadId}/${partNumber}?expires=${Math.ceil((now + Duration.toMillis(lifetime)) / 1000)}&max=${maxBytes}`
            )
          ),
        listParts: (key, uploadId) =>
          Effect.map(uploadOf(key, uploadId), Option.match({
            onNone: () => [],
            onSome: (upload) =>
              [...upload.parts].sort(([a], [b]) => a - b).map(([partNumber, part]) => ({ partNumber, etag: part.etag, size: part.body.byteLength }))
          })),
        complete: (key, uploadId, parts) =>
          Effect.gen(function*() {
            const found = yield* uploadOf(key, uploadId)
            if (Option.isNone(found)) return yield* Effect.fail(new MultipartRejected({ reason: "NoSuchUpload" }))
            if (parts.length === 0) return yield* Effect.fail(new MultipartRejected({ reason: "InvalidPart" }))
            const bodies: Array<Uint8Array> = []
            let previous = 0
            for (const part of parts) {
              if (part.partNumber <= previous) return yield* Effect.fail(new MultipartRejected({ reason: "InvalidPartOrder" }))
              previous = part.partNumber
              const stored = found.value.parts.get(part.partNumber)
              if (stored?.etag !== part.etag) return yield* Effect.fail(new MultipartRejected({ reason: "InvalidPart" }))
              bodies.push(stored.body)
            }
            const body = Buffer.concat(bodies)
            yield* put(key, new Uint8Array(body.buffer, body.byteOffset, body.byteLength), found.value.contentType)
            yield* withoutUpload(uploadId)
            return body.byteLength
          }),
        abort: (key, uploadId) =>
          Effect.flatMap(uploadOf(key, uploadId), (found) => (Option.isSome(found) ? withoutUpload(uploadId) : Effect.void))
      }
    }).pipe(Context.add(MemoryObjectStore, {
      objects: Ref.get(objects),
      uploads: Ref.get(uploads),
      uploadPart: (uploadId, partNumber, body) =>
        Ref.modify(uploads, (map) => {
          const upload = map.get(uploadId)
          if (upload === undefined) return [Option.none(), map]
          const etag = `"${createHash("md5").update(body).digest("hex")}"`
          const parts = new Map(upload.parts).set(partNumber, { body: body.slice(), etag })
          return [Option.some(etag), new Map(map).set(uploadId, { ...upload, parts })]
        })
    }))
  }))
}

export const MemoryObjectStoreLive = MemoryObjectStore.layer
