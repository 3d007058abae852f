/**
 * ECM communications (ECM §4.3): the staff endpoints, the admin list and the telephony webhooks,
 * with the `TwilioSignature` middleware that authenticates the webhooks.
 */
import { HttpApiBuilder, HttpServerRequest, UrlParams } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { Api } from "../../../Api/Api.js"
import { TwilioSignature, UnmatchedSmsList, unmatchedPageSize } from "../../../Api/Ecm/Communications.js"
import { ecmForbidden } from "../../../Api/Errors.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { AppConfig } from "../../../Services/AppConfig.js"
import { Communications } from "../../../Services/Ecm/Communications.js"
import { TelephonyWebhooks } from "../../../Services/Ecm/TelephonyWebhooks.js"
import { publicRequestUrl } from "../Forwarded.js"

export const HttpEcmCommunicationsLive = HttpApiBuilder.group(Api, "ecmCommunications", (handlers) =>
  Effect.gen(function*() {
    const communications = yield* Communications
    return handlers
      .handle("sendSms", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => communications.sendSms(caller.id, path.patient_id, payload.sms.phone_number, payload.sms.body)))
      .handle("placeCall", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => communications.placeCall(caller.id, path.patient_id, payload.call.phone_number)))
  }))

export const HttpEcmCommunicationsAdminLive = HttpApiBuilder.group(Api, "ecmCommunicationsAdmin", (handlers) =>
  Effect.gen(function*() {
    const communications = yield* Communications
    return handlers.handle("unmatchedSms", ({ urlParams }) =>
      Effect.map(communications.unmatchedSms(pageRequest(urlParams, unmatchedPageSize)), (listed) => UnmatchedSmsList.make(listed, true)))
  }))

export const HttpTelephonyWebhooksLive = HttpApiBuilder.group(Api, "telephonyWebhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* TelephonyWebhooks
    return handlers
      .handle("inboundSms", ({ payload }) => webhooks.inboundSms(payload))
      .handle("inboundVoice", ({ payload }) => webhooks.inboundVoice(payload))
      .handle("smsStatus", ({ payload, urlParams }) => webhooks.smsStatus(urlParams.sms_id, payload))
      .handle("voiceStatus", ({ payload, urlParams }) => webhooks.voiceStatus(urlParams.call_id, payload))
      .handle("outboundCall", ({ payload, urlParams }) => webhooks.outboundCall(urlParams.call_id, payload))
      .handle("recording", ({ payload }) => webhooks.recording(payload))
  }))

/** Node gives the request target as sent (`/path?query`); a web Request gives an absolute URL. */
const pathAndQuery = (url: string) => {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)
  return absolute === null ? url : url.slice(absolute[0].length) || "/"
}

const refused = (message: string) => Effect.fail(ecmForbidden(message))

/**
 * `X-Twilio-Signature` checked with the `twilio` library against the URL Twilio requested —
 * PUBLIC_BASE_URL + path + query as sent, or the public URL the trusted proxies report
 * (`publicRequestUrl`) — and every posted parameter. The library module is loaded on the first
 * webhook, keeping the SDK off the start-up path.
 */
export const TwilioSignatureLive = Layer.effect(
  TwilioSignature,
  Effect.map(AppConfig, (config) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Option.isNone(config.twilio)) return yield* refused("Webhook signatures cannot be checked: TWILIO_AUTH_TOKEN is not configured")
      const signature = request.headers["x-twilio-signature"]
      if (signature === undefined || signature === "") return yield* refused("X-Twilio-Signature is missing")
      const mediaType = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
      const params = mediaType === "application/x-www-form-urlencoded"
        ? yield* Effect.map(request.urlParamsBody, UrlParams.toRecord).pipe(Effect.orElseSucceed(() => undefined))
        : {}
      if (params === undefined) return yield* refused("X-Twilio-Signature is invalid")
      const { validateRequest } = yield* Effect.promise(() => import("twilio/lib/webhooks/webhooks.js"))
      const authToken = Redacted.value(config.twilio.value.authToken)
      const configured = `${config.publicBaseUrl.replace(/\/+$/, "")}${pathAndQuery(request.originalUrl)}`
      const urls = [configured, yield* Effect.provideService(publicRequestUrl, AppConfig, config)]
      if (!urls.some((url) => validateRequest(authToken, signature, url, params))) return yield* refused("X-Twilio-Signature is invalid")
    }).pipe(Effect.withSpan("TwilioSignature.check")))
)
