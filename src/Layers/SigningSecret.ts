/**
 * The HMAC key for URLs the service signs itself (disk object downloads). SIGNING_SECRET when
 * set; otherwise a random secret kept in DATA_DIR/signing-secret, so links issued before a
 * restart keep working after it.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { AppConfig } from "../Services/AppConfig.js"

export class SigningSecret extends Context.Tag("app/SigningSecret")<SigningSecret, Redacted.Redacted<string>>() {}

const isErrnoCode = (error: unknown, code: string) =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === code

/** Reads the secret file, creating it first if absent. */
export const loadOrCreateSecret = (dataDir: string): Effect.Effect<Redacted.Redacted<string>> =>
  Effect.promise(async () => {
    const file = path.join(dataDir, "signing-secret")
    await fs.mkdir(dataDir, { recursive: true })
    // Written aside, then hard-linked into place: `link` refuses to replace an existing file, so
    // processes starting together agree on one secret and none reads a half-written file.
    const candidate = `${file}.${randomBytes(6).toString("hex")}.tmp`
    await fs.writeFile(candidate, randomBytes(32).toString("hex"), { mode: 0o600 })
    try {
      await fs.link(candidate, file)
    } catch (error) {
      if (!isErrnoCode(error, "EEXIST")) throw error
    } finally {
      await fs.rm(candidate, { force: true })
    }
    const secret = (await fs.readFile(file, "utf8")).trim()
    if (secret.length === 0) throw new Error(`${file} is empty; delete it to generate a new secret`)
    return Redacted.make(secret)
  })

export const SigningSecretLive: Layer.Layer<SigningSecret, never, AppConfig> = Layer.effect(
  SigningSecret,
  Effect.flatMap(AppConfig, (config) =>
    Option.match(config.signingSecret, {
      onSome: Effect.succeed,
      onNone: () => loadOrCreateSecret(config.dataDir)
    }))
)
