/**
 * Push notifications to the app on a user's devices: Firebase Cloud Messaging in
 * production (`src/Layers/FcmPush.ts`), a file outbox by default, memory in tests.
 */
import { Context, type Effect, Schema } from "effect"

export interface PushMessage {
  /** The device's registration token. */
  readonly token: string
  readonly title: string
  readonly body: string
  /** Small string values for the app (ids only), e.g. `{ appointment_id: "12" }`. */
  readonly data?: Readonly<Record<string, string>>
}

export interface PushReceipt {
  /** The provider's id of the message. */
  readonly messageId: string
}

export class PushError extends Schema.TaggedError<PushError>()("PushError", {
  /** The provider's reason, safe to record. */
  reason: Schema.String,
  /** The token is dead (app uninstalled, token rotated): forget the device. */
  unregistered: Schema.Boolean
}) {}

export interface PushShape {
  readonly send: (message: PushMessage) => Effect.Effect<PushReceipt, PushError>
}

export class Push extends Context.Tag("app/Push")<Push, PushShape>() {}
