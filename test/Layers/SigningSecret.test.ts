import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { SigningSecret, SigningSecretLive } from "../../src/Layers/SigningSecret.js"
import { tempDir, testConfig } from "./fixtures.js"

const secretValue = (overrides: Parameters<typeof testConfig>[0]) =>
  Effect.map(SigningSecret, Redacted.value).pipe(Effect.provide(SigningSecretLive), Effect.provide(testConfig(overrides)))

describe("SigningSecret", () => {
  it.scoped("generates a secret once under DATA_DIR and reuses it on the next start", () =>
    Effect.gen(function*() {
      const dataDir = path.join(yield* tempDir, "nested", "data")
      const first = yield* secretValue({ dataDir })
      const second = yield* secretValue({ dataDir })
      expect(first).toMatch(/^[0-9a-f]{64}$/)
      expect(second).toBe(first)

      const file = path.join(dataDir, "signing-secret")
      expect(yield* Effect.promise(() => fs.readFile(file, "utf8"))).toBe(first)
      expect((yield* Effect.promise(() => fs.stat(file))).mode & 0o777).toBe(0o600)
      expect(yield* Effect.promise(() => fs.readdir(dataDir))).toEqual(["signing-secret"])
    }))

  it.scoped("agrees on one secret when several builds race on a fresh DATA_DIR", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const secrets = yield* Effect.all(Array.from({ length: 8 }, () => secretValue({ dataDir })), { concurrency: "unbounded" })
      expect(new Set(secrets).size).toBe(1)
    }))

  it.scoped("uses SIGNING_SECRET when set, writing nothing", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const secret = yield* secretValue({ dataDir, signingSecret: Option.some(Redacted.make("from-the-environment")) })
      expect(secret).toBe("from-the-environment")
      expect(yield* Effect.promise(() => fs.readdir(dataDir))).toEqual([])
    }))
})
