import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, TestClock } from "effect"
import { MemoryMailer } from "../../src/Layers/MemoryMailer.js"
import { MemoryObjectStore } from "../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../src/Layers/MemoryTelephony.js"
import { MailError, Mailer } from "../../src/Services/Mailer.js"
import { InvalidObjectKey, ObjectStore } from "../../src/Services/ObjectStore.js"
import { Telephony, TelephonyError } from "../../src/Services/Telephony.js"
import { checkFileRoundTrip, checkMultipart } from "./fixtures.js"

describe("MemoryTelephony", () => {
  it.effect("records sends and rejects the next one on request", () =>
    Effect.gen(function*() {
      const telephony = yield* Telephony
      const memory = yield* MemoryTelephony
      const sms = yield* telephony.sendSms({ to: "+15551230001", body: "hello" })
      expect(sms.sid).toMatch(/^SM[0-9a-f]{32}$/)

      yield* memory.failNext("The 'To' number is not a valid phone number.")
      const exit = yield* Effect.exit(telephony.placeCall({ to: "+1555" }))
      expect(exit).toStrictEqual(
        Exit.fail(new TelephonyError({ action: "place_call", reason: "The 'To' number is not a valid phone number." }))
      )
      const call = yield* telephony.placeCall({ to: "+15551230002", from: "+15559990000" })
      expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/)

      expect(yield* memory.sent).toMatchObject([
        { kind: "sms", to: "+15551230001", from: "+15550000000", body: "hello", sid: sms.sid, status: "queued" },
        { kind: "call", to: "+15551230002", from: "+15559990000", sid: call.sid }
      ])
      yield* memory.clear
      expect(yield* memory.sent).toEqual([])
    }).pipe(Effect.provide(MemoryTelephony.layer)))
})

describe("MemoryMailer", () => {
  it.effect("records messages and fails the next send on request", () =>
    Effect.gen(function*() {
      const mailer = yield* Mailer
      const memory = yield* MemoryMailer
      yield* memory.failNext("SMTP delivery failed (ECONNECTION)")
      expect(yield* Effect.flip(mailer.send({ to: ["a@example.test"], subject: "s", text: "t" })))
        .toStrictEqual(new MailError({ reason: "SMTP delivery failed (ECONNECTION)" }))
      const { messageId } = yield* mailer.send({ to: ["a@example.test"], subject: "s", text: "t" })
      expect(yield* memory.sent).toEqual([{ to: ["a@example.test"], subject: "s", text: "t", messageId }])
    }).pipe(Effect.provide(MemoryMailer.layer)))
})

describe("MemoryObjectStore", () => {
  it.effect("stores copies, signs memory URLs and rejects bad keys", () =>
    Effect.gen(function*() {
      const store = yield* ObjectStore
      const memory = yield* MemoryObjectStore
      const body = new TextEncoder().encode("abc")
      yield* store.put("a/b.txt", body, "text/plain")
      body[0] = 0
      expect(Option.map(yield* store.get("a/b.txt"), (o) => new TextDecoder().decode(o.body))).toEqual(Option.some("abc"))
      expect([...(yield* memory.objects).keys()]).toEqual(["a/b.txt"])

      yield* TestClock.setTime(1_000_000)
      expect(yield* store.signedUrl("a/b.txt", "1 minute")).toBe("memory://a/b.txt?expires=1060")

      yield* store.delete("a/b.txt")
      expect(yield* store.get("a/b.txt")).toEqual(Option.none())
      const exit = yield* Effect.exit(store.put("../x", body, "text/plain"))
      expect(Exit.isFailure(exit) && Option.getOrNull(Cause.dieOption(exit.cause)) instanceof InvalidObjectKey).toBe(true)
    }).pipe(Effect.provide(MemoryObjectStore.layer)))

  it.scoped("streams files in and out (putFile, getToFile)", () =>
    Effect.flatMap(ObjectStore, checkFileRoundTrip).pipe(Effect.provide(MemoryObjectStore.layer)))

  it.scoped("multipart uploads: parts, listing, completion, abort", () =>
    Effect.gen(function*() {
      const store = yield* ObjectStore
      const memory = yield* MemoryObjectStore
      yield* checkMultipart(store, (url, body) => {
        const [, uploadId, part] = /^memory:\/\/uploads\/([0-9a-f]{32})\/(\d+)\?/.exec(url)!
        return Effect.map(memory.uploadPart(uploadId!, Number(part), body), Option.getOrThrow)
      }, true)
    }).pipe(Effect.provide(MemoryObjectStore.layer)))
})
