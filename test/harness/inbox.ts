/**
 * What the server sent out of band (texts and emails), read from the in-memory telephony and mail
 * adapters the harness app runs with: how the race mode's fixtures learn a confirmation code or a
 * reset token, the way a user would, without knowing how the server stores them.
 */
import { Effect } from "effect"
import { MemoryMailer } from "../../src/Layers/MemoryMailer.js"
import { MemoryTelephony } from "../../src/Layers/MemoryTelephony.js"

export interface Inbox {
  /** The texts and email bodies sent to an address (a phone number or an email), oldest first. */
  readonly to: (address: string) => Effect.Effect<ReadonlyArray<string>>
}

/** Nothing is ever sent: for servers without out-of-band messages. */
export const emptyInbox: Inbox = { to: () => Effect.succeed([]) }

export const memoryInbox: Effect.Effect<Inbox, never, MemoryTelephony | MemoryMailer> = Effect.gen(function*() {
  const telephony = yield* MemoryTelephony
  const mailer = yield* MemoryMailer
  return {
    to: (address) =>
      Effect.gen(function*() {
        const wanted = address.toLowerCase()
        const texts = (yield* telephony.sent).filter((m) => m.kind === "sms" && m.to === address).map((m) => m.body ?? "")
        const mails = (yield* mailer.sent).filter((m) => m.to.some((to) => to.toLowerCase() === wanted)).map((m) => m.text)
        return [...texts, ...mails]
      })
  }
})
