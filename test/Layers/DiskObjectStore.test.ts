import { HttpApi, HttpApiBuilder, HttpApp, HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Layer, Option, Redacted, TestClock } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import {
  DiskObjectStoreLive,
  objectDownloadRouter,
  ObjectDownloadRouteLive,
  objectsDir,
  signObjectUrl
} from "../../src/Layers/DiskObjectStore.js"
import type { AppConfig } from "../../src/Services/AppConfig.js"
import { SigningSecret } from "../../src/Layers/SigningSecret.js"
import { InvalidObjectKey, ObjectStore } from "../../src/Services/ObjectStore.js"
import { checkFileRoundTrip, checkMultipart, tempDir, testConfig } from "./fixtures.js"

const secret = Redacted.make("test-signing-secret")
const bytes = (text: string) => new TextEncoder().encode(text)

/** The disk store, plus a fetch-like caller for the download router running on this test's clock. */
const setup = Effect.gen(function*() {
  const dataDir = yield* tempDir
  const deps = Layer.merge(testConfig({ dataDir, publicBaseUrl: "http://api.test" }), Layer.succeed(SigningSecret, secret))
  const context = yield* Layer.build(Layer.merge(DiskObjectStoreLive.pipe(Layer.provide(deps)), deps))
  const store = yield* Effect.provide(ObjectStore, context)
  const runtime = yield* Effect.provide(Effect.runtime<AppConfig | SigningSecret>(), context)
  const handler = HttpApp.toWebHandlerRuntime(runtime)(objectDownloadRouter)
  const request = (url: string, init?: RequestInit) =>
    Effect.promise(async () => {
      const response = await handler(new Request(url, init))
      return { status: response.status, headers: response.headers, body: await response.text() }
    })
  return { dataDir, store, request }
})

describe("DiskObjectStore", () => {
  it.scoped("multipart uploads: parts PUT to signed links, listed, completed by streaming, aborted", () =>
    Effect.gen(function*() {
      const { dataDir, request, store } = yield* setup
      yield* checkMultipart(store, (url, body) =>
        Effect.map(request(url, { method: "PUT", body }), (response) => {
          expect(response.status).toBe(200)
          return response.headers.get("etag")!
        }), true)
      // Nothing is left of the uploads.
      expect(yield* Effect.promise(() => fs.readdir(path.join(dataDir, "uploads")))).toEqual([])
    }))

  it.scoped("completing many parts joins them in order and leaves no listener behind (no process warning)", () =>
    Effect.gen(function*() {
      const { request, store } = yield* setup
      const warnings: Array<string> = []
      const onWarning = (warning: Error) => void warnings.push(warning.name)
      process.on("warning", onWarning)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.off("warning", onWarning)))
      const uploadId = yield* store.multipart.create("videos/12/source", "video/mp4")
      const parts: Array<{ partNumber: number; etag: string }> = []
      for (let partNumber = 1; partNumber <= 12; partNumber++) {
        const url = yield* store.multipart.presignPart("videos/12/source", uploadId, partNumber, "1 minute", 10)
        const response = yield* request(url, { method: "PUT", body: bytes(`<${partNumber}>`) })
        expect(response.status).toBe(200)
        parts.push({ partNumber, etag: response.headers.get("etag")! })
      }
      yield* store.multipart.complete("videos/12/source", uploadId, parts)
      const joined = new TextDecoder().decode(Option.getOrThrow(yield* store.get("videos/12/source")).body)
      expect(joined).toBe(parts.map((part) => `<${part.partNumber}>`).join(""))
      // Warnings are emitted on the next tick.
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(warnings).toEqual([])
    }))

  it.scoped("the part route refuses forged, expired and oversized parts, and unknown uploads", () =>
    Effect.gen(function*() {
      const { request, store } = yield* setup
      yield* TestClock.setTime(Date.now())
      const uploadId = yield* store.multipart.create("videos/9/source", "video/mp4")
      const url = new URL(yield* store.multipart.presignPart("videos/9/source", uploadId, 1, "1 minute", 10))
      const put = (u: string, size = 5) => request(u, { method: "PUT", body: new Uint8Array(size) })
      expect((yield* put(url.toString(), 11)).status).toBe(413)
      const bigger = new URL(url)
      bigger.searchParams.set("max", "1000")
      expect((yield* put(bigger.toString())).status).toBe(403)
      const otherPart = new URL(url.toString().replace(`/${uploadId}/1?`, `/${uploadId}/2?`))
      expect((yield* put(otherPart.toString())).status).toBe(403)
      yield* TestClock.adjust("2 minutes")
      expect((yield* put(url.toString())).status).toBe(403)
      const fresh = yield* store.multipart.presignPart("videos/9/source", uploadId, 1, "1 minute", 10)
      expect((yield* put(fresh)).status).toBe(200)
      yield* store.multipart.abort("videos/9/source", uploadId)
      expect((yield* put(fresh)).status).toBe(404)
    }))

  it.scoped("serves ranges: 206 with Content-Range, 416 past the end, the whole file without Range", () =>
    Effect.gen(function*() {
      const { request, store } = yield* setup
      yield* store.put("videos/3/playback.mp4", bytes("0123456789"), "video/mp4")
      const url = yield* store.signedUrl("videos/3/playback.mp4", "1 hour")
      const whole = yield* request(url)
      expect(whole.status).toBe(200)
      expect(whole.body).toBe("0123456789")
      expect(whole.headers.get("accept-ranges")).toBe("bytes")
      const part = yield* request(url, { headers: { range: "bytes=2-5" } })
      expect(part.status).toBe(206)
      expect(part.body).toBe("2345")
      expect(part.headers.get("content-range")).toBe("bytes 2-5/10")
      expect((yield* request(url, { headers: { range: "bytes=7-" } })).body).toBe("789")
      expect((yield* request(url, { headers: { range: "bytes=-3" } })).body).toBe("789")
      const past = yield* request(url, { headers: { range: "bytes=10-20" } })
      expect(past.status).toBe(416)
      expect(past.headers.get("content-range")).toBe("bytes */10")
    }))

  it.scoped("stores, reads back and deletes objects under DATA_DIR/objects", () =>
    Effect.gen(function*() {
      const { dataDir, store } = yield* setup
      yield* store.put("uploads/2026/intake.pdf", bytes("%PDF intake"), "application/pdf")
      expect(yield* Effect.promise(() => fs.readFile(path.join(objectsDir(dataDir), "uploads/2026/intake.pdf"), "utf8")))
        .toBe("%PDF intake")

      const found = yield* store.get("uploads/2026/intake.pdf")
      expect(Option.map(found, (o) => ({ body: new TextDecoder().decode(o.body), contentType: o.contentType })))
        .toEqual(Option.some({ body: "%PDF intake", contentType: "application/pdf" }))

      yield* store.put("uploads/2026/intake.pdf", bytes("v2"), "text/plain")
      expect(Option.map(yield* store.get("uploads/2026/intake.pdf"), (o) => o.contentType)).toEqual(Option.some("text/plain"))

      yield* store.delete("uploads/2026/intake.pdf")
      expect(yield* store.get("uploads/2026/intake.pdf")).toEqual(Option.none())
      expect(yield* store.get("uploads")).toEqual(Option.none())
      yield* store.delete("uploads/2026/intake.pdf")
    }))

  it.scoped("streams files in and out (putFile, getToFile)", () =>
    Effect.gen(function*() {
      yield* checkFileRoundTrip((yield* setup).store)
    }))

  it.scoped("rejects keys that could escape the objects directory", () =>
    Effect.gen(function*() {
      const { store } = yield* setup
      for (const key of ["../secret", "a/../../b", "/etc/passwd", "a//b", "a/", ".meta/x", "a b", "a\\b", "%2e%2e/x", ""]) {
        const exit = yield* Effect.exit(store.put(key, bytes("x"), "text/plain"))
        expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause).pipe(Option.exists((d) => d instanceof InvalidObjectKey)))
          .toBe(true)
        expect(Exit.isFailure(yield* Effect.exit(store.signedUrl(key, "1 minute")))).toBe(true)
      }
    }))

  it.scoped("serves a signed link until it expires", () =>
    Effect.gen(function*() {
      const { store, request } = yield* setup
      yield* TestClock.setTime(Date.parse("2026-01-31T09:30:00.000Z"))
      yield* store.put("reports/prtf-2026-01.csv", bytes("id,count\n1,2\n"), "text/csv")
      const url = yield* store.signedUrl("reports/prtf-2026-01.csv", "5 minutes")
      const expires = Date.parse("2026-01-31T09:35:00.000Z") / 1000
      expect(url).toBe(
        `http://api.test/objects/reports/prtf-2026-01.csv?expires=${expires}&signature=${
          signObjectUrl(secret, "reports/prtf-2026-01.csv", expires)
        }`
      )

      const ok = yield* request(url)
      expect(ok.status).toBe(200)
      expect(ok.body).toBe("id,count\n1,2\n")
      expect(ok.headers.get("content-type")).toBe("text/csv")
      expect(ok.headers.get("cache-control")).toBe("private, no-store")

      yield* TestClock.adjust("5 minutes")
      expect((yield* request(url)).status).toBe(200)
      yield* TestClock.adjust("1 second")
      const expired = yield* request(url)
      expect(expired.status).toBe(403)
      expect(JSON.parse(expired.body)).toEqual({ errors: "Invalid or expired link" })
    }))

  it.scoped("refuses forged, tampered and unsigned links with 403", () =>
    Effect.gen(function*() {
      const { store, request } = yield* setup
      yield* store.put("a/file.txt", bytes("hello"), "text/plain")
      yield* store.put("a/other.txt", bytes("other"), "text/plain")
      const url = new URL(yield* store.signedUrl("a/file.txt", "1 hour"))
      const signature = url.searchParams.get("signature")!
      const expires = Number(url.searchParams.get("expires"))
      const forgedWithOtherSecret = signObjectUrl(Redacted.make("another-secret"), "a/file.txt", expires)
      const attempts = [
        `http://api.test/objects/a/file.txt`,
        `http://api.test/objects/a/file.txt?expires=${expires}`,
        `http://api.test/objects/a/file.txt?signature=${signature}`,
        `http://api.test/objects/a/file.txt?expires=${expires}&signature=${forgedWithOtherSecret}`,
        `http://api.test/objects/a/file.txt?expires=${expires + 3600}&signature=${signature}`,
        `http://api.test/objects/a/other.txt?expires=${expires}&signature=${signature}`,
        `http://api.test/objects/a/file.txt?expires=${expires}&signature=${signature.slice(0, 63)}`,
        `http://api.test/objects/a/file.txt?expires=${expires}&signature=${signature.toUpperCase()}`
      ]
      for (const attempt of attempts) {
        const response = yield* request(attempt)
        expect(response.status, attempt).toBe(403)
        expect(JSON.parse(response.body)).toEqual({ errors: "Invalid or expired link" })
      }
      expect((yield* request(url.toString())).status).toBe(200)
    }))

  it.scoped("refuses a correctly signed link whose expiry has passed", () =>
    Effect.gen(function*() {
      const { store, request } = yield* setup
      yield* TestClock.setTime(Date.parse("2026-01-31T09:30:00.000Z"))
      yield* store.put("a/file.txt", bytes("hello"), "text/plain")
      const past = Math.floor((yield* Clock.currentTimeMillis) / 1000) - 1
      const response = yield* request(`http://api.test/objects/a/file.txt?expires=${past}&signature=${signObjectUrl(secret, "a/file.txt", past)}`)
      expect(response.status).toBe(403)
    }))

  it.scoped("answers 404 for a validly signed link to a missing object", () =>
    Effect.gen(function*() {
      const { store, request } = yield* setup
      const url = yield* store.signedUrl("a/never-stored.txt", "1 hour")
      const response = yield* request(url)
      expect(response.status).toBe(404)
      expect(JSON.parse(response.body)).toEqual({ errors: "File not found" })

      yield* store.put("a/gone.txt", bytes("x"), "text/plain")
      const gone = yield* store.signedUrl("a/gone.txt", "1 hour")
      yield* store.delete("a/gone.txt")
      expect((yield* request(gone)).status).toBe(404)
    }))

  it.scoped("never serves a signed path outside the key rules", () =>
    Effect.gen(function*() {
      const { dataDir, store, request } = yield* setup
      yield* Effect.promise(() => fs.writeFile(path.join(dataDir, "private.txt"), "top secret"))
      yield* store.put("a/file.txt", bytes("hello"), "text/plain")
      const expires = Math.floor((yield* Clock.currentTimeMillis) / 1000) + 3600
      const signed = (urlPath: string, key: string) =>
        `http://api.test/objects/${urlPath}?expires=${expires}&signature=${signObjectUrl(secret, key, expires)}`
      // The content-type sidecar is not an object, even with a valid signature.
      const sidecar = yield* request(signed(".meta/a/file.txt.json", ".meta/a/file.txt.json"))
      expect(sidecar.status).toBe(404)
      expect(JSON.parse(sidecar.body)).toEqual({ errors: "File not found" })
      // Encoded slashes survive URL normalisation and reach the handler decoded ("../private.txt"):
      // even correctly signed, such a key is refused before any file is touched.
      for (const [urlPath, key] of [["..%2Fprivate.txt", "../private.txt"], ["a/..%2F..%2Fprivate.txt", "a/../../private.txt"]] as const) {
        const response = yield* request(signed(urlPath, key))
        expect(response.status).toBe(404)
        expect(response.body).not.toContain("top secret")
      }
    }))

  it.scoped("mounts on an HttpApi through ObjectDownloadRouteLive", () =>
    Effect.gen(function*() {
      const { dataDir, store } = yield* setup
      yield* TestClock.setTime(Date.now())
      yield* store.put("a/file.txt", bytes("through the api"), "text/plain")
      const url = yield* store.signedUrl("a/file.txt", "1 hour")
      const { dispose, handler } = HttpApiBuilder.toWebHandler(
        Layer.mergeAll(HttpApiBuilder.api(HttpApi.make("test")), ObjectDownloadRouteLive, HttpServer.layerContext).pipe(
          Layer.provide([testConfig({ dataDir }), Layer.succeed(SigningSecret, secret)])
        )
      )
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const response = yield* Effect.promise(() => handler(new Request(url)))
      expect(response.status).toBe(200)
      expect(yield* Effect.promise(() => response.text())).toBe("through the api")
    }))
})
