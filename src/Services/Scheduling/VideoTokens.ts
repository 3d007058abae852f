/**
 * Video-call access tokens (Twilio Video) as a tag: the Twilio layer signs them locally with an
 * API key (src/Layers/TwilioVideoTokens.ts, imported only when the settings are present).
 */
import { Context, type Effect } from "effect"

export interface VideoTokenRequest {
  /** Who joins: ids only (`provider-3`, `patient-7`), never names. */
  readonly identity: string
  readonly room: string
  readonly ttlSeconds: number
}

export interface VideoTokenIssuer {
  /** False when no Twilio video settings are configured: callers answer 422. */
  readonly configured: boolean
  /** A signed JWT; dies when not configured (callers check `configured` first). */
  readonly issue: (request: VideoTokenRequest) => Effect.Effect<string>
}

export class VideoTokens extends Context.Tag("app/VideoTokens")<VideoTokens, VideoTokenIssuer>() {}
