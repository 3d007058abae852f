/**
 * The raw token of an assessment link is stored nowhere (only its SHA-256), yet the mail job that
 * sends the link runs later, maybe on another instance. So its payload carries the token sealed:
 * AES-256-GCM under a key derived from the signing secret (SIGNING_SECRET, or the generated one
 * every instance shares through DATA_DIR). The queue row never holds a usable link.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"

export class LinkSealKey extends Context.Tag("app/LinkSealKey")<LinkSealKey, Redacted.Redacted<Buffer>>() {
  /** The key from the service's signing secret. */
  static readonly fromSecret = <E, R>(secret: Effect.Effect<Redacted.Redacted<string>, E, R>) =>
    Layer.effect(
      LinkSealKey,
      Effect.map(secret, (s) => Redacted.make(createHash("sha256").update("collaborator-assessment-link\u0000").update(Redacted.value(s)).digest()))
    )
}

export const seal = (key: Redacted.Redacted<Buffer>, token: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", Redacted.value(key), iv)
  const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")
}

/** The token, or undefined for a payload sealed under another key or altered. */
export const unseal = (key: Redacted.Redacted<Buffer>, sealed: string): string | undefined => {
  try {
    const bytes = Buffer.from(sealed, "base64url")
    const decipher = createDecipheriv("aes-256-gcm", Redacted.value(key), bytes.subarray(0, 12))
    decipher.setAuthTag(bytes.subarray(12, 28))
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}
