import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { SmtpMailerLive } from "../../src/Layers/SmtpMailer.js"
import { MailError, Mailer } from "../../src/Services/Mailer.js"
import { testConfig } from "./fixtures.js"

interface Received {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly user: string | undefined
  readonly data: string
}

/** A real SMTP server on a random local port; rejects recipients at `blocked.test` and any login. */
const smtpServer = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly received: Array<Received>; readonly server: SMTPServer }>((resume) => {
    const received: Array<Received> = []
    const server = new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onAuth: (_auth, _session, callback) => callback(new Error("Invalid username or password")),
      onRcptTo: (address, _session, callback) => {
        if (!address.address.endsWith("@blocked.test")) return callback()
        const error = Object.assign(new Error(`Mailbox ${address.address} unavailable`), { responseCode: 550 })
        callback(error)
      },
      onData: (stream, session, callback) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          const from = session.envelope.mailFrom
          received.push({
            from: from === false ? "" : from.address,
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            user: session.user,
            data: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      }
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server })))
  }),
  ({ server }) => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
)

const mail = {
  to: ["coordinator@example.test"],
  subject: "Monthly PRTF report",
  text: "The report is attached.",
  attachments: [{ filename: "report.csv", content: new TextEncoder().encode("id,count\n1,2\n"), contentType: "text/csv" }]
}

describe("SmtpMailer", () => {
  it.scoped("delivers the message, with its attachment, to the SMTP server", () =>
    Effect.gen(function*() {
      const { port, received } = yield* smtpServer
      const smtpUrl = Option.some(Redacted.make(`smtp://127.0.0.1:${port}`))
      const { messageId } = yield* Effect.flatMap(Mailer, (mailer) => mailer.send(mail)).pipe(
        Effect.provide(SmtpMailerLive),
        Effect.provide(testConfig({ smtpUrl }))
      )
      expect(received).toHaveLength(1)
      const [message] = received
      expect(message?.from).toBe("no-reply@example.test")
      expect(message?.to).toEqual(["coordinator@example.test"])
      expect(message?.data).toContain("Subject: Monthly PRTF report")
      expect(message?.data).toContain("To: coordinator@example.test")
      expect(message?.data).toContain(`Message-ID: ${messageId}`)
      expect(message?.data).toContain("The report is attached.")
      expect(message?.data).toMatch(/Content-Disposition: attachment; filename=report\.csv/)
      expect(message?.data).toContain(Buffer.from("id,count\n1,2\n").toString("base64"))
    }))

  it.scoped("reports a rejected recipient as MailError without the address", () =>
    Effect.gen(function*() {
      const { port, received } = yield* smtpServer
      const smtpUrl = Option.some(Redacted.make(`smtp://127.0.0.1:${port}`))
      const exit = yield* Effect.flatMap(Mailer, (mailer) => mailer.send({ ...mail, to: ["someone@blocked.test"] })).pipe(
        Effect.provide(SmtpMailerLive),
        Effect.provide(testConfig({ smtpUrl })),
        Effect.exit
      )
      expect(exit).toStrictEqual(Exit.fail(new MailError({ reason: "SMTP delivery failed (EENVELOPE 550)" })))
      expect(received).toHaveLength(0)
    }))

  it.scoped("reports a refused login as MailError without the credentials", () =>
    Effect.gen(function*() {
      const { port } = yield* smtpServer
      const smtpUrl = Option.some(Redacted.make(`smtp://mailer:hunter2-secret@127.0.0.1:${port}`))
      const error = yield* Effect.flatMap(Mailer, (mailer) => mailer.send(mail)).pipe(
        Effect.provide(SmtpMailerLive),
        Effect.provide(testConfig({ smtpUrl })),
        Effect.flip
      )
      expect(error.reason).toBe("SMTP delivery failed (EAUTH 535)")
      expect(JSON.stringify(error)).not.toContain("hunter2")
    }))

  it.scoped("reports an unreachable server as MailError", () =>
    Effect.gen(function*() {
      // Find a port nobody listens on: start a server, note its port, stop it.
      const { port } = yield* Effect.scoped(smtpServer)
      const error = yield* Effect.flatMap(Mailer, (mailer) => mailer.send(mail)).pipe(
        Effect.provide(SmtpMailerLive),
        Effect.provide(testConfig({ smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${port}`)) })),
        Effect.flip
      )
      expect(error.reason).toBe("SMTP delivery failed (ESOCKET)")
    }))
})
