/**
 * What the SMTP and outbox mailers share: the nodemailer message for a `Mail` and the send span.
 * Types only from nodemailer, so importing this module does not load it.
 */
import { Clock, Effect } from "effect"
import type Mail from "nodemailer/lib/mailer/index.js"
import type { Mail as OutgoingMail } from "../Services/Mailer.js"

/** The nodemailer message for a `Mail`; the Date header comes from Effect's clock. */
export const toNodemailerMessage = (mail: OutgoingMail, from: string) =>
  Effect.map(Clock.currentTimeMillis, (now): Mail.Options => ({
    from,
    to: [...mail.to],
    subject: mail.subject,
    text: mail.text,
    date: new Date(now),
    ...(mail.html === undefined ? {} : { html: mail.html }),
    attachments: (mail.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      content: Buffer.from(attachment.content),
      contentType: attachment.contentType
    }))
  }))

/** The `Mailer.send` span: counts and the Message-ID only, never addresses, subjects or bodies. */
export const withMailSpan = (mail: OutgoingMail) =>
<A extends { readonly messageId: string }, E, R>(send: Effect.Effect<A, E, R>) =>
  send.pipe(
    Effect.tap(({ messageId }) => Effect.annotateCurrentSpan("mail.message_id", messageId)),
    Effect.withSpan("Mailer.send", {
      attributes: { "mail.recipients": mail.to.length, "mail.attachments": mail.attachments?.length ?? 0 }
    })
  )
