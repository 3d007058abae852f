/**
 * The local default `Mailer`: each message is composed by nodemailer exactly as it would be sent
 * and written as an RFC 822 file to DATA_DIR/outbox/mail/<timestamp>-<id>.eml, which any mail
 * client opens. nodemailer is loaded with the first message, not at start-up: most instances
 * of a fresh machine send no mail for a long while, and an idle instance should not hold it.
 */
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { MailError, Mailer, type MailerShape } from "../Services/Mailer.js"
import { AppConfig, type AppSettings } from "../Services/AppConfig.js"
import { toNodemailerMessage, withMailSpan } from "./MailMessage.js"

export const mailOutboxDir = (dataDir: string) => path.join(dataDir, "outbox", "mail")

/** `2026-01-31T09:30:00.123Z` -> `20260131T093000123Z`: sorts by time and is safe in file names. */
const fileStamp = (date: Date) => date.toISOString().replace(/[-:.]/g, "")

export const makeOutboxMailer = (settings: Pick<AppSettings, "dataDir" | "mailFrom">) => Effect.gen(function*() {
  const dir = mailOutboxDir(settings.dataDir)
  const transport = yield* Effect.cached(Effect.promise(() =>
    import("nodemailer").then(({ default: nodemailer }) =>
      nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" }))
  ))

  const send: MailerShape["send"] = (mail) =>
    Effect.gen(function*() {
      const message = yield* toNodemailerMessage(mail, settings.mailFrom)
      const composer = yield* transport
      const info = yield* Effect.tryPromise({
        try: () => composer.sendMail(message),
        catch: () => new MailError({ reason: "Could not compose the message" })
      })
      const file = path.join(dir, `${fileStamp(message.date as Date)}-${randomBytes(6).toString("hex")}.eml`)
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(dir, { recursive: true })
          await fs.writeFile(file, info.message as Buffer, { flag: "wx" })
        },
        catch: () => new MailError({ reason: "Could not write to the local mail outbox" })
      })
      return { messageId: info.messageId }
    }).pipe(withMailSpan(mail))

  return Mailer.of({ send })
})

export const OutboxMailerLive: Layer.Layer<Mailer, never, AppConfig> = Layer.effect(
  Mailer,
  Effect.flatMap(AppConfig, makeOutboxMailer)
)
