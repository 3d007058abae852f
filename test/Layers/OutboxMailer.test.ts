import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { mailOutboxDir, OutboxMailerLive } from "../../src/Layers/OutboxMailer.js"
import { Mailer } from "../../src/Services/Mailer.js"
import { tempDir, testConfig } from "./fixtures.js"

describe("OutboxMailer", () => {
  it.scoped("writes each message as an .eml file with headers, body and attachments", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* TestClock.setTime(Date.parse("2026-01-31T09:30:00.123Z"))
      const pdf = new TextEncoder().encode("%PDF-1.4 monthly report")
      const { messageId } = yield* Effect.flatMap(Mailer, (mailer) =>
        mailer.send({
          to: ["coordinator@example.test", "lead@example.test"],
          subject: "Monthly PRTF report",
          text: "The report is attached.",
          attachments: [{ filename: "report.pdf", content: pdf, contentType: "application/pdf" }]
        })).pipe(Effect.provide(OutboxMailerLive), Effect.provide(testConfig({ dataDir })))

      const dir = mailOutboxDir(dataDir)
      const files = yield* Effect.promise(() => fs.readdir(dir))
      expect(files).toHaveLength(1)
      expect(files[0]).toMatch(/^20260131T093000123Z-[0-9a-f]{12}\.eml$/)

      const eml = yield* Effect.promise(() => fs.readFile(path.join(dir, files[0]!), "utf8"))
      const [head = "", ...parts] = eml.split("\n\n")
      expect(head).toContain("From: Care Coordination <no-reply@example.test>")
      expect(head).toContain("To: coordinator@example.test, lead@example.test")
      expect(head).toContain("Subject: Monthly PRTF report")
      expect(head).toContain("Date: Sat, 31 Jan 2026 09:30:00 +0000")
      expect(head).toContain(`Message-ID: ${messageId}`)
      expect(head).toMatch(/Content-Type: multipart\/mixed; boundary=/)
      const body = parts.join("\n\n")
      expect(body).toContain("The report is attached.")
      expect(body).toContain("Content-Type: application/pdf; name=report.pdf")
      expect(body).toContain("Content-Disposition: attachment; filename=report.pdf")
      expect(body).toContain("Content-Transfer-Encoding: base64")
      expect(body).toContain(Buffer.from(pdf).toString("base64"))
    }))

  it.scoped("writes one file per message", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* Effect.flatMap(Mailer, (mailer) =>
        Effect.forEach(["a", "b", "c"], (subject) => mailer.send({ to: ["x@example.test"], subject, text: subject }), {
          concurrency: "unbounded"
        })).pipe(Effect.provide(OutboxMailerLive), Effect.provide(testConfig({ dataDir })))
      const files = yield* Effect.promise(() => fs.readdir(mailOutboxDir(dataDir)))
      expect(files).toHaveLength(3)
    }))
})
