/**
 * Every setting the service reads, in one place (README "Configuration" lists them all).
 * Nothing is required: without DATABASE_URL an embedded PostgreSQL starts under DATA_DIR, and
 * without Twilio/S3/SMTP settings the local outbox and disk layers are used.
 */
import { Config, ConfigError, Effect, Either, Layer, LogLevel, Option, ParseResult, Redacted, Schema } from "effect"
import ipaddr from "ipaddr.js"
import * as path from "node:path"
import { maxDocumentBytesLimit } from "../Api/Billing/Claims.js"
import { Password, PasswordAttempt } from "../Api/Schemas.js"
import { isCptFormat } from "../Domain/Billing/Codes.js"
import { isValidNpi } from "../Domain/Providers/Npi.js"
import { isTimeZone } from "../Domain/Scheduling/ZonedTime.js"
import { type AddressLimitSettings, AppConfig, type AppSettings, type TrustedProxies } from "../Services/AppConfig.js"
import { groupedSettings, incompleteGroups } from "./SettingGroups.js"

/** An optional setting; set-but-empty (`DATABASE_URL=`) counts as unset, as in most deploy tools. */
const optional = <A>(config: Config.Config<A>): Config.Config<Option.Option<A>> =>
  Config.option(config).pipe(Config.map(Option.filter((value) =>
    String(Redacted.isRedacted(value) ? Redacted.value(value) : value).trim() !== "")))

const twilio = Config.all({
  accountSid: Config.string("TWILIO_ACCOUNT_SID"),
  authToken: Config.redacted("TWILIO_AUTH_TOKEN"),
  fromNumber: Config.string("TWILIO_FROM_NUMBER"),
  apiBaseUrl: optional(Config.string("TWILIO_API_BASE_URL")),
  messagingServiceSid: optional(Config.string("TWILIO_MESSAGING_SERVICE_SID")),
  smsAutoReply: optional(Config.string("TWILIO_SMS_AUTO_REPLY"))
}).pipe(Config.option)

/** Twilio Video: the account and an API key; all three or none. */
const video = Config.all({
  accountSid: Config.string("TWILIO_ACCOUNT_SID"),
  apiKeySid: Config.string("TWILIO_API_KEY_SID"),
  apiKeySecret: Config.redacted("TWILIO_API_KEY_SECRET")
}).pipe(Config.option)

/** `CLINIC_TIME_ZONE`: an IANA zone `Intl` knows. */
const clinicTimeZone = Config.withDefault(Config.string("CLINIC_TIME_ZONE"), "America/Los_Angeles").pipe(
  Config.validate({ message: "must be an IANA time zone such as America/Los_Angeles", validation: isTimeZone })
)

const s3 = Config.all({
  bucket: Config.string("S3_BUCKET"),
  region: Config.withDefault(Config.string("S3_REGION"), "us-east-1"),
  endpoint: optional(Config.string("S3_ENDPOINT")),
  accessKeyId: optional(Config.string("S3_ACCESS_KEY_ID")),
  secretAccessKey: optional(Config.redacted("S3_SECRET_ACCESS_KEY")),
  forcePathStyle: Config.withDefault(Config.boolean("S3_FORCE_PATH_STYLE"), false)
  // An empty S3_BUCKET (`S3_BUCKET=` in a compose file or .env) means no bucket: the disk store.
}).pipe(Config.option, Config.map(Option.filter((settings) => settings.bucket.trim() !== "")))

const entries = (text: string) => text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")

/**
 * `CORS_ORIGINS`: exact origins (`https://app.example.org`, no path). `*` is refused: every call
 * that matters carries a token, so the list names the frontends that may hold one.
 */
export const parseCorsOrigins = (text: string): Either.Either<ReadonlyArray<string>, string> => {
  const origins: Array<string> = []
  for (const entry of entries(text)) {
    if (entry === "*") return Either.left("\"*\" is not allowed: list the frontends' origins (https://app.example.org)")
    let url: URL
    try {
      url = new URL(entry)
    } catch {
      return Either.left(`${JSON.stringify(entry)} is not an origin such as https://app.example.org`)
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || `${url.origin}/` !== url.href.replace(/\/?$/, "/")) {
      return Either.left(`${JSON.stringify(entry)} is not an origin such as https://app.example.org (scheme and host only)`)
    }
    origins.push(url.origin)
  }
  return Either.right(origins)
}

/** `TRUSTED_PROXIES`: a hop count (`1`), or proxy addresses and CIDR ranges (`10.0.0.0/8, ::1`). */
export const parseTrustedProxies = (text: string): Either.Either<TrustedProxies, string> => {
  const trimmed = text.trim()
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed)
    return hops === 0 ? Either.right({ _tag: "None" }) : Either.right({ _tag: "Hops", hops })
  }
  const ranges: Array<string> = []
  for (const entry of entries(trimmed)) {
    if (ipaddr.isValidCIDR(entry)) ranges.push(entry)
    else if (ipaddr.isValid(entry)) ranges.push(`${entry}/${ipaddr.parse(entry).kind() === "ipv4" ? 32 : 128}`)
    else return Either.left(`${JSON.stringify(entry)} is neither a hop count nor an IP address or CIDR range`)
  }
  return Either.right(ranges.length === 0 ? { _tag: "None" } : { _tag: "Ranges", ranges })
}

const parsed = <A>(name: string, parse: (text: string) => Either.Either<A, string>, fallback: A) =>
  optional(Config.string(name)).pipe(Config.mapOrFail(Option.match({
    onNone: () => Either.right(fallback),
    onSome: (text) => Either.mapLeft(parse(text), (message) => ConfigError.InvalidData([name], message))
  })))

/**
 * `BOOTSTRAP_ADMIN_PASSWORD` must be a password the Api accepts, both as a new password and at
 * sign-in (8 to 128 characters, no NUL; a blank value counts as unset): otherwise the admin it creates could never
 * sign in, and the service would start without a usable admin. The message names the rule,
 * never the value.
 */
const bootstrapAdminPassword = optional(Config.redacted("BOOTSTRAP_ADMIN_PASSWORD")).pipe(
  Config.mapOrFail(Option.match({
    onNone: () => Either.right(Option.none<Redacted.Redacted>()),
    onSome: (secret) => {
      const value = Redacted.value(secret)
      const refused = Either.flatMap(
        Schema.decodeUnknownEither(Password)(value),
        () => Schema.decodeUnknownEither(PasswordAttempt)(value)
      )
      if (Either.isRight(refused)) return Either.right(Option.some(secret))
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(refused.left)
      return Either.left(ConfigError.InvalidData(
        ["BOOTSTRAP_ADMIN_PASSWORD"],
        `${issue?.message ?? "is invalid"}: the bootstrap admin could never sign in with it`
      ))
    }
  }))
)

/** `INVITE_URL_BASE`: an absolute http(s) URL (a query string of its own is kept). */
export const parseInviteUrlBase = (text: string): Either.Either<string, string> => {
  try {
    const url = new URL(text.trim())
    if (url.protocol === "https:" || url.protocol === "http:") return Either.right(url.href)
  } catch {
    // Reported below.
  }
  return Either.left(`${JSON.stringify(text)} is not an http(s) URL such as https://app.example.org/accept-invite`)
}

/**
 * A whole number of at least 1 (a session limit of 0 would sign everyone out at once), and at
 * most `max` when given; checked before the default applies, so an error names the setting.
 */
const positiveInteger = (name: string, fallback: number, max?: number) =>
  Config.withDefault(
    Config.integer(name).pipe(Config.validate(max === undefined
      ? { message: "Expected a whole number of at least 1", validation: (n) => n >= 1 }
      : { message: `Expected a whole number from 1 to ${max}`, validation: (n) => n >= 1 && n <= max })),
    fallback
  )

/** A gone instance must not be mistaken for a live one that missed a beat: stale after more than two beats. */
const liveness = Config.all({
  heartbeatSeconds: positiveInteger("HEARTBEAT_SECONDS", 30),
  staleAfterSeconds: positiveInteger("HEARTBEAT_STALE_SECONDS", 120)
}).pipe(Config.validate({
  message: "HEARTBEAT_STALE_SECONDS must be more than twice HEARTBEAT_SECONDS",
  validation: (l) => l.staleAfterSeconds > 2 * l.heartbeatSeconds
}))

const mif = Config.all({
  importDir: optional(Config.string("MIF_IMPORT_DIR")).pipe(Config.map(Option.map((dir) => path.resolve(dir)))),
  maxFileBytes: positiveInteger("MIF_MAX_FILE_BYTES", 64 * 1024 * 1024),
  urlTimeoutMs: positiveInteger("MIF_URL_TIMEOUT_MS", 30_000),
  urlAllowedNetworks: Config.withDefault(Config.string("MIF_URL_ALLOWED_NETWORKS"), "").pipe(
    Config.map((list) => list.split(",").map((s) => s.trim()).filter((s) => s.length > 0))
  )
})

const billingText = (name: string, fallback: string, max: number) =>
  Config.withDefault(Config.string(name), fallback).pipe(
    Config.map((text) => text.trim()),
    Config.validate({ message: `must be 1 to ${max} characters`, validation: (text) => text.length >= 1 && text.length <= max })
  )

/** 837P settings; the defaults are a valid test identity, so `npm start` can generate files. */
const billing = Config.all({
  npi: Config.withDefault(Config.string("BILLING_NPI"), "1234567893").pipe(
    Config.validate({ message: "must be a 10-digit NPI whose check digit is right", validation: isValidNpi })
  ),
  taxId: Config.withDefault(Config.string("BILLING_TAX_ID"), "123456789").pipe(
    Config.map((text) => text.replace(/-/g, "").trim()),
    Config.validate({ message: "must be a 9-digit employer identification number", validation: (text) => /^\d{9}$/.test(text) })
  ),
  name: billingText("BILLING_NAME", "Care Coordination Clinic", 60),
  address: billingText("BILLING_ADDRESS", "100 Main St", 55),
  city: billingText("BILLING_CITY", "Sacramento", 30),
  state: billingText("BILLING_STATE", "CA", 2),
  zip: Config.withDefault(Config.string("BILLING_ZIP"), "958140000").pipe(
    Config.map((text) => text.replace(/-/g, "").trim()),
    Config.validate({ message: "must be a 9-digit ZIP+4 (837P billing provider)", validation: (text) => /^\d{9}$/.test(text) })
  ),
  taxonomy: billingText("BILLING_TAXONOMY", "101YM0800X", 10),
  submitterId: billingText("BILLING_SUBMITTER_ID", "CCAPI", 15),
  contactName: billingText("BILLING_CONTACT_NAME", "Billing Office", 60),
  contactPhone: Config.withDefault(Config.string("BILLING_CONTACT_PHONE"), "9165550100").pipe(
    Config.map((text) => text.replace(/[^0-9]/g, "")),
    Config.validate({ message: "must be a 10-digit phone number", validation: (text) => text.length === 10 })
  ),
  receiverId: billingText("BILLING_RECEIVER_ID", "CLEARINGHOUSE", 15),
  receiverName: billingText("BILLING_RECEIVER_NAME", "Clearinghouse", 60),
  usage: Config.withDefault(Config.literal("T", "P")("BILLING_USAGE"), "T"),
  extraCptCodes: Config.withDefault(Config.string("BILLING_CPT_CODES"), "").pipe(
    Config.map((list) => list.split(",").map((s) => s.trim().toUpperCase()).filter((s) => s.length > 0)),
    Config.validate({ message: "must be comma-separated CPT/HCPCS codes (5 characters)", validation: (codes) => codes.every(isCptFormat) })
  ),
  maxDocumentBytes: positiveInteger("BILLING_DOCUMENT_MAX_BYTES", maxDocumentBytesLimit).pipe(
    Config.validate({ message: `must be at most ${maxDocumentBytesLimit} (10 MiB)`, validation: (n) => n <= maxDocumentBytesLimit })
  )
})

/** Per client address limits of the public endpoints, unless set (docs/spec-decisions.md gives the reasons). */
export const addressLimitDefaults: AddressLimitSettings = {
  signInsPerMinute: 10,
  registrationsPerHour: 20,
  confirmationResendsPerHour: 10,
  emailChecksPerMinute: 10,
  passwordResetsPerMinute: 10,
  providerInvitesPerMinute: 10,
  assessmentLinksPerMinute: 20,
  questionnaireInvitesPerMinute: 30,
  screenersPerHour: 5
}

const limit = (name: string, field: keyof AddressLimitSettings) => positiveInteger(name, addressLimitDefaults[field])
const addressLimits = Config.all({
  signInsPerMinute: limit("RATE_LIMIT_SIGN_INS_PER_MINUTE", "signInsPerMinute"),
  registrationsPerHour: limit("RATE_LIMIT_REGISTRATIONS_PER_HOUR", "registrationsPerHour"),
  confirmationResendsPerHour: limit("RATE_LIMIT_CONFIRMATION_RESENDS_PER_HOUR", "confirmationResendsPerHour"),
  emailChecksPerMinute: limit("RATE_LIMIT_EMAIL_CHECKS_PER_MINUTE", "emailChecksPerMinute"),
  passwordResetsPerMinute: limit("RATE_LIMIT_PASSWORD_RESETS_PER_MINUTE", "passwordResetsPerMinute"),
  providerInvitesPerMinute: limit("RATE_LIMIT_PROVIDER_INVITES_PER_MINUTE", "providerInvitesPerMinute"),
  assessmentLinksPerMinute: limit("RATE_LIMIT_ASSESSMENT_LINKS_PER_MINUTE", "assessmentLinksPerMinute"),
  questionnaireInvitesPerMinute: limit("RATE_LIMIT_QUESTIONNAIRE_INVITES_PER_MINUTE", "questionnaireInvitesPerMinute"),
  screenersPerHour: limit("RATE_LIMIT_SCREENERS_PER_HOUR", "screenersPerHour")
})

/** Clinic videos. */
const clinicVideos = Config.all({
  maxBytes: positiveInteger("VIDEO_MAX_BYTES", 2 * 1024 * 1024 * 1024),
  ffmpegPath: Config.withDefault(Config.string("FFMPEG_PATH"), "/usr/bin/ffmpeg"),
  ffprobePath: Config.withDefault(Config.string("FFPROBE_PATH"), "/usr/bin/ffprobe"),
  concurrency: positiveInteger("VIDEO_CONCURRENCY", 1)
})

/** Twilio, Twilio Video, S3 and SMTP settings set in part stop start-up, naming what is missing. */
const completeGroups = Config.all(groupedSettings.map((name) => optional(Config.string(name)))).pipe(
  Config.mapOrFail((values) => {
    const set = new Set(groupedSettings.filter((_, i) => Option.isSome(values[i]!)))
    const smtpUrl = Option.getOrUndefined(values[groupedSettings.indexOf("SMTP_URL")]!)
    const errors = incompleteGroups((name) => set.has(name), smtpUrl).map((group) =>
      ConfigError.MissingData([group.missing.join(", ")], group.message))
    return errors.length === 0 ? Either.right(undefined) : Either.left(errors.reduce((all, error) => ConfigError.And(all, error)))
  })
)

/** DATA_DIR, absolute. */
export const dataDirConfig = Config.withDefault(Config.string("DATA_DIR"), "./.data").pipe(Config.map((dir) => path.resolve(dir)))

export const appConfig: Effect.Effect<AppSettings, ConfigError.ConfigError> = Effect.gen(function*() {
  yield* completeGroups
  const port = yield* Config.withDefault(Config.port("PORT"), 3000)
  const host = yield* Config.withDefault(Config.string("HOST"), "0.0.0.0")
  const dataDir = yield* dataDirConfig
  return {
    port,
    host,
    dataDir,
    databaseUrl: yield* optional(Config.redacted("DATABASE_URL")),
    dbPoolSize: yield* Config.withDefault(Config.integer("DB_POOL_SIZE"), 10),
    publicBaseUrl: (yield* Config.withDefault(Config.string("PUBLIC_BASE_URL"), `http://localhost:${port}`))
      .replace(/\/+$/, ""),
    inviteUrlBase: yield* parsed("INVITE_URL_BASE", (text) => Either.map(parseInviteUrlBase(text), Option.some), Option.none<string>()),
    // A 50 MB file sent as base64 JSON is ~67 MB; leave room for the rest of the body.
    maxBodyBytes: yield* Config.withDefault(Config.integer("MAX_BODY_BYTES"), 80 * 1024 * 1024),
    corsOrigins: yield* parsed("CORS_ORIGINS", parseCorsOrigins, []),
    trustedProxies: yield* parsed("TRUSTED_PROXIES", parseTrustedProxies, { _tag: "None" }),
    // Below the usual orchestrator kill timeouts (Kubernetes 30 s) so the drain line gets logged.
    // Validated before the default applies, so a refusal names the setting.
    shutdownGraceSeconds: yield* Config.withDefault(
      Config.number("SHUTDOWN_GRACE_SECONDS").pipe(Config.validate({ message: "Expected 0 or more seconds", validation: (n) => n >= 0 })),
      20
    ),
    // Above a load balancer's idle timeout (AWS ALB 60 s); docs/spec-decisions.md "Platform" gives the reasons. At most a day.
    keepAliveTimeoutMs: yield* positiveInteger("HTTP_KEEP_ALIVE_TIMEOUT_MS", 65_000, 86_400_000),
    bootstrapAdminEmail: yield* optional(Config.string("BOOTSTRAP_ADMIN_EMAIL")),
    bootstrapAdminPassword: yield* bootstrapAdminPassword,
    signingSecret: yield* optional(Config.redacted("SIGNING_SECRET")),
    twilio: yield* twilio,
    s3: yield* s3,
    smtpUrl: yield* optional(Config.redacted("SMTP_URL")),
    mailFrom: yield* Config.withDefault(Config.string("MAIL_FROM"), "Care Coordination <no-reply@localhost>"),
    otelEndpoint: yield* optional(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
    otelServiceName: yield* Config.withDefault(Config.string("OTEL_SERVICE_NAME"), "care-coordination-api"),
    logLevel: yield* Config.withDefault(Config.logLevel("LOG_LEVEL"), LogLevel.Info),
    logFormat: yield* Config.withDefault(Config.literal("json", "pretty")("LOG_FORMAT"), "json"),
    mif: yield* mif,
    video: yield* video,
    clinicVideos: yield* clinicVideos,
    clinicTimeZone: yield* clinicTimeZone,
    addressLimits: yield* addressLimits,
    // Automatic log-off for health data: docs/spec-decisions.md "Sessions" gives the reasons.
    sessionIdleMinutes: yield* positiveInteger("SESSION_IDLE_MINUTES", 30),
    sessionMaxHours: yield* positiveInteger("SESSION_MAX_HOURS", 12),
    // Clinic patients: the inbox help requests are emailed to.
    clinicSupportEmail: yield* Config.withDefault(Config.string("CLINIC_SUPPORT_EMAIL"), "support@localhost"),
    clinicalAlertEmail: yield* Config.withDefault(Config.string("CLINICAL_ALERT_EMAIL"), "clinical-alerts@localhost"),
    jobs: {
      enabled: yield* Config.withDefault(Config.boolean("JOBS_ENABLED"), true),
      concurrency: yield* positiveInteger("JOBS_CONCURRENCY", 4),
      pollIntervalMs: yield* positiveInteger("JOBS_POLL_INTERVAL_MS", 2000)
    },
    liveness: yield* liveness,
    billing: yield* billing,
    // Admin reports: report files hold personal data, so links are short-lived; 30 days at most.
    reports: { linkMinutes: yield* positiveInteger("REPORT_LINK_MINUTES", 15, 43_200) },
    // Push reminders: FCM when a service account key is given, else the push outbox.
    fcm: Option.map(yield* optional(Config.string("FCM_SERVICE_ACCOUNT_FILE")), (serviceAccountFile) => ({ serviceAccountFile })),
    // Collaborator assessment links: 30 days at most.
    collaborators: {
      tokenTtlHours: yield* positiveInteger("ASSESSMENT_TOKEN_TTL_HOURS", 168, 720),
      formUrl: yield* parsed("ASSESSMENT_FORM_URL", (text) => Either.map(parseInviteUrlBase(text), Option.some), Option.none<string>())
    },
    // Content library: the demo bundle loaded at start-up into an empty library.
    contentDemo: yield* Config.withDefault(Config.boolean("CONTENT_DEMO"), true)
  }
})

/** Reads the environment once at start-up. */
export const AppConfigLive = Layer.effect(AppConfig, appConfig)
