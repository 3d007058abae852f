/**
 * Production `Mailer`: nodemailer's SMTP transport configured by SMTP_URL
 * (e.g. `smtps://user:pass@smtp.example.com`), sending from MAIL_FROM. `AdaptersLive` imports this
 * module only when SMTP_URL is set.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js"
import { MailError, Mailer, type MailerShape } from "../Services/Mailer.js"
import { AppConfig } from "../Services/AppConfig.js"
import { toNodemailerMessage, withMailSpan } from "./MailMessage.js"

/**
 * Only nodemailer's error code and the SMTP status: messages can quote the server's reply, which
 * may hold recipient addresses, and connection errors can hold the URL.
 */
export const smtpFailure = (error: unknown): MailError => {
  const { code, responseCode } = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown
    responseCode?: unknown
  }
  const detail = [typeof code === "string" ? code : undefined, typeof responseCode === "number" ? responseCode : undefined]
    .filter((part) => part !== undefined)
    .join(" ")
  return new MailError({ reason: detail === "" ? "SMTP delivery failed" : `SMTP delivery failed (${detail})` })
}

// nodemailer's defaults wait minutes on an unresponsive server.
const transportDefaults: SMTPTransport.Options = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000
}

export const makeSmtpMailer = (smtpUrl: Redacted.Redacted, from: string) =>
  Effect.gen(function*() {
    const transport = yield* Effect.acquireRelease(
      Effect.try({
        try: () => nodemailer.createTransport(Redacted.value(smtpUrl), transportDefaults),
        // The parser's own error can quote the URL, password included.
        catch: () => new Error("SMTP_URL is not a valid SMTP URL")
      }).pipe(Effect.orDie),
      (transport) => Effect.sync(() => transport.close())
    )
    const send: MailerShape["send"] = (mail) =>
      toNodemailerMessage(mail, from).pipe(
        Effect.flatMap((message) =>
          Effect.tryPromise({ try: () => transport.sendMail(message), catch: smtpFailure })
        ),
        Effect.map((info) => ({ messageId: info.messageId })),
        withMailSpan(mail)
      )
    return Mailer.of({ send })
  })

/** Requires SMTP_URL; `AdaptersLive` only selects it when it is set. */
export const SmtpMailerLive: Layer.Layer<Mailer, never, AppConfig> = Layer.scoped(
  Mailer,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const smtpUrl = yield* Option.match(config.smtpUrl, {
      onNone: () => Effect.dieMessage("SmtpMailerLive needs SMTP_URL"),
      onSome: Effect.succeed
    })
    return yield* makeSmtpMailer(smtpUrl, config.mailFrom)
  })
)
