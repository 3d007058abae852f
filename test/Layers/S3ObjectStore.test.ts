import S3rver from "@20minutes/s3rver"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as path from "node:path"
import { checkFileRoundTrip, checkMultipart, tempDir } from "./fixtures.js"
import { bucket, putPart, storeAt } from "./s3Fixtures.js"


/** A real S3-compatible server on a random local port, with the bucket created. */
const s3Server = Effect.gen(function*() {
  const directory = path.join(yield* tempDir, "s3")
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  const { port } = yield* Effect.acquireRelease(Effect.promise(() => server.run()), () => Effect.promise(() => server.close()))
  return `http://127.0.0.1:${port}`
})

const fetchText = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

describe("S3ObjectStore", () => {
  // s3rver has CreateMultipartUpload, UploadPart and Complete but not ListParts or Abort: those run
  // against MinIO in S3Multipart.minio.ts when S3_TEST_ENDPOINT is set (vitest.config.ts).
  it.scoped("multipart uploads: presigned part PUTs assembled by CompleteMultipartUpload", () =>
    Effect.gen(function*() {
      // Presigning reads Effect's clock; the server checks expiry against real time.
      yield* TestClock.setTime(Date.now())
      yield* checkMultipart(yield* storeAt(yield* s3Server), putPart, false)
    }))

  it.scoped("puts, gets and deletes objects", () =>
    Effect.gen(function*() {
      const store = yield* storeAt(yield* s3Server)
      const body = new Uint8Array([0, 1, 2, 250, 255])
      yield* store.put("uploads/2026/scan.bin", body, "application/octet-stream")
      yield* store.put("uploads/2026/note.txt", new TextEncoder().encode("note"), "text/plain")

      const found = yield* store.get("uploads/2026/scan.bin")
      expect(Option.map(found, (o) => [...o.body])).toEqual(Option.some([0, 1, 2, 250, 255]))
      expect(Option.map(yield* store.get("uploads/2026/note.txt"), (o) => o.contentType)).toEqual(Option.some("text/plain"))
      expect(yield* store.get("uploads/2026/missing.bin")).toEqual(Option.none())

      yield* store.delete("uploads/2026/scan.bin")
      expect(yield* store.get("uploads/2026/scan.bin")).toEqual(Option.none())
      yield* store.delete("uploads/2026/scan.bin")
    }))

  it.scoped("streams files in and out (putFile, getToFile)", () =>
    Effect.gen(function*() {
      yield* checkFileRoundTrip(yield* storeAt(yield* s3Server))
    }))

  it.scoped("presigns GET URLs that serve the object, and refuse tampering and expiry", () =>
    Effect.gen(function*() {
      const store = yield* storeAt(yield* s3Server)
      yield* store.put("reports/prtf.csv", new TextEncoder().encode("id,count\n1,2\n"), "text/csv")

      // Presigning reads Effect's clock; the server checks expiry against real time.
      const now = Date.now()
      yield* TestClock.setTime(now)
      const url = yield* store.signedUrl("reports/prtf.csv", "5 minutes")
      expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("300")
      expect(yield* fetchText(url)).toEqual({ status: 200, type: "text/csv", body: "id,count\n1,2\n" })

      const tampered = new URL(url)
      const signature = tampered.searchParams.get("X-Amz-Signature")!
      tampered.searchParams.set("X-Amz-Signature", (signature[0] === "0" ? "1" : "0") + signature.slice(1))
      expect((yield* fetchText(tampered.toString())).status).toBe(403)

      const otherKey = new URL(url)
      otherKey.pathname = otherKey.pathname.replace("prtf.csv", "other.csv")
      expect((yield* fetchText(otherKey.toString())).status).toBe(403)

      // Signed an hour ago for five minutes: expired now.
      yield* TestClock.setTime(now - 60 * 60 * 1000)
      const expired = yield* store.signedUrl("reports/prtf.csv", "5 minutes")
      expect(new URL(expired).searchParams.get("X-Amz-Date")).toBe(
        new Date(now - 60 * 60 * 1000).toISOString().replace(/[-:]|\.\d{3}/g, "")
      )
      const refused = yield* fetchText(expired)
      expect(refused.status).toBe(403)
      expect(refused.body).toContain("Request has expired")
    }))
})
