/**
 * Settings refused at start-up: a BOOTSTRAP_ADMIN_PASSWORD the Api would refuse creates an admin
 * who could never sign in, so it stops start-up with a config error naming the setting and the
 * rule (never the value). The process-level check is in test/Startup.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import { appConfig } from "../../src/Layers/Config.js"

const read = (env: Record<string, string>) =>
  Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))

/** Each value of the setting `name` stops start-up with a config error that names the setting. */
const expectRefused = (name: string, values: ReadonlyArray<string>) =>
  Effect.forEach(values, (value) =>
    Effect.map(read({ [name]: value }), (result) => {
      expect(Either.isLeft(result), `${name}=${value}`).toBe(true)
      if (Either.isLeft(result)) expect(String(result.left), `${name}=${value}`).toContain(name)
    }), { discard: true })

const refusal = (password: string) =>
  Effect.map(read({ BOOTSTRAP_ADMIN_EMAIL: "boot@example.test", BOOTSTRAP_ADMIN_PASSWORD: password }), (result) =>
    Either.isLeft(result) ? String(result.left) : "accepted")

describe("BOOTSTRAP_ADMIN_PASSWORD", () => {
  it.effect("a password the Api accepts, up to 128 characters, is kept", () =>
    Effect.gen(function*() {
      for (const password of ["boot-password-1", "x".repeat(128), "ünïcödé pässwörd", " padded passphrase "]) {
        const settings = Either.getOrThrow(yield* read({ BOOTSTRAP_ADMIN_PASSWORD: password }))
        expect(Option.map(settings.bootstrapAdminPassword, Redacted.value)).toEqual(Option.some(password))
      }
      // Unset, empty or blank (set-but-blank counts as unset, like every setting): no bootstrap admin.
      for (const env of [{}, { BOOTSTRAP_ADMIN_PASSWORD: "" }, { BOOTSTRAP_ADMIN_PASSWORD: "          " }]) {
        expect(Either.getOrThrow(yield* read(env)).bootstrapAdminPassword).toEqual(Option.none())
      }
    }))

  it.effect("longer than 128 characters, shorter than 8 or holding NUL: a config error naming the rule, not the value", () =>
    Effect.gen(function*() {
      const cases: Array<[string, string]> = [
        ["y".repeat(129), "is too long (maximum is 128 characters)"],
        ["Qz7!kp", "is too short (minimum is 8 characters)"],
        ["passw\u0000rd-1", "must not contain null characters"]
      ]
      for (const [password, rule] of cases) {
        const message = yield* refusal(password)
        expect(message).toContain("BOOTSTRAP_ADMIN_PASSWORD")
        expect(message).toContain(`${rule}: the bootstrap admin could never sign in with it`)
        expect(message).not.toContain(password)
      }
    }))
})

describe("INVITE_URL_BASE", () => {
  it.effect("unset or empty: none (invite links use the API's validate URL); an http(s) URL is kept", () =>
    Effect.gen(function*() {
      for (const env of [{}, { INVITE_URL_BASE: "" }]) {
        const result = yield* read(env)
        expect(Either.isRight(result) && Option.isNone(result.right.inviteUrlBase)).toBe(true)
      }
      const set = yield* read({ INVITE_URL_BASE: "https://app.example.org/accept-invite" })
      expect(Either.isRight(set) && Option.getOrNull(set.right.inviteUrlBase)).toBe("https://app.example.org/accept-invite")
    }))

  it.effect("anything but an absolute http(s) URL stops start-up naming the setting", () =>
    Effect.gen(function*() {
      yield* expectRefused("INVITE_URL_BASE", ["app.example.org/accept", "ftp://example.org/x", "javascript:alert(1)"])
    }))
})

describe("S3_BUCKET", () => {
  it.effect("unset or empty: no S3 settings (the disk store); a bucket name selects S3", () =>
    Effect.gen(function*() {
      for (const env of [{}, { S3_BUCKET: "" }, { S3_BUCKET: "  " }]) {
        const result = yield* read(env)
        expect(Either.isRight(result) && Option.isNone(result.right.s3), JSON.stringify(env)).toBe(true)
      }
      const set = yield* read({ S3_BUCKET: "clinic-files", S3_REGION: "us-west-2" })
      expect(Either.isRight(set) && Option.getOrNull(set.right.s3)?.bucket).toBe("clinic-files")
    }))
})

describe("HEARTBEAT_SECONDS and HEARTBEAT_STALE_SECONDS", () => {
  it.effect("default to 30 s and 120 s; a stale time within two beats stops start-up", () =>
    Effect.gen(function*() {
      expect(Either.getOrThrow(yield* read({})).liveness).toEqual({ heartbeatSeconds: 30, staleAfterSeconds: 120 })
      expect(Either.getOrThrow(yield* read({ HEARTBEAT_SECONDS: "1", HEARTBEAT_STALE_SECONDS: "3" })).liveness)
        .toEqual({ heartbeatSeconds: 1, staleAfterSeconds: 3 })
      for (const env of [{ HEARTBEAT_STALE_SECONDS: "60" }, { HEARTBEAT_SECONDS: "60" }, { HEARTBEAT_SECONDS: "0" }]) {
        expect(Either.isLeft(yield* read(env)), JSON.stringify(env)).toBe(true)
      }
      expect(String(Either.flip(yield* read({ HEARTBEAT_STALE_SECONDS: "60" })).pipe(Either.getOrThrow)))
        .toContain("HEARTBEAT_STALE_SECONDS must be more than twice HEARTBEAT_SECONDS")
    }))
})

describe("settings that only work together", () => {
  const refusedWith = (env: Record<string, string>) =>
    Effect.map(read(env), (result) => (Either.isLeft(result) ? String(result.left) : "accepted"))
  const twilio = { TWILIO_ACCOUNT_SID: "AC0123", TWILIO_AUTH_TOKEN: "token-secret-value", TWILIO_FROM_NUMBER: "+15550001111" }
  const video = { TWILIO_ACCOUNT_SID: "AC0123", TWILIO_API_KEY_SID: "SK0123", TWILIO_API_KEY_SECRET: "key-secret-value" }

  it.effect("complete groups, or none of a group, start", () =>
    Effect.gen(function*() {
      const complete: Array<Record<string, string>> = [
        {},
        twilio,
        { ...twilio, TWILIO_MESSAGING_SERVICE_SID: "MG0123" },
        video,
        { ...twilio, ...video },
        { S3_BUCKET: "files" },
        { S3_BUCKET: "files", S3_ACCESS_KEY_ID: "AKIA", S3_SECRET_ACCESS_KEY: "s3-secret-value" },
        { SMTP_URL: "smtp://127.0.0.1:2525" },
        { SMTP_URL: "smtps://mailer:mail-secret@smtp.example.org" },
        // Blank counts as unset: a compose file's `TWILIO_ACCOUNT_SID=` selects the outbox.
        { TWILIO_ACCOUNT_SID: "", TWILIO_AUTH_TOKEN: " ", S3_BUCKET: "", SMTP_URL: "" }
      ]
      for (const env of complete) expect(yield* refusedWith(env), JSON.stringify(env)).toBe("accepted")
      const settings = Either.getOrThrow(yield* read({ ...twilio, ...video, S3_BUCKET: "files" }))
      expect(Option.isSome(settings.twilio) && Option.isSome(settings.video) && Option.isSome(settings.s3)).toBe(true)
    }))

  it.effect("a group set in part stops start-up naming what is missing, never a secret", () =>
    Effect.gen(function*() {
      const cases: Array<[Record<string, string>, ReadonlyArray<string>]> = [
        [{ TWILIO_ACCOUNT_SID: "AC0123", TWILIO_AUTH_TOKEN: "token-secret-value" }, ["missing: TWILIO_FROM_NUMBER"]],
        [{ TWILIO_ACCOUNT_SID: "AC0123", TWILIO_AUTH_TOKEN: "token-secret-value", TWILIO_MESSAGING_SERVICE_SID: "MG0123" }, ["missing: TWILIO_FROM_NUMBER"]],
        [{ TWILIO_ACCOUNT_SID: "AC0123" }, ["missing: TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER"]],
        [{ TWILIO_AUTH_TOKEN: "token-secret-value", TWILIO_FROM_NUMBER: "+15550001111" }, ["missing: TWILIO_ACCOUNT_SID"]],
        [{ TWILIO_SMS_AUTO_REPLY: "Thanks" }, ["missing: TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER"]],
        [{ TWILIO_ACCOUNT_SID: "AC0123", TWILIO_API_KEY_SID: "SK0123" }, ["Twilio Video", "missing: TWILIO_API_KEY_SECRET"]],
        [{ ...twilio, TWILIO_API_KEY_SECRET: "key-secret-value" }, ["Twilio Video", "missing: TWILIO_API_KEY_SID"]],
        [{ S3_BUCKET: "files", S3_ACCESS_KEY_ID: "AKIA" }, ["missing: S3_SECRET_ACCESS_KEY"]],
        [{ S3_BUCKET: "files", S3_SECRET_ACCESS_KEY: "s3-secret-value" }, ["missing: S3_ACCESS_KEY_ID"]],
        [{ S3_ENDPOINT: "http://127.0.0.1:9000", S3_ACCESS_KEY_ID: "AKIA", S3_SECRET_ACCESS_KEY: "s3-secret-value" }, ["missing: S3_BUCKET"]],
        [{ SMTP_URL: "smtps://mailer@smtp.example.org" }, ["SMTP_URL has a user but no password"]],
        [{ SMTP_URL: "smtp://:mail-secret@smtp.example.org" }, ["SMTP_URL has a password but no user"]],
        [{ SMTP_URL: "mailpit:1025" }, ["SMTP_URL must start with smtp:// or smtps://"]],
        [{ SMTP_URL: "smtp.example.org mail-secret" }, ["SMTP_URL is not a URL"]]
      ]
      for (const [env, expected] of cases) {
        const message = yield* refusedWith(env)
        for (const part of expected) expect(message, JSON.stringify(env)).toContain(part)
        for (const secret of ["token-secret-value", "key-secret-value", "s3-secret-value", "mail-secret"]) {
          expect(message).not.toContain(secret)
        }
      }
      // Two groups at once: both are named.
      const both = yield* refusedWith({ TWILIO_ACCOUNT_SID: "AC0123", TWILIO_AUTH_TOKEN: "t", S3_ACCESS_KEY_ID: "AKIA" })
      expect(both).toContain("missing: TWILIO_FROM_NUMBER")
      expect(both).toContain("missing: S3_BUCKET, S3_SECRET_ACCESS_KEY")
    }))
})

describe("per-address limits (RATE_LIMIT_*)", () => {
  it.effect("default to the limits the endpoints always had", () =>
    Effect.gen(function*() {
      expect(Either.getOrThrow(yield* read({})).addressLimits).toEqual({
        signInsPerMinute: 10,
        registrationsPerHour: 20,
        confirmationResendsPerHour: 10,
        emailChecksPerMinute: 10,
        passwordResetsPerMinute: 10,
        providerInvitesPerMinute: 10,
        assessmentLinksPerMinute: 20,
        questionnaireInvitesPerMinute: 30,
        screenersPerHour: 5
      })
    }))

  it.effect("are read from their settings; 0, negative or fractional is a config error naming the setting", () =>
    Effect.gen(function*() {
      const tuned = Either.getOrThrow(yield* read({ RATE_LIMIT_REGISTRATIONS_PER_HOUR: "200", RATE_LIMIT_SCREENERS_PER_HOUR: "12" }))
      expect(tuned.addressLimits).toMatchObject({ registrationsPerHour: 200, screenersPerHour: 12, signInsPerMinute: 10 })
      yield* expectRefused("RATE_LIMIT_SIGN_INS_PER_MINUTE", ["0", "-5", "2.5", "many"])
    }))
})

describe("HTTP_KEEP_ALIVE_TIMEOUT_MS", () => {
  it.effect("defaults to 65 s, above AWS ALB's 60 s idle timeout; a longer one is read", () =>
    Effect.gen(function*() {
      expect(Either.getOrThrow(yield* read({})).keepAliveTimeoutMs).toBe(65_000)
      expect(Either.getOrThrow(yield* read({ HTTP_KEEP_ALIVE_TIMEOUT_MS: "620000" })).keepAliveTimeoutMs).toBe(620_000)
    }))

  it.effect("0, negative, fractional, not a number or past a day is a config error naming the setting", () =>
    Effect.gen(function*() {
      yield* expectRefused("HTTP_KEEP_ALIVE_TIMEOUT_MS", ["0", "-5", "2.5", "soon", "86400001"])
    }))
})

describe("settings with a range", () => {
  it.effect("a value out of range is a config error naming the setting; unset takes the default", () =>
    Effect.gen(function*() {
      const defaults = Either.getOrThrow(yield* read({}))
      expect([defaults.shutdownGraceSeconds, defaults.reports.linkMinutes, defaults.collaborators.tokenTtlHours]).toEqual([20, 15, 168])
      const refused: Array<[string, ReadonlyArray<string>]> = [
        ["SHUTDOWN_GRACE_SECONDS", ["-1", "soon"]],
        ["REPORT_LINK_MINUTES", ["0", "43201", "2.5"]],
        ["ASSESSMENT_TOKEN_TTL_HOURS", ["0", "721", "week"]]
      ]
      for (const [name, values] of refused) yield* expectRefused(name, values)
      const tuned = Either.getOrThrow(yield* read({ SHUTDOWN_GRACE_SECONDS: "0", REPORT_LINK_MINUTES: "43200", ASSESSMENT_TOKEN_TTL_HOURS: "720" }))
      expect([tuned.shutdownGraceSeconds, tuned.reports.linkMinutes, tuned.collaborators.tokenTtlHours]).toEqual([0, 43_200, 720])
    }))
})
