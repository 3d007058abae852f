import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import * as fs from "node:fs/promises"
import { telephonyOutboxFile, OutboxTelephonyLive } from "../../src/Layers/OutboxTelephony.js"
import { Telephony } from "../../src/Services/Telephony.js"
import { tempDir, testConfig } from "./fixtures.js"

const readLines = (dataDir: string) =>
  Effect.promise(async () =>
    (await fs.readFile(telephonyOutboxFile(dataDir), "utf8")).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as unknown)
  )

describe("OutboxTelephony", () => {
  it.scoped("appends one JSON line per SMS and call", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* TestClock.setTime(Date.parse("2026-01-31T09:30:00.000Z"))
      const { sms, call } = yield* Effect.gen(function*() {
        const telephony = yield* Telephony
        const sms = yield* telephony.sendSms({ to: "+15551230001", body: "Your visit is tomorrow at 10:00" })
        yield* TestClock.adjust("90 seconds")
        const call = yield* telephony.placeCall({ to: "+15551230002", from: "+15559990000" })
        return { sms, call }
      }).pipe(Effect.provide(OutboxTelephonyLive), Effect.provide(testConfig({ dataDir })))

      expect(sms.sid).toMatch(/^SM[0-9a-f]{32}$/)
      expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/)
      expect(sms).toMatchObject({ to: "+15551230001", from: "+15550000000", status: "queued" })
      expect(sms.createdAt.toISOString()).toBe("2026-01-31T09:30:00.000Z")

      const text = yield* Effect.promise(() => fs.readFile(telephonyOutboxFile(dataDir), "utf8"))
      expect(text.endsWith("\n")).toBe(true)
      expect(yield* readLines(dataDir)).toEqual([
        {
          kind: "sms",
          to: "+15551230001",
          from: "+15550000000",
          body: "Your visit is tomorrow at 10:00",
          sid: sms.sid,
          created_at: "2026-01-31T09:30:00.000Z"
        },
        { kind: "call", to: "+15551230002", from: "+15559990000", sid: call.sid, created_at: "2026-01-31T09:31:30.000Z" }
      ])
    }))

  it.scoped("sends from the Twilio number when one is configured", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const twilio = Option.some({
        accountSid: "AC00000000000000000000000000000000",
        authToken: Redacted.make("token"),
        fromNumber: "+15557654321",
        apiBaseUrl: Option.none(),
        messagingServiceSid: Option.none(),
        smsAutoReply: Option.none()
      })
      const receipt = yield* Effect.flatMap(Telephony, (t) => t.sendSms({ to: "+15551230001", body: "hi" })).pipe(
        Effect.provide(OutboxTelephonyLive),
        Effect.provide(testConfig({ dataDir, twilio }))
      )
      expect(receipt.from).toBe("+15557654321")
      expect(yield* readLines(dataDir)).toMatchObject([{ kind: "sms", from: "+15557654321", sid: receipt.sid }])
    }))

  it.scoped("keeps every line whole under concurrent sends", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* Effect.flatMap(Telephony, (t) =>
        Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => t.sendSms({ to: `+1555000${String(i).padStart(4, "0")}`, body: "x".repeat(2000) }),
          { concurrency: "unbounded" }
        )).pipe(Effect.provide(OutboxTelephonyLive), Effect.provide(testConfig({ dataDir })))
      const lines = (yield* readLines(dataDir)) as Array<{ to: string }>
      expect(lines).toHaveLength(50)
      expect(new Set(lines.map((line) => line.to)).size).toBe(50)
    }))
})
