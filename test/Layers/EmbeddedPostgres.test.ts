/**
 * The embedded PostgreSQL leaves the process's exit code alone: the test command without
 * DATABASE_URL runs on it, and its package's exit hooks once turned a failed run (exitCode 1, loop
 * drained) into exit 0. A server still running at exit is stopped all the same.
 */
import { expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

/**
 * Runs `body` in a fresh Node process where `server` is a started embedded PostgreSQL, then
 * waits for that server to be gone (it removes postmaster.pid last) before removing its directory.
 */
const runWithServer = async (body: string): Promise<{ code: number | null; stdout: string; stderr: string; serverGone: boolean }> => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cc-api-embedded-"))
  const pidFile = path.join(dir, "pg", "postmaster.pid")
  const script = `
    import { startEmbeddedPostgres } from "./src/Layers/EmbeddedPostgres.ts"
    const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(path.join(dir, "pg"))}, persistent: false })
    console.log("port=" + server.port)
    ${body}
  `
  try {
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      child.once("error", reject)
      child.once("exit", (code) => resolve({ code, stdout, stderr }))
    })
    // The exit hook sent the server its fast-shutdown signal; it finishes within moments.
    let serverGone = !existsSync(pidFile)
    for (let attempt = 0; attempt < 100 && !serverGone; attempt++) {
      await new Promise((r) => setTimeout(r, 100))
      serverGone = !existsSync(pidFile)
    }
    return { ...run, serverGone }
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 })
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

it("a process that stopped its server and set a failing exit code exits with that code", async () => {
  const run = await runWithServer(`await server.stop(); process.exitCode = 3`)
  expect(run.stderr).not.toMatch(/TypeError/)
  expect(run.code).toBe(3)
  expect(run.serverGone).toBe(true)
}, 60_000)

it("a server still running when the process exits is stopped, and the exit code kept", async () => {
  const run = await runWithServer(`process.exitCode = 4; process.exit()`)
  expect(run.code).toBe(4)
  expect(run.serverGone).toBe(true)
  const port = Number(/port=(\d+)/.exec(run.stdout)?.[1])
  expect(port).toBeGreaterThan(0)
  expect(await accepts(port)).toBe(false)
}, 60_000)
