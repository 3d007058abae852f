/**
 * `npm start` as an admin runs it: the real entry point, embedded PostgreSQL under DATA_DIR,
 * a request during start-up is refused rather than left hanging, data survives a restart and
 * SIGTERM stops PostgreSQL cleanly.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../src/Layers/FreePort.js"

const root = fileURLToPath(new URL("../", import.meta.url))

const start = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: "", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  return { child, output: () => output }
}

/** Polls /health; every attempt must be refused or answered, never left hanging. */
const waitHealthy = async (port: number, deadlineMs: number) => {
  const outcomes = new Set<string>()
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) })
      outcomes.add(String(response.status))
      if (response.status === 200) return outcomes
    } catch (error) {
      const cause = (error as { cause?: { code?: string }; name?: string })
      outcomes.add(cause.cause?.code ?? cause.name ?? "error")
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`not healthy in time: ${[...outcomes].join(",")}`)
}

const stop = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })

const signIn = (port: number, email: string, password: string) =>
  fetch(`http://127.0.0.1:${port}/v1/users/sign_in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: { email, password } })
  })

describe("npm start", () => {
  it("serves /health with embedded PostgreSQL, keeps data across restarts and stops cleanly", { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "cc-api-start-"))
    await chmod(dataDir, 0o755)
    const env = {
      DATA_DIR: dataDir,
      BOOTSTRAP_ADMIN_EMAIL: "boot@example.test",
      BOOTSTRAP_ADMIN_PASSWORD: "boot-password-1"
    }
    try {
      const port = await freePort()
      const first = start({ ...env, PORT: String(port) })
      // A fresh machine: embedded PostgreSQL is initialised on the way, and /health must still answer within 30 s.
      const outcomes = await waitHealthy(port, 30_000)
      for (const outcome of outcomes) expect(["ECONNREFUSED", "200"], first.output()).toContain(outcome)
      expect((await signIn(port, env.BOOTSTRAP_ADMIN_EMAIL, env.BOOTSTRAP_ADMIN_PASSWORD)).status).toBe(200)
      expect(existsSync(path.join(dataDir, "pg", "postmaster.pid"))).toBe(true)
      expect(await stop(first.child)).toBe(0)
      expect(existsSync(path.join(dataDir, "pg", "postmaster.pid")), "PostgreSQL still running").toBe(false)

      const secondPort = await freePort()
      const second = start({ ...env, PORT: String(secondPort), BOOTSTRAP_ADMIN_PASSWORD: "a-different-password" })
      await waitHealthy(secondPort, 60_000)
      // The admin from the first start is kept, not re-created with the new password.
      expect((await signIn(secondPort, env.BOOTSTRAP_ADMIN_EMAIL, env.BOOTSTRAP_ADMIN_PASSWORD)).status).toBe(200)
      expect((await signIn(secondPort, env.BOOTSTRAP_ADMIN_EMAIL, "a-different-password")).status).toBe(401)
      expect(await stop(second.child)).toBe(0)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it("stops at once, before PostgreSQL, when BOOTSTRAP_ADMIN_PASSWORD could never sign in", { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "cc-api-start-"))
    const password = "z".repeat(129)
    try {
      const started = start({
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        BOOTSTRAP_ADMIN_EMAIL: "boot@example.test",
        BOOTSTRAP_ADMIN_PASSWORD: password
      })
      const code = await new Promise<number | null>((resolve) => started.child.once("exit", resolve))
      expect(code, started.output()).toBe(1)
      expect(started.output()).toMatch(/BOOTSTRAP_ADMIN_PASSWORD.*is too long \(maximum is 128 characters\)/)
      expect(started.output()).not.toContain(password)
      expect(existsSync(path.join(dataDir, "pg")), "embedded PostgreSQL was initialised").toBe(false)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it("stops at once, before PostgreSQL, when Twilio is set without a sender number, naming it", { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "cc-api-start-"))
    const token = "twilio-token-secret"
    try {
      const started = start({
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        TWILIO_ACCOUNT_SID: "AC00000000000000000000000000000000",
        TWILIO_AUTH_TOKEN: token,
        TWILIO_FROM_NUMBER: "",
        TWILIO_MESSAGING_SERVICE_SID: "",
        TWILIO_API_KEY_SID: "",
        TWILIO_API_KEY_SECRET: ""
      })
      const code = await new Promise<number | null>((resolve) => started.child.once("exit", resolve))
      expect(code, started.output()).toBe(1)
      expect(started.output()).toContain("missing: TWILIO_FROM_NUMBER")
      expect(started.output()).not.toContain(token)
      expect(existsSync(path.join(dataDir, "pg")), "embedded PostgreSQL was initialised").toBe(false)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
