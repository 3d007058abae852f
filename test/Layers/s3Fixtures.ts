/** The S3 store on a given endpoint, and a browser's part PUT: shared by the s3rver and MinIO tests. */
import { Effect, Layer, Option, Redacted } from "effect"
import { S3ObjectStoreLive } from "../../src/Layers/S3ObjectStore.js"
import { ObjectStore } from "../../src/Services/ObjectStore.js"
import { type SendPart, testConfig } from "./fixtures.js"

export const bucket = "care-files"

export const storeAt = (endpoint: string, credentials = { id: "S3RVER", secret: "S3RVER" }, bucketName = bucket) =>
  Layer.build(S3ObjectStoreLive.pipe(Layer.provide(testConfig({
    s3: Option.some({
      bucket: bucketName,
      region: "us-east-1",
      endpoint: Option.some(endpoint),
      accessKeyId: Option.some(credentials.id),
      secretAccessKey: Option.some(Redacted.make(credentials.secret)),
      forcePathStyle: true
    })
  })))).pipe(Effect.flatMap((context) => Effect.provide(ObjectStore, context)))

/** A browser's PUT of a part to its presigned URL; the ETag it answers. */
export const putPart: SendPart = (url, body) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "PUT", body })
    if (response.status !== 200) throw new Error(`part PUT: ${response.status} ${await response.text()}`)
    return response.headers.get("etag")!
  })

