/**
 * The service's settings as a tag: services read them from here; the layer that reads the
 * environment is `src/Layers/Config.ts` (README "Configuration" lists every variable).
 */
import { Context, type LogLevel, type Option, type Redacted } from "effect"

export interface S3Settings {
  readonly bucket: string
  readonly region: string
  readonly endpoint: Option.Option<string>
  readonly accessKeyId: Option.Option<string>
  readonly secretAccessKey: Option.Option<Redacted.Redacted>
  readonly forcePathStyle: boolean
}

export interface TwilioSettings {
  readonly accountSid: string
  readonly authToken: Redacted.Redacted
  readonly fromNumber: string
  /** Only for tests and stand-ins: where the REST API lives. */
  readonly apiBaseUrl: Option.Option<string>
  /** Messaging service outbound SMS are sent through (`MG…`); None: from `fromNumber`. */
  readonly messagingServiceSid: Option.Option<string>
  /** Text answered to every inbound SMS (TwiML `<Message>`); None: no reply. */
  readonly smsAutoReply: Option.Option<string>
}

/**
 * Twilio Video: access tokens are signed locally with an API key, no network call.
 * Set together: TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID, TWILIO_API_KEY_SECRET.
 */
export interface VideoSettings {
  readonly accountSid: string
  readonly apiKeySid: string
  readonly apiKeySecret: Redacted.Redacted
}

/** Clinic videos: uploads and the ffmpeg processing of `process_video` jobs. */
export interface ClinicVideoSettings {
  /** Largest upload (VIDEO_MAX_BYTES, default 2 GiB). */
  readonly maxBytes: number
  /** ffmpeg and ffprobe binaries (FFMPEG_PATH, FFPROBE_PATH; default /usr/bin/…, Debian's package). */
  readonly ffmpegPath: string
  readonly ffprobePath: string
  /** Videos this instance processes at once (VIDEO_CONCURRENCY, default 1). */
  readonly concurrency: number
}

/** Member information file imports (ECM §4.6). */
export interface MifSettings {
  /** Directory `path` imports may read from; None → path imports are refused. */
  readonly importDir: Option.Option<string>
  /** Largest file accepted from any source. */
  readonly maxFileBytes: number
  /** Time allowed for a `url` import to be fetched, redirects included. */
  readonly urlTimeoutMs: number
  /** CIDR ranges a `url` may reach although private (an internal file server); metadata never. */
  readonly urlAllowedNetworks: ReadonlyArray<string>
}

/**
 * Claims and 837P files: the billing provider (2000A), the submitter (1000A) and the
 * clearinghouse (1000B). Local defaults let `npm start` generate test files (ISA15 `T`).
 */
export interface BillingSettings {
  /** 10 digits, Luhn-checked with the 80840 prefix. */
  readonly npi: string
  /** EIN, 9 digits. */
  readonly taxId: string
  readonly name: string
  readonly address: string
  readonly city: string
  readonly state: string
  /** 5 or 9 digits. */
  readonly zip: string
  /** Health-care provider taxonomy code (PRV03). */
  readonly taxonomy: string
  /** ISA06/GS02 and 1000A NM109: our id at the clearinghouse. */
  readonly submitterId: string
  readonly contactName: string
  readonly contactPhone: string
  /** ISA08/GS03 and 1000B NM109. */
  readonly receiverId: string
  readonly receiverName: string
  /** ISA15. */
  readonly usage: "T" | "P"
  /** CPT codes accepted beyond the spec's list. */
  readonly extraCptCodes: ReadonlyArray<string>
  /** Largest claim document. */
  readonly maxDocumentBytes: number
}

/** Admin report files. */
export interface ReportSettings {
  /** Lifetime of the signed link a download redirects to (never past the report's 30-day expiry). */
  readonly linkMinutes: number
}

/** The job queue worker of this instance (`src/Layers/Jobs.ts`). */
export interface JobSettings {
  /** false: an API-only instance; jobs it adds run on instances where this is true. */
  readonly enabled: boolean
  /** Jobs run at once by this instance. */
  readonly concurrency: number
  /** How often the worker looks for jobs that became due (new jobs are noticed at once). */
  readonly pollIntervalMs: number
}

/**
 * How instances tell each other they are alive (`src/Layers/Instance.ts`): work held by an
 * instance silent for `staleAfterSeconds` (its job locks, its unfinished imports) is released or
 * failed by the others, each sweeping every `heartbeatSeconds`.
 */
export interface LivenessSettings {
  /** HEARTBEAT_SECONDS: how often each instance records that it is alive, and sweeps. */
  readonly heartbeatSeconds: number
  /** HEARTBEAT_STALE_SECONDS: silence after which an instance counts as gone (more than two beats). */
  readonly staleAfterSeconds: number
}

/**
 * Which proxies in front of the service may say who the client is (`X-Forwarded-For`) and how it
 * was reached (`X-Forwarded-Proto`/`-Host`): none (the socket peer is the client), a number of
 * hops, or the addresses and CIDR ranges of the proxies.
 */
export type TrustedProxies =
  | { readonly _tag: "None" }
  | { readonly _tag: "Hops"; readonly hops: number }
  | { readonly _tag: "Ranges"; readonly ranges: ReadonlyArray<string> }

/**
 * Requests one client address may make per fixed window to the public endpoints that can be
 * abused (guessing, spraying, texting, mailing). Behind one NAT address (a clinic front desk) a
 * clinic may need more.
 */
export interface AddressLimitSettings {
  readonly signInsPerMinute: number
  readonly registrationsPerHour: number
  readonly confirmationResendsPerHour: number
  readonly emailChecksPerMinute: number
  readonly passwordResetsPerMinute: number
  /** Provider invite validations, and acceptances, each. */
  readonly providerInvitesPerMinute: number
  /** Collaborator assessment link form, decline and submit, each. */
  readonly assessmentLinksPerMinute: number
  readonly questionnaireInvitesPerMinute: number
  readonly screenersPerHour: number
}

export interface AppSettings {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dbPoolSize: number
  readonly publicBaseUrl: string
  /**
   * The frontend page that accepts provider invites (`https://app.example.org/accept-invite`): invite
   * emails link to it with `?token=…`. None: the API's own validate URL under `publicBaseUrl`.
   */
  readonly inviteUrlBase: Option.Option<string>
  readonly maxBodyBytes: number
  /** Browser origins allowed to call the API (`https://app.example.org`); empty: none. */
  readonly corsOrigins: ReadonlyArray<string>
  readonly trustedProxies: TrustedProxies
  /** How long a SIGTERM waits for in-flight requests before cutting them. */
  readonly shutdownGraceSeconds: number
  /**
   * How long an idle keep-alive connection stays open (HTTP_KEEP_ALIVE_TIMEOUT_MS): longer than the
   * idle timeout of the load balancer in front, so it never sends a request on a connection the
   * server is closing.
   */
  readonly keepAliveTimeoutMs: number
  readonly bootstrapAdminEmail: Option.Option<string>
  readonly bootstrapAdminPassword: Option.Option<Redacted.Redacted>
  readonly signingSecret: Option.Option<Redacted.Redacted>
  readonly twilio: Option.Option<TwilioSettings>
  readonly s3: Option.Option<S3Settings>
  readonly smtpUrl: Option.Option<Redacted.Redacted>
  readonly mailFrom: string
  readonly otelEndpoint: Option.Option<string>
  readonly otelServiceName: string
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "json" | "pretty"
  readonly mif: MifSettings
  /** Twilio Video token settings; None → video tokens are refused (422). */
  readonly video: Option.Option<VideoSettings>
  /** Clinic video uploads and processing; not Twilio Video (`video`). */
  readonly clinicVideos: ClinicVideoSettings
  /** IANA zone of the clinic's wall clock: recurring slots and day filters (`America/Los_Angeles`). */
  readonly clinicTimeZone: string
  /** Per client address limits of the public endpoints (RATE_LIMIT_* settings; src/Services/AddressLimits.ts). */
  readonly addressLimits: AddressLimitSettings
  /** A session token unused for this long stops working (automatic log-off). */
  readonly sessionIdleMinutes: number
  /** A session token stops working this long after sign-in, however busy. */
  readonly sessionMaxHours: number
  /** Where help requests of clinic patients' families are emailed (CLINIC_SUPPORT_EMAIL). */
  readonly clinicSupportEmail: string
  /** Where self-harm alerts go when a patient has no primary provider, and those of public screeners (CLINICAL_ALERT_EMAIL). */
  readonly clinicalAlertEmail: string
  readonly jobs: JobSettings
  readonly liveness: LivenessSettings
  readonly billing: BillingSettings
  /** Admin report files. */
  readonly reports: ReportSettings
  /** Firebase Cloud Messaging for push reminders; None → the push outbox. */
  readonly fcm: Option.Option<FcmSettings>
  /** Load seeds/content/demo.json at start-up when the content library is empty (CONTENT_DEMO, default true). */
  readonly contentDemo: boolean
  /** Collaborator assessment links. */
  readonly collaborators: CollaboratorSettings
}

/** Collaborator assessment links. */
export interface CollaboratorSettings {
  /** ASSESSMENT_TOKEN_TTL_HOURS: how long a link works (1 to 720 hours, default 168). */
  readonly tokenTtlHours: number
  /** ASSESSMENT_FORM_URL: the frontend page a link opens; None → the API's own form endpoint. */
  readonly formUrl: Option.Option<string>
}

export interface FcmSettings {
  /** Path of the Firebase service account's JSON key (FCM_SERVICE_ACCOUNT_FILE); its project is the FCM project. */
  readonly serviceAccountFile: string
}

export class AppConfig extends Context.Tag("app/AppConfig")<AppConfig, AppSettings>() {}
