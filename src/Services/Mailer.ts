/** Outbound email (SMTP in production). */
import { Context, type Effect, Schema } from "effect"

export interface MailAttachment {
  readonly filename: string
  readonly content: Uint8Array
  readonly contentType: string
}

export interface Mail {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  readonly html?: string
  readonly attachments?: ReadonlyArray<MailAttachment>
}

export class MailError extends Schema.TaggedError<MailError>()("MailError", {
  reason: Schema.String
}) {}

export interface MailerShape {
  readonly send: (mail: Mail) => Effect.Effect<{ readonly messageId: string }, MailError>
}

export class Mailer extends Context.Tag("app/Mailer")<Mailer, MailerShape>() {}
