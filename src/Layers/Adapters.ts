/**
 * Picks the outbound adapters from configuration: S3 when S3_BUCKET is set, else local disk;
 * SMTP when SMTP_URL is set, else the mail outbox; Twilio when TWILIO_* are set, else the
 * telephony outbox.
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
import { OutboxPushLive } from "./OutboxPush.js"
import type { Push } from "../Services/Push.js"
import { SigningSecretLive } from "./SigningSecret.js"

/** The layer a module exports, imported when the layer is built. */
export const importLayer = <ROut, E, RIn>(load: () => Promise<Layer.Layer<ROut, E, RIn>>): Layer.Layer<ROut, E, RIn> =>
  Layer.unwrapEffect(Effect.promise(load))

const S3ObjectStoreLive = importLayer(() => import("./S3ObjectStore.js").then((module) => module.S3ObjectStoreLive))
const SmtpMailerLive = importLayer(() => import("./SmtpMailer.js").then((module) => module.SmtpMailerLive))
const TwilioTelephonyLive = importLayer(() => import("./TwilioTelephony.js").then((module) => module.TwilioTelephonyLive))

/**
 * Push notifications: FCM, with firebase-admin, only when FCM_SERVICE_ACCOUNT_FILE is
 * set; otherwise the outbox (DATA_DIR/outbox/push.jsonl).
 */
export const PushLive: Layer.Layer<Push, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.isSome(config.fcm)
      ? importLayer(() => import("./FcmPush.js").then((module) => module.FcmPushLive))
      : OutboxPushLive)
)

export const AdaptersLive: Layer.Layer<Telephony | ObjectStore | Mailer | Push, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.mergeAll(
      Option.isSome(config.twilio) ? TwilioTelephonyLive : OutboxTelephonyLive,
      Option.isSome(config.s3) ? S3ObjectStoreLive : DiskObjectStoreLive.pipe(Layer.provide(SigningSecretLive)),
      Option.isSome(config.smtpUrl) ? SmtpMailerLive : OutboxMailerLive,
      // FCM when FCM_SERVICE_ACCOUNT_FILE is set, else the push outbox.
      PushLive
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
 * Video tokens: the Twilio layer, with its SDK, only when TWILIO_API_KEY_SID and friends
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

