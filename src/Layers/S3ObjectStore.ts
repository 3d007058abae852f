/**
 * Production `ObjectStore`: one S3 bucket (or an S3-compatible service via S3_ENDPOINT), with
 * presigned GET URLs for downloads.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand
} from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createReadStream, createWriteStream } from "node:fs"
import { stat } from "node:fs/promises"
import type { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import {
  checkObjectKey,
  MultipartRejected,
  ObjectStore,
  ObjectStoreUnavailable,
  tracedGet,
  type UploadedPart
} from "../Services/ObjectStore.js"
import { AppConfig, type S3Settings } from "../Services/AppConfig.js"

/** SigV4 presigned URLs cannot outlive 7 days. */
const maxPresignSeconds = 7 * 24 * 60 * 60

const clientConfig = (settings: S3Settings): S3ClientConfig => ({
  region: settings.region,
  forcePathStyle: settings.forcePathStyle,
  ...Option.match(settings.endpoint, {
    onNone: () => ({}),
    // S3-compatible services often reject the SDK's default streaming checksum trailers.
    onSome: (endpoint) => ({
      endpoint,
      requestChecksumCalculation: "WHEN_REQUIRED" as const,
      responseChecksumValidation: "WHEN_REQUIRED" as const
    })
  }),
  // Without explicit keys the SDK's default chain applies (env, instance/task role …).
  ...Option.match(Option.all([settings.accessKeyId, settings.secretAccessKey]), {
    onNone: () => ({}),
    onSome: ([accessKeyId, secretAccessKey]) => ({
      credentials: { accessKeyId, secretAccessKey: Redacted.value(secretAccessKey) }
    })
  })
})

const isNotFound = (error: unknown) =>
  typeof error === "object" && error !== null &&
  ((error as { name?: unknown }).name === "NoSuchKey" ||
    (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode === 404)

const errorName = (error: unknown) =>
  typeof error === "object" && error !== null ? String((error as { name?: unknown; Code?: unknown }).name ?? "") : ""

/** What CompleteMultipartUpload answers for parts the client got wrong: the caller's 422, not a defect. */
const rejectedParts = new Set(["InvalidPart", "InvalidPartOrder", "EntityTooSmall", "NoSuchUpload"])

/** Socket errors of an endpoint that cannot be reached, and S3's own "try again later" answers. */
const unreachableCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"])
const unavailableNames = new Set(["TimeoutError", "RequestTimeout", "ServiceUnavailable", "SlowDown", "InternalError"])

const isUnreachable = (error: unknown) => {
  if (typeof error !== "object" || error === null) return false
  const { code, name, $metadata } = error as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: unknown } }
  const status = $metadata?.httpStatusCode
  return (typeof code === "string" && unreachableCodes.has(code)) || (typeof name === "string" && unavailableNames.has(name)) ||
    (typeof status === "number" && status >= 500)
}

/** An unreachable store's error as the defect the API answers 503 for; any other as it is. */
const asUnavailable = (error: unknown) => isUnreachable(error) ? new ObjectStoreUnavailable({ reason: errorName(error) || "unreachable" }) : error

/** `Effect.promise` for a call to S3: a rejection is a defect, `ObjectStoreUnavailable` when S3 cannot be reached. */
const storeCall = <A>(call: (signal: AbortSignal) => Promise<A>) =>
  Effect.promise((signal) => call(signal).catch((error: unknown) => Promise.reject(asUnavailable(error))))

export const makeS3ObjectStore = (settings: S3Settings) =>
  Effect.gen(function*() {
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new S3Client(clientConfig(settings))),
      (client) => Effect.sync(() => client.destroy())
    )
    const Bucket = settings.bucket
    // Storage failures are defects: callers cannot act on them beyond failing the request.
    return ObjectStore.of({
      put: Effect.fn("ObjectStore.put")(function*(key, body, contentType) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length, "object.bytes": body.byteLength })
        yield* checkObjectKey(key)
        yield* storeCall((signal) =>
          client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }), { abortSignal: signal })
        )
      }),
      get: (key) =>
        checkObjectKey(key).pipe(
          Effect.zipRight(storeCall(async (signal) => {
            try {
              const response = await client.send(new GetObjectCommand({ Bucket, Key: key }), { abortSignal: signal })
              const body = response.Body ? await response.Body.transformToByteArray() : new Uint8Array()
              return Option.some({ body, contentType: response.ContentType ?? "application/octet-stream" })
            } catch (error) {
              if (isNotFound(error)) return Option.none()
              throw error
            }
          })),
          (lookup) => tracedGet(key, lookup)
        ),
      signedUrl: Effect.fn("ObjectStore.signedUrl")(function*(key, lifetime) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
        yield* checkObjectKey(key)
        const now = yield* Clock.currentTimeMillis
        return yield* storeCall(() =>
          getSignedUrl(client, new GetObjectCommand({ Bucket, Key: key }), {
            expiresIn: Math.min(maxPresignSeconds, Math.max(1, Math.ceil(Duration.toSeconds(lifetime)))),
            // Signed at Effect's clock, so expiry follows the same time as the rest of the service.
            signingDate: new Date(now)
          })
        )
      }),
      delete: Effect.fn("ObjectStore.delete")(function*(key) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
        yield* checkObjectKey(key)
        yield* storeCall((signal) => client.send(new DeleteObjectCommand({ Bucket, Key: key }), { abortSignal: signal }))
      }),
      putFile: Effect.fn("ObjectStore.putFile")(function*(key, filePath, contentType) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
        yield* checkObjectKey(key)
        const size = yield* storeCall(async (signal) => {
          // A known length lets one PutObject stream the file (up to S3's 5 GB single-put limit).
          const { size } = await stat(filePath)
          await client.send(
            new PutObjectCommand({ Bucket, Key: key, Body: createReadStream(filePath), ContentLength: size, ContentType: contentType }),
            { abortSignal: signal }
          )
          return size
        })
        yield* Effect.annotateCurrentSpan("object.bytes", size)
      }),
      getToFile: Effect.fn("ObjectStore.getToFile")(function*(key, filePath) {
        yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
        yield* checkObjectKey(key)
        const found = yield* storeCall(async (signal) => {
          try {
            const response = await client.send(new GetObjectCommand({ Bucket, Key: key }), { abortSignal: signal })
            await pipeline(response.Body as Readable, createWriteStream(filePath), { signal })
            return true
          } catch (error) {
            if (isNotFound(error)) return false
            throw error
          }
        })
        yield* Effect.annotateCurrentSpan("object.found", found)
        return found
      }),
      multipart: {
        create: Effect.fn("ObjectStore.multipart.create")(function*(key, contentType) {
          yield* Effect.annotateCurrentSpan({ "object.key_length": key.length })
          yield* checkObjectKey(key)
          return yield* storeCall(async (signal) => {
            const response = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType: contentType }), { abortSignal: signal })
            if (!response.UploadId) throw new Error("CreateMultipartUpload answered no UploadId")
            return response.UploadId
          })
        }),
        presignPart: (key, uploadId, partNumber, lifetime) =>
          checkObjectKey(key).pipe(
            Effect.zipRight(Clock.currentTimeMillis),
            Effect.flatMap((now) =>
              storeCall(() =>
                getSignedUrl(client, new UploadPartCommand({ Bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }), {
                  expiresIn: Math.min(maxPresignSeconds, Math.max(1, Math.ceil(Duration.toSeconds(lifetime)))),
                  signingDate: new Date(now)
                })
              )
            )
          ),
        listParts: Effect.fn("ObjectStore.multipart.listParts")(function*(key, uploadId) {
          yield* checkObjectKey(key)
          return yield* storeCall(async (signal) => {
            const parts: Array<UploadedPart> = []
            let marker: string | undefined
            try {
              for (;;) {
                const page = await client.send(
                  new ListPartsCommand({ Bucket, Key: key, UploadId: uploadId, ...(marker ? { PartNumberMarker: marker } : {}) }),
                  { abortSignal: signal }
                )
                for (const part of page.Parts ?? []) {
                  parts.push({ partNumber: part.PartNumber ?? 0, etag: part.ETag ?? "", size: part.Size ?? 0 })
                }
                if (!page.IsTruncated || !page.NextPartNumberMarker) break
                marker = page.NextPartNumberMarker
              }
            } catch (error) {
              if (errorName(error) === "NoSuchUpload" || isNotFound(error)) return []
              throw error
            }
            return parts.sort((a, b) => a.partNumber - b.partNumber)
          })
        }),
        complete: Effect.fn("ObjectStore.multipart.complete")(function*(key, uploadId, parts) {
          yield* Effect.annotateCurrentSpan({ "object.parts": parts.length })
          yield* checkObjectKey(key)
          return yield* Effect.tryPromise({
            try: async (signal) => {
              await client.send(new CompleteMultipartUploadCommand({
                Bucket,
                Key: key,
                UploadId: uploadId,
                MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) }
              }), { abortSignal: signal })
              const head = await client.send(new HeadObjectCommand({ Bucket, Key: key }), { abortSignal: signal })
              return head.ContentLength ?? 0
            },
            catch: (error) => error
          }).pipe(Effect.catchAll((error) =>
            rejectedParts.has(errorName(error)) ? Effect.fail(new MultipartRejected({ reason: errorName(error) })) : Effect.die(asUnavailable(error))
          ))
        }),
        abort: Effect.fn("ObjectStore.multipart.abort")(function*(key, uploadId) {
          yield* checkObjectKey(key)
          yield* storeCall(async (signal) => {
            try {
              await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId }), { abortSignal: signal })
            } catch (error) {
              if (errorName(error) !== "NoSuchUpload" && !isNotFound(error)) throw error
            }
          })
        })
      }
    })
  })

/** Requires S3_BUCKET; `AdaptersLive` only selects it when it is set. */
export const S3ObjectStoreLive: Layer.Layer<ObjectStore, never, AppConfig> = Layer.scoped(
  ObjectStore,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const settings = yield* Option.match(config.s3, {
      onNone: () => Effect.dieMessage("S3ObjectStoreLive needs S3_BUCKET"),
      onSome: Effect.succeed
    })
    return yield* makeS3ObjectStore(settings)
  })
)
