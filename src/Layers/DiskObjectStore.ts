/**
 * The local default `ObjectStore`: objects are files under DATA_DIR/objects/<key>, with their
 * content type in DATA_DIR/objects/.meta/<key>.json (keys cannot start a segment with ".", so
 * neither `.meta` nor `.tmp` can collide with an object). Download links are signed here with an
 * HMAC and served by `objectDownloadRouter` at GET /objects/<key>?expires=…&signature=…, which
 * honours `Range` (206/416) and streams from disk.
 *
 * Multipart uploads live in DATA_DIR/uploads/<upload id>/: `upload.json` (key, content type), and
 * per part `<n>.part` with `<n>.json` (ETag, size). Parts arrive at the signed
 * PUT /objects/uploads/<upload id>/<n>?expires=…&max=…&signature=… (streamed to disk, at most
 * `max` bytes, answering a quoted-MD5 `ETag` like S3); `complete` concatenates them by streaming.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest, NodeStream } from "@effect/platform-node"
import { Clock, Data, Duration, Effect, Layer, Option, Redacted, Stream } from "effect"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Readable, Transform } from "node:stream"
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import { pipeline } from "node:stream/promises"
import {
  checkObjectKey, isValidObjectKey, isValidUploadId, MultipartRejected, ObjectStore, type StoredObject, tracedGet,
  type UploadedPart
} from "../Services/ObjectStore.js"
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

/**
 * Writes `sources` one after another into the new file `target` through one reused buffer. A read
 * stream allocates a fresh buffer a chunk: a 1 GiB upload left up to ~40 MB of dead buffers
 * between collections (RSS), where this holds one megabyte.
 */
const concatenateFiles = async (sources: ReadonlyArray<string>, target: string) => {
  const buffer = Buffer.allocUnsafe(1024 * 1024)
  const out = await fs.open(target, "wx")
  try {
    for (const source of sources) {
      const input = await fs.open(source, "r")
      try {
        for (let read = await input.read(buffer, 0, buffer.length); read.bytesRead > 0; read = await input.read(buffer, 0, buffer.length)) {
          let written = 0
          while (written < read.bytesRead) written += (await out.write(buffer, written, read.bytesRead - written)).bytesWritten
        }
      } finally {
        await input.close()
      }
    }
  } finally {
    await out.close()
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

export const uploadsDir = (dataDir: string) => path.join(dataDir, "uploads")
const uploadDir = (dataDir: string, uploadId: string) => path.join(uploadsDir(dataDir), uploadId)

interface UploadMeta {
  readonly key: string
  readonly contentType: string
}

const readJson = <A>(file: string): Promise<A | undefined> =>
  fs.readFile(file, "utf8").then((text) => JSON.parse(text) as A, (error) => {
    if (isMissing(error)) return undefined
    throw error
  })

/** The parts of an upload on disk, by part number (a part is there once its `<n>.json` is). */
const partsOnDisk = async (dataDir: string, uploadId: string): Promise<Array<UploadedPart>> => {
  const dir = uploadDir(dataDir, uploadId)
  const names = await fs.readdir(dir).catch((error) => {
    if (isMissing(error)) return [] as Array<string>
    throw error
  })
  const parts: Array<UploadedPart> = []
  for (const name of names) {
    const match = /^([1-9][0-9]{0,4})\.json$/.exec(name)
    if (!match) continue
    const info = await readJson<{ etag: string; size: number }>(path.join(dir, name))
    if (info) parts.push({ partNumber: Number(match[1]), etag: info.etag, size: info.size })
  }
  return parts.sort((a, b) => a.partNumber - b.partNumber)
}

/** Hex HMAC-SHA256 over "upload:<id>/<part>\nexpires\nmax": a part PUT link. */
export const signPartUrl = (secret: Redacted.Redacted<string>, uploadId: string, partNumber: number, expires: number, max: number) =>
  createHmac("sha256", Redacted.value(secret)).update(`upload:${uploadId}/${partNumber}\n${expires}\n${max}`).digest("hex")

/** Hex HMAC-SHA256 over "key\nexpires". */
export const signObjectUrl = (secret: Redacted.Redacted<string>, key: string, expires: number): string =>
  createHmac("sha256", Redacted.value(secret)).update(`${key}\n${expires}`).digest("hex")

export const makeDiskObjectStore = (
  settings: Pick<AppSettings, "dataDir" | "publicBaseUrl">,
  secret: Redacted.Redacted<string>
) =>
  ObjectStore.of({
    put: Effect.fn("ObjectStore.put")(function*(key, body, contentType) {
      yield* Effect.annotateCurrentSpan({ "object.key_length": key.length, "object.bytes": body.byteLength })
      yield* checkObjectKey(key)
      yield* Effect.promise(async () => {
        const paths = pathsOf(settings.dataDir, key)
        await writeAtomically(paths.tmp, paths.meta, JSON.stringify({ contentType }))
        await writeAtomically(paths.tmp, paths.body, body)
      })
    }),
    get: (key) =>
      tracedGet(key, checkObjectKey(key).pipe(Effect.zipRight(readObject(settings.dataDir, key)))),
    signedUrl: Effect.fn("ObjectStore.signedUrl")(function*(key, lifetime) {
      yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
      yield* checkObjectKey(key)
      const now = yield* Clock.currentTimeMillis
      const expires = Math.ceil((now + Duration.toMillis(lifetime)) / 1000)
      const signature = signObjectUrl(secret, key, expires)
      return `${settings.publicBaseUrl}/objects/${key}?expires=${expires}&signature=${signature}`
    }),
    delete: Effect.fn("ObjectStore.delete")(function*(key) {
      yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
      yield* checkObjectKey(key)
      yield* Effect.promise(async () => {
        const paths = pathsOf(settings.dataDir, key)
        await fs.rm(paths.body, { force: true })
        await fs.rm(paths.meta, { force: true })
      })
    }),
    putFile: Effect.fn("ObjectStore.putFile")(function*(key, filePath, contentType) {
      yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
      yield* checkObjectKey(key)
      yield* Effect.promise(async () => {
        const paths = pathsOf(settings.dataDir, key)
        await writeAtomically(paths.tmp, paths.meta, JSON.stringify({ contentType }))
        await copyAtomically(paths.tmp, filePath, paths.body)
      })
    }),
    getToFile: Effect.fn("ObjectStore.getToFile")(function*(key, filePath) {
      yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
      yield* checkObjectKey(key)
      return yield* Effect.promise(() =>
        fs.copyFile(pathsOf(settings.dataDir, key).body, filePath).then(() => true, (error) => {
          if (isMissing(error)) return false
          throw error
        })
      )
    }),
    multipart: {
      create: Effect.fn("ObjectStore.multipart.create")(function*(key, contentType) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
        yield* checkObjectKey(key)
        return yield* Effect.promise(async () => {
          const uploadId = randomBytes(16).toString("hex")
          const dir = uploadDir(settings.dataDir, uploadId)
          await fs.mkdir(dir, { recursive: true })
          await fs.writeFile(path.join(dir, "upload.json"), JSON.stringify({ key, contentType } satisfies UploadMeta))
          return uploadId
        })
      }),
      presignPart: (key, uploadId, partNumber, lifetime, maxBytes) =>
        checkObjectKey(key).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.map((now) => {
            const expires = Math.ceil((now + Duration.toMillis(lifetime)) / 1000)
            const signature = signPartUrl(secret, uploadId, partNumber, expires, maxBytes)
            return `${settings.publicBaseUrl}/objects/uploads/${uploadId}/${partNumber}?expires=${expires}&max=${maxBytes}&signature=${signature}`
          })
        ),
      listParts: Effect.fn("ObjectStore.multipart.listParts")(function*(key, uploadId) {
        yield* checkObjectKey(key)
        return yield* Effect.promise(async () => {
          if (!isValidUploadId(uploadId)) return []
          const meta = await readJson<UploadMeta>(path.join(uploadDir(settings.dataDir, uploadId), "upload.json"))
          return meta?.key === key ? await partsOnDisk(settings.dataDir, uploadId) : []
        })
      }),
      complete: Effect.fn("ObjectStore.multipart.complete")(function*(key, uploadId, parts) {
        yield* Effect.annotateCurrentSpan({ "object.parts": parts.length })
        yield* checkObjectKey(key)
        return yield* Effect.tryPromise({
          try: async () => {
            const dir = uploadDir(settings.dataDir, uploadId)
            const meta = isValidUploadId(uploadId) ? await readJson<UploadMeta>(path.join(dir, "upload.json")) : undefined
            if (meta?.key !== key) throw new MultipartRejected({ reason: "NoSuchUpload" })
            const stored = new Map((await partsOnDisk(settings.dataDir, uploadId)).map((p) => [p.partNumber, p]))
            let previous = 0
            for (const part of parts) {
              if (part.partNumber <= previous) throw new MultipartRejected({ reason: "InvalidPartOrder" })
              previous = part.partNumber
              if (stored.get(part.partNumber)?.etag !== part.etag) throw new MultipartRejected({ reason: "InvalidPart" })
            }
            if (parts.length === 0) throw new MultipartRejected({ reason: "InvalidPart" })
            const paths = pathsOf(settings.dataDir, key)
            await fs.mkdir(paths.tmp, { recursive: true })
            await fs.mkdir(path.dirname(paths.body), { recursive: true })
            const tmp = path.join(paths.tmp, randomBytes(12).toString("hex"))
            try {
              await concatenateFiles(parts.map((part) => path.join(dir, `${part.partNumber}.part`)), tmp)
              await writeAtomically(paths.tmp, paths.meta, JSON.stringify({ contentType: meta.contentType }))
              await fs.rename(tmp, paths.body)
            } finally {
              await fs.rm(tmp, { force: true })
            }
            await fs.rm(dir, { recursive: true, force: true })
            return parts.reduce((sum, part) => sum + stored.get(part.partNumber)!.size, 0)
          },
          catch: (error) => error
        }).pipe(Effect.catchAll((error) => error instanceof MultipartRejected ? Effect.fail(error) : Effect.die(error)))
      }),
      abort: Effect.fn("ObjectStore.multipart.abort")(function*(key, uploadId) {
        yield* checkObjectKey(key)
        yield* Effect.promise(async () => {
          if (!isValidUploadId(uploadId)) return
          const dir = uploadDir(settings.dataDir, uploadId)
          const meta = await readJson<UploadMeta>(path.join(dir, "upload.json"))
          if (meta?.key === key) await fs.rm(dir, { recursive: true, force: true })
        })
      })
    }
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

const downloadHeaders = {
  "cache-control": "private, no-store",
  // Uploads are served from the API's origin: never let one run as a page there.
  "x-content-type-options": "nosniff",
  "content-security-policy": "sandbox",
  "accept-ranges": "bytes"
}

/**
 * One `bytes=` range of a `size`-byte file: [start, end] inclusive; "unsatisfiable" for a range
 * past the end; undefined (serve it whole) for no header, a malformed one, or several ranges.
 */
export const parseRange = (header: string | undefined, size: number): { start: number; end: number } | "unsatisfiable" | undefined => {
  if (header === undefined) return undefined
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim())
  if (!match || (match[1] === "" && match[2] === "")) return undefined
  if (match[1] === "") {
    const suffix = Number(match[2])
    if (suffix === 0 || size === 0) return "unsatisfiable"
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1)
  if (match[2] !== "" && Number(match[2]) < start) return undefined
  if (start >= size) return "unsatisfiable"
  return { start, end }
}

const fileStream = (file: string, range?: { start: number; end: number }) =>
  NodeStream.fromReadable<unknown, Uint8Array>(() => createReadStream(file, range), (error) => error)

/**
 * GET /objects/<key>?expires&signature: serves a disk object to whoever holds a valid link,
 * streamed from disk; a `Range: bytes=…` header gets 206 with that part, or 416.
 */
export const objectDownloadHandler = Effect.gen(function*() {
  const config = yield* AppConfig
  const secret = yield* SigningSecret
  const key = (yield* HttpRouter.params)["*"] ?? ""
  const query = yield* HttpServerRequest.ParsedSearchParams
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!(yield* verifyObjectUrl(secret, key, single(query["expires"]), single(query["signature"])))) return forbidden
  if (!isValidObjectKey(key)) return notFound
  const paths = pathsOf(config.dataDir, key)
  const found = yield* Effect.promise(async () => {
    try {
      const info = await fs.stat(paths.body)
      if (!info.isFile()) return undefined
      const meta = await readJson<{ contentType?: unknown }>(paths.meta).catch(() => undefined)
      return { size: info.size, contentType: typeof meta?.contentType === "string" ? meta.contentType : "application/octet-stream" }
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
  })
  if (found === undefined) return notFound
  const range = parseRange(request.headers["range"], found.size)
  if (range === "unsatisfiable") {
    return HttpServerResponse.empty({ status: 416, headers: { ...downloadHeaders, "content-range": `bytes */${found.size}` } })
  }
  if (range === undefined) {
    return HttpServerResponse.stream(fileStream(paths.body), {
      contentType: found.contentType,
      contentLength: found.size,
      headers: downloadHeaders
    })
  }
  return HttpServerResponse.stream(fileStream(paths.body, range), {
    status: 206,
    contentType: found.contentType,
    contentLength: range.end - range.start + 1,
    headers: { ...downloadHeaders, "content-range": `bytes ${range.start}-${range.end}/${found.size}` }
  })
})

/** True when `signature` is ours for this part link and `expires` has not passed. */
const verifyPartUrl = (
  secret: Redacted.Redacted<string>,
  uploadId: string,
  partNumber: number,
  expires: string | undefined,
  max: string | undefined,
  signature: string | undefined
): Effect.Effect<boolean> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    if (expires === undefined || max === undefined || signature === undefined) return false
    if (!/^\d{1,12}$/.test(expires) || !/^\d{1,12}$/.test(max) || !/^[0-9a-f]{64}$/.test(signature)) return false
    const expected = Buffer.from(signPartUrl(secret, uploadId, partNumber, Number(expires), Number(max)), "hex")
    return timingSafeEqual(Buffer.from(signature, "hex"), expected) && now <= Number(expires) * 1000
  })

class PartTooLarge extends Data.TaggedError("PartTooLarge") {}

/** Counts and hashes what flows through; fails past `max` bytes. */
const measuring = (max: number) => {
  const hash = createHash("md5")
  let size = 0
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length
      if (size > max) return callback(new PartTooLarge())
      hash.update(chunk)
      callback(null, chunk)
    }
  })
  return { transform, result: () => ({ size, etag: `"${hash.digest("hex")}"` }) }
}

/**
 * PUT /objects/uploads/<upload id>/<part>?expires&max&signature: stores one part of a disk
 * multipart upload (a part sent again replaces it). 200 with the part's `ETag`; 403 for a bad or
 * expired link; 404 for an upload that is gone; 413 past `max` bytes.
 */
export const partUploadHandler = Effect.gen(function*() {
  const config = yield* AppConfig
  const secret = yield* SigningSecret
  const params = yield* HttpRouter.params
  const uploadId = params["uploadId"] ?? ""
  const partText = params["part"] ?? ""
  const query = yield* HttpServerRequest.ParsedSearchParams
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!isValidUploadId(uploadId) || !/^[1-9][0-9]{0,4}$/.test(partText) || Number(partText) > 10_000) return notFound
  const partNumber = Number(partText)
  const max = single(query["max"])
  if (!(yield* verifyPartUrl(secret, uploadId, partNumber, single(query["expires"]), max, single(query["signature"])))) {
    return forbidden
  }
  const dir = uploadDir(config.dataDir, uploadId)
  const declared = Number(request.headers["content-length"] ?? 0)
  if (declared > Number(max)) return partTooLarge
  // The Node request itself when served by Node (so a refused part can be drained, not reset), else its body stream.
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  const incoming = source instanceof Readable ? source : Readable.fromWeb(Stream.toReadableStream(request.stream) as WebReadableStream)
  const outcome = yield* Effect.promise(async () => {
    if ((await readJson<UploadMeta>(path.join(dir, "upload.json"))) === undefined) {
      incoming.resume()
      return "missing" as const
    }
    const tmp = path.join(dir, `.tmp-${randomBytes(8).toString("hex")}`)
    const meter = measuring(Number(max))
    try {
      await pipeline(incoming, meter.transform, createWriteStream(tmp))
      const result = meter.result()
      await fs.rename(tmp, path.join(dir, `${partNumber}.part`))
      await writeAtomically(dir, path.join(dir, `${partNumber}.json`), JSON.stringify(result))
      return result
    } catch (error) {
      if (error instanceof PartTooLarge) {
        incoming.resume()
        return "tooLarge" as const
      }
      // The upload was aborted meanwhile, or the client went away mid-part.
      return "missing" as const
    } finally {
      await fs.rm(tmp, { force: true })
    }
  })
  if (outcome === "missing") return uploadNotFound
  if (outcome === "tooLarge") return partTooLarge
  return HttpServerResponse.empty({ status: 200, headers: { etag: outcome.etag, "cache-control": "no-store" } })
})

const uploadNotFound = HttpServerResponse.unsafeJson({ errors: "Upload not found" }, { status: 404 })
const partTooLarge = HttpServerResponse.unsafeJson({ errors: "Part is too large" }, { status: 413, headers: { connection: "close" } })

/** A plain router with the download route, for `HttpRouter`-based apps and tests. */
export const objectDownloadRouter: HttpRouter.HttpRouter<never, AppConfig | SigningSecret> = HttpRouter.empty.pipe(
  HttpRouter.put("/objects/uploads/:uploadId/:part", partUploadHandler),
  HttpRouter.get("/objects/*", objectDownloadHandler)
)

/** Adds the download route to the HttpApi's router (`HttpApiBuilder.Router`). */
export const ObjectDownloadRouteLive: Layer.Layer<never, never, AppConfig | SigningSecret> = HttpApiBuilder.Router.use(
  (router) =>
    Effect.flatMap(
      Effect.context<AppConfig | SigningSecret>(),
      (context) =>
        Effect.zipRight(
          router.put("/objects/uploads/:uploadId/:part", Effect.provide(partUploadHandler, context)),
          router.get("/objects/*", Effect.provide(objectDownloadHandler, context))
        )
    )
)
