/**
 * Picks the outbound adapters from configuration: S3 when S3_BUCKET is set, else local disk;
 * SMTP when SMTP_URL is set, else the mail outbox; telephony always the outbox for now.
 *
 * A provider's layer (and its SDK: AWS, nodemailer, later Twilio) is imported only when its
 * settings select it, so an instance that does not use a provider does not load or hold it.
 */
import { Effect, Layer, Option } from "effect"
import type { Mailer } from "../Services/Mailer.js"
import type { ObjectStore } from "../Services/ObjectStore.js"
import type { Telephony } from "../Services/Telephony.js"
import { VideoTokens } from "../Services/Scheduling/VideoTokens.js"
import { AppConfig } from "../Services/AppConfig.js"
import { DiskObjectStoreLive, ObjectDownloadRouteLive } from "./DiskObjectStore.js"
import { OutboxMailerLive } from "./OutboxMailer.js"
import { OutboxTelephonyLive } from "./OutboxTelephony.js"
import { SigningSecretLive } from "./SigningSecret.js"

/** The layer a module exports, imported when the layer is built. */
export const importLayer = <ROut, E, RIn>(load: () => Promise<Layer.Layer<ROut, E, RIn>>): Layer.Layer<ROut, E, RIn> =>
  Layer.unwrapEffect(Effect.promise(load))

const S3ObjectStoreLive = importLayer(() => import("./S3ObjectStore.js").then((module) => module.S3ObjectStoreLive))
const SmtpMailerLive = importLayer(() => import("./SmtpMailer.js").then((module) => module.SmtpMailerLive))

export const AdaptersLive: Layer.Layer<Telephony | ObjectStore | Mailer, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.mergeAll(
      // Seam for Twilio: when `config.twilio` is Some, select TwilioTelephonyLive here, imported
      // with `importLayer` like S3 and SMTP (it arrives with the communications work); until then
      // the outbox records every message.
      OutboxTelephonyLive,
      Option.isSome(config.s3) ? S3ObjectStoreLive : DiskObjectStoreLive.pipe(Layer.provide(SigningSecretLive)),
      Option.isSome(config.smtpUrl) ? SmtpMailerLive : OutboxMailerLive
    ))
)

/**
 * GET /objects/* on the HttpApi's router, serving the disk store's signed links; nothing when S3
 * is configured (S3 serves its own presigned URLs).
 */
export const ObjectDownloadLive: Layer.Layer<never, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.isSome(config.s3) ? Layer.empty : ObjectDownloadRouteLive.pipe(Layer.provide(SigningSecretLive)))
)

/**
 * Video tokens (issue 15): the Twilio layer, with its SDK, only when TWILIO_API_KEY_SID and friends
 * are set; otherwise every request for a token is refused (422 "video is not configured").
 */
export const VideoTokensLive: Layer.Layer<VideoTokens, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.isSome(config.video)
      ? importLayer(() => import("./TwilioVideoTokens.js").then((module) => module.TwilioVideoTokensLive))
      : Layer.succeed(VideoTokens, {
        configured: false,
        issue: () => Effect.dieMessage("video tokens are not configured")
      }))
)
