/**
 * Multipart uploads on a real S3 API (MinIO), for what s3rver lacks: ListParts and
 * AbortMultipartUpload, a wrong ETag refused, and a presigned GET honouring Range. Included by
 * vitest.config.ts only when S3_TEST_ENDPOINT is set (never skipped: absent, the file is not part
 * of the run). S3_TEST_ACCESS_KEY_ID / S3_TEST_SECRET_ACCESS_KEY (default minioadmin) and
 * S3_TEST_BUCKET (default care-files-test, created when missing).
 */
import { CreateBucketCommand, HeadBucketCommand, S3Client } from "@aws-sdk/client-s3"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { checkMultipart } from "./fixtures.js"
import { putPart, storeAt } from "./s3Fixtures.js"

const endpoint = process.env["S3_TEST_ENDPOINT"] ?? ""
const credentials = { id: process.env["S3_TEST_ACCESS_KEY_ID"] ?? "minioadmin", secret: process.env["S3_TEST_SECRET_ACCESS_KEY"] ?? "minioadmin" }
const bucket = process.env["S3_TEST_BUCKET"] ?? "care-files-test"

const ensureBucket = Effect.promise(async () => {
  const client = new S3Client({
    region: "us-east-1", endpoint, forcePathStyle: true,
    credentials: { accessKeyId: credentials.id, secretAccessKey: credentials.secret }
  })
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }))
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
  } finally {
    client.destroy()
  }
})

describe("S3ObjectStore on MinIO", () => {
  it.scoped("multipart: ListParts, a part sent again, a wrong ETag refused, AbortMultipartUpload", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      yield* ensureBucket
      yield* checkMultipart(yield* storeAt(endpoint, credentials, bucket), putPart, true)
    }))

  it.scoped("a presigned GET honours Range (206)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      yield* ensureBucket
      const store = yield* storeAt(endpoint, credentials, bucket)
      yield* store.put("videos/range/playback.mp4", new TextEncoder().encode("0123456789"), "video/mp4")
      const url = yield* store.signedUrl("videos/range/playback.mp4", "5 minutes")
      const response = yield* Effect.promise(() => fetch(url, { headers: { range: "bytes=2-5" } }))
      expect(response.status).toBe(206)
      expect(yield* Effect.promise(() => response.text())).toBe("2345")
      yield* store.delete("videos/range/playback.mp4")
    }))
})
