import { HttpApi, HttpApiBuilder, HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"
import { AdaptersLive, ObjectDownloadLive } from "../../src/Layers/Adapters.js"
import { mailOutboxDir } from "../../src/Layers/OutboxMailer.js"
import { telephonyOutboxFile } from "../../src/Layers/OutboxTelephony.js"
import { Mailer } from "../../src/Services/Mailer.js"
import { ObjectStore } from "../../src/Services/ObjectStore.js"
import { Telephony } from "../../src/Services/Telephony.js"
import { tempDir, testConfig } from "./fixtures.js"

/** A local port with nothing listening on it. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

describe("AdaptersLive", () => {
  it.scoped("selects the outbox and disk layers when nothing is configured", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const config = testConfig({ dataDir, publicBaseUrl: "http://api.test" })
      const url = yield* Effect.gen(function*() {
        yield* Effect.flatMap(Telephony, (t) => t.sendSms({ to: "+15551230001", body: "hi" }))
        yield* Effect.flatMap(Mailer, (m) => m.send({ to: ["a@example.test"], subject: "s", text: "t" }))
        const store = yield* ObjectStore
        yield* store.put("a/file.txt", new TextEncoder().encode("on disk"), "text/plain")
        return yield* store.signedUrl("a/file.txt", "1 hour")
      }).pipe(Effect.provide(AdaptersLive), Effect.provide(config))

      expect(yield* Effect.promise(() => fs.readFile(telephonyOutboxFile(dataDir), "utf8"))).toContain("\"kind\":\"sms\"")
      expect(yield* Effect.promise(() => fs.readdir(mailOutboxDir(dataDir)))).toHaveLength(1)
      expect(yield* Effect.promise(() => fs.readFile(path.join(dataDir, "objects", "a", "file.txt"), "utf8"))).toBe("on disk")
      expect(url).toMatch(/^http:\/\/api\.test\/objects\/a\/file\.txt\?expires=\d+&signature=[0-9a-f]{64}$/)
      // Signed with the secret generated under DATA_DIR, which the download route reads too.
      expect(yield* Effect.promise(() => fs.readFile(path.join(dataDir, "signing-secret"), "utf8"))).toMatch(/^[0-9a-f]{64}$/)
    }))

  it.scoped("selects S3, SMTP and Twilio when they are configured", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const port = yield* closedPort
      const config = testConfig({
        dataDir,
        smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${port}`)),
        twilio: Option.some({
          accountSid: "AC11111111111111111111111111111111",
          authToken: Redacted.make("token"),
          fromNumber: "+15550001111",
          apiBaseUrl: Option.some(`http://127.0.0.1:${port}`),
          messagingServiceSid: Option.none(),
          smsAutoReply: Option.none()
        }),
        s3: Option.some({
          bucket: "care-files",
          region: "us-east-1",
          endpoint: Option.some("http://127.0.0.1:9"),
          accessKeyId: Option.some("key"),
          secretAccessKey: Option.some(Redacted.make("secret")),
          forcePathStyle: true
        })
      })
      const { url, mailError, smsError } = yield* Effect.gen(function*() {
        const url = yield* Effect.flatMap(ObjectStore, (s) => s.signedUrl("a/file.txt", "1 hour"))
        const mailError = yield* Effect.flip(Effect.flatMap(Mailer, (m) => m.send({ to: ["a@example.test"], subject: "s", text: "t" })))
        const smsError = yield* Effect.flip(Effect.flatMap(Telephony, (t) => t.sendSms({ to: "+15551230001", body: "hi" })))
        return { url, mailError, smsError }
      }).pipe(Effect.provide(AdaptersLive), Effect.provide(config))

      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:9\/care-files\/a\/file\.txt\?.*X-Amz-Signature=/)
      expect(mailError.reason).toBe("SMTP delivery failed (ESOCKET)")
      // Twilio's client tried the (closed) API address: nothing went to the outbox.
      expect(smsError.reason).toBe("the telephony provider could not be reached")
      expect(yield* Effect.promise(() => fs.readdir(dataDir))).toEqual([])
    }))
})

describe("ObjectDownloadLive", () => {
  // Live clock: the web handler below checks expiry against real time.
  it.scopedLive("serves links signed by the disk store selected by AdaptersLive", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const config = testConfig({ dataDir, publicBaseUrl: "http://api.test" })
      const url = yield* Effect.flatMap(ObjectStore, (store) =>
        Effect.zipRight(
          store.put("a/file.txt", new TextEncoder().encode("downloaded"), "text/plain"),
          store.signedUrl("a/file.txt", "1 hour")
        )).pipe(Effect.provide(AdaptersLive), Effect.provide(config))

      const { dispose, handler } = HttpApiBuilder.toWebHandler(
        Layer.mergeAll(HttpApiBuilder.api(HttpApi.make("test")), ObjectDownloadLive, HttpServer.layerContext).pipe(
          Layer.provide(config)
        )
      )
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const response = yield* Effect.promise(() => handler(new Request(url)))
      expect(response.status).toBe(200)
      expect(yield* Effect.promise(() => response.text())).toBe("downloaded")
    }))
})
