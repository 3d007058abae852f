/**
 * `Push` through Firebase Cloud Messaging with the official `firebase-admin` SDK (13.x: the last
 * line that runs on Node 20 — README "Dependencies"). Loaded with `importLayer` only when
 * FCM_SERVICE_ACCOUNT_FILE is set, so other instances never load the SDK.
 */
import { Effect, Layer, Option } from "effect"
import type { Agent } from "node:http"
import { randomUUID } from "node:crypto"
import { readFile } from "node:fs/promises"
import { AppConfig } from "../Services/AppConfig.js"
import { Push, type PushMessage, PushError } from "../Services/Push.js"

/** FCM error codes that mean the token will never work again (the device is forgotten). */
const deadTokenCodes = new Set([
  "messaging/registration-token-not-registered",
  "messaging/invalid-registration-token",
  "messaging/invalid-argument"
])

export interface FcmOptions {
  /** A firebase-admin credential: `cert(serviceAccount)` in production, a fixed token in tests. */
  readonly credential: import("firebase-admin/app").Credential
  readonly projectId: string
  /** Where HTTPS requests go (tests: a local stand-in for fcm.googleapis.com). */
  readonly httpAgent?: Agent
}

/** The FCM `Push` for these options; each layer gets its own named firebase app, deleted with its scope. */
export const makeFcmPush = (options: FcmOptions) =>
  Effect.gen(function*() {
    const { initializeApp, deleteApp } = yield* Effect.promise(() => import("firebase-admin/app"))
    const { getMessaging } = yield* Effect.promise(() => import("firebase-admin/messaging"))
    const app = yield* Effect.acquireRelease(
      Effect.sync(() =>
        initializeApp({
          credential: options.credential,
          projectId: options.projectId,
          ...(options.httpAgent === undefined ? {} : { httpAgent: options.httpAgent })
        }, `push-${randomUUID()}`)),
      (app) => Effect.promise(() => deleteApp(app))
    )
    const messaging = getMessaging(app)
    return Push.of({
      send: Effect.fn("Push.send", { attributes: { "push.provider": "fcm" } })(function*(message: PushMessage) {
        const messageId = yield* Effect.tryPromise({
          try: () =>
            messaging.send({
              token: message.token,
              notification: { title: message.title, body: message.body },
              ...(message.data === undefined ? {} : { data: { ...message.data } })
            }),
          catch: (error) => {
            const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "unknown"
            const text = error instanceof Error ? error.message : "FCM request failed"
            return new PushError({ reason: `${code}: ${text}`.slice(0, 500), unregistered: deadTokenCodes.has(code) })
          }
        })
        return { messageId }
      })
    })
  })

/** Production: the service account key file of FCM_SERVICE_ACCOUNT_FILE. */
export const FcmPushLive: Layer.Layer<Push, never, AppConfig> = Layer.scoped(
  Push,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.fcm)) return yield* Effect.dieMessage("FCM_SERVICE_ACCOUNT_FILE is not set")
    const file = config.fcm.value.serviceAccountFile
    const { cert } = yield* Effect.promise(() => import("firebase-admin/app"))
    const projectId = yield* Effect.tryPromise(() => readFile(file, "utf8")).pipe(
      Effect.map((text) => (JSON.parse(text) as { project_id?: unknown }).project_id),
      Effect.filterOrFail((id): id is string => typeof id === "string" && id !== ""),
      Effect.orDieWith(() => new Error("FCM_SERVICE_ACCOUNT_FILE is not a service account key with a project_id"))
    )
    return yield* makeFcmPush({ credential: cert(file), projectId })
  })
)
