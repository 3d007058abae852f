/** Shared by the adapter tests: complete settings without reading the environment, temp dirs. */
import { expect } from "@effect/vitest"
import { Effect, Layer, LogLevel, Option } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { addressLimitDefaults } from "../../src/Layers/Config.js"
import { AppConfig, type AppSettings } from "../../src/Services/AppConfig.js"
import type { ObjectStoreShape } from "../../src/Services/ObjectStore.js"
import { ffmpegPath, ffprobePath } from "../support/machineTools.js"

export const testSettings = (overrides: Partial<AppSettings> = {}): AppSettings => ({
  port: 0,
  host: "127.0.0.1",
  dataDir: path.join(os.tmpdir(), "unused-data-dir"),
  databaseUrl: Option.none(),
  dbPoolSize: 1,
  publicBaseUrl: "http://api.test",
  inviteUrlBase: Option.none(),
  maxBodyBytes: 1024 * 1024,
  corsOrigins: [],
  trustedProxies: { _tag: "None" },
  shutdownGraceSeconds: 20,
  keepAliveTimeoutMs: 65_000,
  bootstrapAdminEmail: Option.none(),
  bootstrapAdminPassword: Option.none(),
  signingSecret: Option.none(),
  twilio: Option.none(),
  s3: Option.none(),
  smtpUrl: Option.none(),
  mailFrom: "Care Coordination <no-reply@example.test>",
  otelEndpoint: Option.none(),
  otelServiceName: "care-coordination-api-test",
  logLevel: LogLevel.Info,
  logFormat: "json",
  sessionIdleMinutes: 30,
  sessionMaxHours: 12,
  clinicSupportEmail: "support@clinic.test",
  clinicalAlertEmail: "alerts@clinic.test",
  jobs: { enabled: false, concurrency: 2, pollIntervalMs: 2000 },
  liveness: { heartbeatSeconds: 30, staleAfterSeconds: 120 },
  reports: { linkMinutes: 15 },
  fcm: Option.none(),
  mif: { importDir: Option.none(), maxFileBytes: 64 * 1024 * 1024, urlTimeoutMs: 30_000, urlAllowedNetworks: [] },
  video: Option.none(),
  clinicVideos: { maxBytes: 2 * 1024 * 1024 * 1024, ffmpegPath, ffprobePath, concurrency: 1 },
  clinicTimeZone: "America/Los_Angeles",
  addressLimits: addressLimitDefaults,
  billing: {
    npi: "1234567893", taxId: "123456789", name: "Care Coordination Clinic", address: "100 Main St", city: "Sacramento",
    state: "CA", zip: "958140000", taxonomy: "101YM0800X", submitterId: "CCAPI", contactName: "Billing Office",
    contactPhone: "9165550100", receiverId: "CLEARINGHOUSE", receiverName: "Clearinghouse", usage: "T", extraCptCodes: [],
    maxDocumentBytes: 10 * 1024 * 1024
  },
  collaborators: { tokenTtlHours: 168, formUrl: Option.none() },
  contentDemo: false,
  ...overrides
})

export const testConfig = (overrides: Partial<AppSettings> = {}) => Layer.succeed(AppConfig, testSettings(overrides))

/** A fresh directory, removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "adapters-test-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

/**
 * The streaming half of every `ObjectStore`: a 3 MB file in with `putFile` reads back byte for
 * byte through `get` and `getToFile`; a missing key gives `getToFile` false and writes nothing.
 */
export const checkFileRoundTrip = (store: ObjectStoreShape) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const source = path.join(dir, "source.bin")
    const data = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 251)
    yield* Effect.promise(() => fs.writeFile(source, data))
    yield* store.putFile("reports/big/report.bin", source, "application/octet-stream")

    const stored = yield* store.get("reports/big/report.bin")
    expect(Option.map(stored, (o) => ({ bytes: o.body.byteLength, same: Buffer.compare(Buffer.from(o.body), Buffer.from(data)) === 0, type: o.contentType })))
      .toEqual(Option.some({ bytes: data.byteLength, same: true, type: "application/octet-stream" }))

    const copy = path.join(dir, "copy.bin")
    expect(yield* store.getToFile("reports/big/report.bin", copy)).toBe(true)
    expect(Buffer.compare(yield* Effect.promise(() => fs.readFile(copy)), Buffer.from(data))).toBe(0)

    const missing = path.join(dir, "missing.bin")
    expect(yield* store.getToFile("reports/big/none.bin", missing)).toBe(false)
    expect(yield* Effect.promise(() => fs.stat(missing).then(() => true, () => false))).toBe(false)
  })

/** A client's PUT of one part to a presigned URL: the ETag the store answered. */
export type SendPart = (url: string, body: Uint8Array) => Effect.Effect<string>

/**
 * Multipart uploads on every `ObjectStore`: two parts (5 MiB and a small last one, sent out of
 * order) assemble into the object; with `full` (stores that have ListParts and abort) also the
 * listing, a part sent again, a wrong ETag refused, and abort.
 */
export const checkMultipart = (store: ObjectStoreShape, send: SendPart, full: boolean) =>
  Effect.gen(function*() {
    const key = "videos/1/source"
    const first = new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 7) % 253)
    const last = new Uint8Array(1000).map((_, i) => i % 13)
    const uploadId = yield* store.multipart.create(key, "video/mp4")
    const url = (n: number) => store.multipart.presignPart(key, uploadId, n, "1 hour", 16 * 1024 * 1024)
    const etag2 = yield* send(yield* url(2), last)
    const etag1 = yield* send(yield* url(1), first)
    expect(etag1).toMatch(/^"[0-9a-f]{32}"$/)
    if (full) {
      expect(yield* store.multipart.listParts(key, uploadId)).toEqual([
        { partNumber: 1, etag: etag1, size: first.byteLength },
        { partNumber: 2, etag: etag2, size: last.byteLength }
      ])
      // Sent again: replaced, same content, same ETag.
      expect(yield* send(yield* url(2), last)).toBe(etag2)
      const wrong = yield* Effect.flip(store.multipart.complete(key, uploadId, [{ partNumber: 1, etag: etag2 }, { partNumber: 2, etag: etag2 }]))
      expect(wrong._tag).toBe("MultipartRejected")
    }
    const size = yield* store.multipart.complete(key, uploadId, [{ partNumber: 1, etag: etag1 }, { partNumber: 2, etag: etag2 }])
    expect(size).toBe(first.byteLength + last.byteLength)
    const dir = yield* tempDir
    const copy = path.join(dir, "assembled.bin")
    expect(yield* store.getToFile(key, copy)).toBe(true)
    const assembled = yield* Effect.promise(() => fs.readFile(copy))
    expect(Buffer.compare(assembled, Buffer.concat([first, last]))).toBe(0)
    if (full) {
      expect(yield* store.multipart.listParts(key, uploadId)).toEqual([])
      const other = yield* store.multipart.create("videos/2/source", "video/webm")
      yield* send(yield* store.multipart.presignPart("videos/2/source", other, 1, "1 hour", 1024), new Uint8Array(10))
      expect((yield* store.multipart.listParts("videos/2/source", other)).length).toBe(1)
      yield* store.multipart.abort("videos/2/source", other)
      expect(yield* store.multipart.listParts("videos/2/source", other)).toEqual([])
      yield* store.multipart.abort("videos/2/source", other)
    }
  })
