/**
 * The local default `Push`: nothing leaves the machine. Each notification is appended as one JSON
 * line to DATA_DIR/outbox/push.jsonl (the token shortened to its last 8 characters).
 */
import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { AppConfig } from "../Services/AppConfig.js"
import { Push, type PushMessage, PushError } from "../Services/Push.js"

export const pushOutboxFile = (dataDir: string) => path.join(dataDir, "outbox", "push.jsonl")

/** Shaped like FCM's message names. */
export const fakePushId = () => `projects/local/messages/${randomBytes(12).toString("hex")}`

export const tokenTail = (token: string) => token.slice(-8)

export const makeOutboxPush = (dataDir: string) => {
  const file = pushOutboxFile(dataDir)
  return Push.of({
    send: Effect.fn("Push.send")(function*(message: PushMessage) {
      const messageId = fakePushId()
      const line = {
        token: tokenTail(message.token),
        title: message.title,
        body: message.body,
        data: message.data ?? {},
        message_id: messageId,
        created_at: new Date(yield* Clock.currentTimeMillis).toISOString()
      }
      // One appendFile per whole line: O_APPEND writes of a line do not interleave.
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(path.dirname(file), { recursive: true })
          await fs.appendFile(file, JSON.stringify(line) + "\n")
        },
        catch: () => new PushError({ reason: "Could not write to the local push outbox", unregistered: false })
      })
      return { messageId }
    })
  })
}

export const OutboxPushLive: Layer.Layer<Push, never, AppConfig> = Layer.effect(
  Push,
  Effect.map(AppConfig, (config) => makeOutboxPush(config.dataDir))
)
