/** In-memory `ObjectStore` for tests; its signed URLs (`memory://<key>?expires=…`) are not fetchable. */
import { Clock, Context, Duration, Effect, Layer, Option, Ref } from "effect"
import * as fs from "node:fs/promises"
import { checkObjectKey, ObjectStore, type StoredObject } from "../Services/ObjectStore.js"

/** The test's handle on the in-memory store. */
export class MemoryObjectStore extends Context.Tag("app/MemoryObjectStore")<MemoryObjectStore, {
  readonly objects: Effect.Effect<ReadonlyMap<string, StoredObject>>
}>() {
  /** Provides both `ObjectStore` and this handle, sharing one map. */
  static readonly layer: Layer.Layer<ObjectStore | MemoryObjectStore> = Layer.effectContext(Effect.gen(function*() {
    const objects = yield* Ref.make<ReadonlyMap<string, StoredObject>>(new Map())
    const put = (key: string, body: Uint8Array, contentType: string) =>
      checkObjectKey(key).pipe(
        // Copied, so a caller reusing its buffer cannot change what was stored.
        Effect.zipRight(Ref.update(objects, (map) => new Map(map).set(key, { body: body.slice(), contentType })))
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
        })))
    }).pipe(Context.add(MemoryObjectStore, { objects: Ref.get(objects) }))
  }))
}

export const MemoryObjectStoreLive = MemoryObjectStore.layer
