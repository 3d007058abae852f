/** Shared by the adapter tests: complete settings without reading the environment, temp dirs. */
import { Effect, Layer, LogLevel, Option } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { AppConfig, type AppSettings } from "../../src/Services/AppConfig.js"

export const testSettings = (overrides: Partial<AppSettings> = {}): AppSettings => ({
  port: 0,
  host: "127.0.0.1",
  dataDir: path.join(os.tmpdir(), "unused-data-dir"),
  databaseUrl: Option.none(),
  dbPoolSize: 1,
  publicBaseUrl: "http://api.test",
  inviteUrlBase: Option.none(),
  maxBodyBytes: 1024 * 1024,
  corsOrigins: [],
  trustedProxies: { _tag: "None" },
  shutdownGraceSeconds: 20,
  bootstrapAdminEmail: Option.none(),
  bootstrapAdminPassword: Option.none(),
  signingSecret: Option.none(),
  twilio: Option.none(),
  s3: Option.none(),
  smtpUrl: Option.none(),
  mailFrom: "Care Coordination <no-reply@example.test>",
  otelEndpoint: Option.none(),
  otelServiceName: "care-coordination-api-test",
  logLevel: LogLevel.Info,
  logFormat: "json",
  sessionIdleMinutes: 30,
  sessionMaxHours: 12,
  clinicSupportEmail: "support@clinic.test",
  clinicalAlertEmail: "alerts@clinic.test",
  jobs: { enabled: false, concurrency: 2, pollIntervalMs: 2000 },
  fcm: Option.none(),
  mif: { importDir: Option.none(), maxFileBytes: 64 * 1024 * 1024, urlTimeoutMs: 30_000, urlAllowedNetworks: [] },
  video: Option.none(),
  clinicTimeZone: "America/Los_Angeles",
  billing: {
    npi: "1234567893", taxId: "123456789", name: "Care Coordination Clinic", address: "100 Main St", city: "Sacramento",
    state: "CA", zip: "958140000", taxonomy: "101YM0800X", submitterId: "CCAPI", contactName: "Billing Office",
    contactPhone: "9165550100", receiverId: "CLEARINGHOUSE", receiverName: "Clearinghouse", usage: "T", extraCptCodes: [],
    maxDocumentBytes: 10 * 1024 * 1024
  },
  ...overrides
})

export const testConfig = (overrides: Partial<AppSettings> = {}) => Layer.succeed(AppConfig, testSettings(overrides))

/** A fresh directory, removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "adapters-test-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)
