/**
 * The local default `ObjectStore`: objects are files under DATA_DIR/objects/<key>, with their
 * content type in DATA_DIR/objects/.meta/<key>.json (keys cannot start a segment with ".", so
 * neither `.meta` nor `.tmp` can collide with an object). Download links are signed here with an
 * HMAC and served by `objectDownloadRouter` at GET /objects/<key>?expires=…&signature=….
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { checkObjectKey, isValidObjectKey, ObjectStore, type StoredObject, tracedGet } from "../Services/ObjectStore.js"
import { AppConfig, type AppSettings } from "../Services/AppConfig.js"
import { SigningSecret } from "./SigningSecret.js"

export const objectsDir = (dataDir: string) => path.join(dataDir, "objects")

interface Paths {
  readonly body: string
  readonly meta: string
  readonly tmp: string
}

const pathsOf = (dataDir: string, key: string): Paths => {
  const root = objectsDir(dataDir)
  return { body: path.join(root, key), meta: path.join(root, ".meta", `${key}.json`), tmp: path.join(root, ".tmp") }
}

const errnoCode = (error: unknown) =>
  typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined

/** Written aside and renamed into place, so a reader never sees half a file. */
const writeAtomically = async (tmpDir: string, file: string, data: Uint8Array | string) => {
  await fs.mkdir(tmpDir, { recursive: true })
  await fs.mkdir(path.dirname(file), { recursive: true })
  const tmp = path.join(tmpDir, randomBytes(12).toString("hex"))
  try {
    await fs.writeFile(tmp, data)
    await fs.rename(tmp, file)
  } finally {
    await fs.rm(tmp, { force: true })
  }
}

/** Copied aside and renamed into place (a stream copy: the file is never held in memory). */
const copyAtomically = async (tmpDir: string, from: string, to: string) => {
  await fs.mkdir(tmpDir, { recursive: true })
  await fs.mkdir(path.dirname(to), { recursive: true })
  const tmp = path.join(tmpDir, randomBytes(12).toString("hex"))
  try {
    await fs.copyFile(from, tmp)
    await fs.rename(tmp, to)
  } finally {
    await fs.rm(tmp, { force: true })
  }
}

const isMissing = (error: unknown) => ["ENOENT", "EISDIR", "ENOTDIR"].includes(String(errnoCode(error)))

/** None when the key names no file (missing, or a "directory" of other keys). */
const readObject = (dataDir: string, key: string): Effect.Effect<Option.Option<StoredObject>> =>
  Effect.promise(async () => {
    const paths = pathsOf(dataDir, key)
    let body: Buffer
    try {
      body = await fs.readFile(paths.body)
    } catch (error) {
      if (isMissing(error)) return Option.none()
      throw error
    }
    const meta = await fs.readFile(paths.meta, "utf8").then(
      (text) => JSON.parse(text) as { contentType?: unknown },
      () => ({ contentType: undefined })
    )
    const contentType = typeof meta.contentType === "string" ? meta.contentType : "application/octet-stream"
    return Option.some({ body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType })
  })

/** Hex HMAC-SHA256 over "key\nexpires". */
export const signObjectUrl = (secret: Redacted.Redacted<string>, key: string, expires: number): string =>
  createHmac("sha256", Redacted.value(secret)).update(`${key}\n${expires}`).digest("hex")

export const makeDiskObjectStore = (
  settings: Pick<AppSettings, "dataDir" | "publicBaseUrl">,
  secret: Redacted.Redacted<string>
) =>
  ObjectStore.of({
    put: (key, body, contentType) =>
      checkObjectKey(key).pipe(
        Effect.zipRight(Effect.promise(async () => {
          const paths = pathsOf(settings.dataDir, key)
          await writeAtomically(paths.tmp, paths.meta, JSON.stringify({ contentType }))
          await writeAtomically(paths.tmp, paths.body, body)
        })),
        Effect.withSpan("ObjectStore.put", { attributes: { "object.key_length": key.length, "object.bytes": body.byteLength } })
      ),
    get: (key) =>
      tracedGet(key, checkObjectKey(key).pipe(Effect.zipRight(readObject(settings.dataDir, key)))),
    signedUrl: (key, lifetime) =>
      checkObjectKey(key).pipe(
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.map((now) => {
          const expires = Math.ceil((now + Duration.toMillis(lifetime)) / 1000)
          const signature = signObjectUrl(secret, key, expires)
          return `${settings.publicBaseUrl}/objects/${key}?expires=${expires}&signature=${signature}`
        }),
        Effect.withSpan("ObjectStore.signedUrl", { attributes: { "object.key_length": key.length } })
      ),
    delete: (key) =>
      checkObjectKey(key).pipe(
        Effect.zipRight(Effect.promise(async () => {
          const paths = pathsOf(settings.dataDir, key)
          await fs.rm(paths.body, { force: true })
          await fs.rm(paths.meta, { force: true })
        })),
        Effect.withSpan("ObjectStore.delete", { attributes: { "object.key_length": key.length } })
      ),
    putFile: (key, filePath, contentType) =>
      checkObjectKey(key).pipe(
        Effect.zipRight(Effect.promise(async () => {
          const paths = pathsOf(settings.dataDir, key)
          await writeAtomically(paths.tmp, paths.meta, JSON.stringify({ contentType }))
          await copyAtomically(paths.tmp, filePath, paths.body)
        })),
        Effect.withSpan("ObjectStore.putFile", { attributes: { "object.key_length": key.length } })
      ),
    getToFile: (key, filePath) =>
      checkObjectKey(key).pipe(
        Effect.zipRight(Effect.promise(() =>
          fs.copyFile(pathsOf(settings.dataDir, key).body, filePath).then(() => true, (error) => {
            if (isMissing(error)) return false
            throw error
          })
        )),
        Effect.withSpan("ObjectStore.getToFile", { attributes: { "object.key_length": key.length } })
      )
  })

export const DiskObjectStoreLive: Layer.Layer<ObjectStore, never, AppConfig | SigningSecret> = Layer.effect(
  ObjectStore,
  Effect.zipWith(AppConfig, SigningSecret, makeDiskObjectStore)
)

const forbidden = HttpServerResponse.unsafeJson({ errors: "Invalid or expired link" }, { status: 403 })
const notFound = HttpServerResponse.unsafeJson({ errors: "File not found" }, { status: 404 })

const single = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" ? value : undefined)

/** True when `signature` is ours for (key, expires) and `expires` (unix seconds) has not passed. */
export const verifyObjectUrl = (
  secret: Redacted.Redacted<string>,
  key: string,
  expires: string | undefined,
  signature: string | undefined
): Effect.Effect<boolean> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    if (expires === undefined || signature === undefined) return false
    if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false
    const expected = Buffer.from(signObjectUrl(secret, key, Number(expires)), "hex")
    // Constant-time comparison, so response timing does not reveal how much of a forgery matched.
    return timingSafeEqual(Buffer.from(signature, "hex"), expected) && now <= Number(expires) * 1000
  })

/** GET /objects/<key>?expires&signature: serves a disk object to whoever holds a valid link. */
export const objectDownloadHandler = Effect.gen(function*() {
  const config = yield* AppConfig
  const secret = yield* SigningSecret
  const key = (yield* HttpRouter.params)["*"] ?? ""
  const query = yield* HttpServerRequest.ParsedSearchParams
  if (!(yield* verifyObjectUrl(secret, key, single(query["expires"]), single(query["signature"])))) return forbidden
  if (!isValidObjectKey(key)) return notFound
  const found = yield* readObject(config.dataDir, key)
  if (Option.isNone(found)) return notFound
  return HttpServerResponse.uint8Array(found.value.body, {
    contentType: found.value.contentType,
    headers: {
      "cache-control": "private, no-store",
      // Uploads are served from the API's origin: never let one run as a page there.
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox"
    }
  })
})

/** A plain router with the download route, for `HttpRouter`-based apps and tests. */
export const objectDownloadRouter: HttpRouter.HttpRouter<never, AppConfig | SigningSecret> = HttpRouter.empty.pipe(
  HttpRouter.get("/objects/*", objectDownloadHandler)
)

/** Adds the download route to the HttpApi's router (`HttpApiBuilder.Router`). */
export const ObjectDownloadRouteLive: Layer.Layer<never, never, AppConfig | SigningSecret> = HttpApiBuilder.Router.use(
  (router) =>
    Effect.flatMap(
      Effect.context<AppConfig | SigningSecret>(),
      (context) => router.get("/objects/*", Effect.provide(objectDownloadHandler, context))
    )
)
