/**
 * Session and single-use tokens: 32 random bytes, stored only as their SHA-256. `hashToken` is also
 * the one way to key other secrets and identifiers by SHA-256 (confirmation codes, sign-in throttles).
 */
import { createHash, randomBytes } from "node:crypto"

export const newToken = (): string => randomBytes(32).toString("base64url")

export const hashToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()
