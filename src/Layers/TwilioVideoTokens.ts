/**
 * Twilio Video access tokens with the `twilio` package's `AccessToken` + `VideoGrant`, signed
 * locally (HS256 with the API key secret): no network. Imported dynamically (./Adapters.ts
 * `importLayer`) so the SDK is not loaded at start-up when video is not configured.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import AccessToken from "twilio/lib/jwt/AccessToken.js"
import { AppConfig } from "../Services/AppConfig.js"
import { VideoTokens } from "../Services/Scheduling/VideoTokens.js"

export const TwilioVideoTokensLive: Layer.Layer<VideoTokens, never, AppConfig> = Layer.effect(VideoTokens, Effect.gen(function*() {
  const config = yield* AppConfig
  const settings = Option.getOrThrowWith(config.video, () => new Error("Twilio video settings are required"))
  return {
    configured: true,
    issue: Effect.fn("VideoTokens.issue")(function*(request) {
      yield* Effect.annotateCurrentSpan({ "video.ttl_seconds": request.ttlSeconds })
      return yield* Effect.sync(() => {
        const token = new AccessToken(settings.accountSid, settings.apiKeySid, Redacted.value(settings.apiKeySecret), {
          identity: request.identity,
          ttl: request.ttlSeconds
        })
        token.addGrant(new AccessToken.VideoGrant({ room: request.room }))
        return token.toJwt()
      })
    })
  }
}))
