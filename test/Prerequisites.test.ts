/**
 * The test command on a machine without the tools the tests need (ffmpeg, Chromium) stops within
 * seconds with one message saying what to install, never after timeouts: `npm test` (its pretest)
 * and a direct `npx vitest run` (the global setup) alike. A path set in the environment that does
 * not exist stands for a missing tool: the check reports it instead of installing elsewhere.
 */
import { expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))

/** Kills the command (and what it started) if it runs longer than `limitMs`: that is the failure. */
const runBounded = (command: string, args: ReadonlyArray<string>, env: Record<string, string>, limitMs: number) =>
  new Promise<{ code: number | null; output: string; ms: number }>((resolve, reject) => {
    const started = Date.now()
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, detached: true })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), limitMs)
    child.once("error", reject)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output, ms: Date.now() - started })
    })
  })

const missingFfmpeg = { FFMPEG_PATH: "/nonexistent/ffmpeg", FFPROBE_PATH: "/nonexistent/ffprobe" }

const expectOneInstallMessage = (output: string) => {
  expect(output).toContain("not found: FFMPEG_PATH=/nonexistent/ffmpeg FFPROBE_PATH=/nonexistent/ffprobe")
  expect(output).toContain("apt-get install -y --no-install-recommends ffmpeg chromium")
  expect(output.match(/The tests need ffmpeg/g)).toHaveLength(1)
}

it("npm test without ffmpeg stops within seconds, saying what to install", async () => {
  const run = await runBounded("npm", ["test"], missingFfmpeg, 60_000)
  expect(run.code).not.toBe(0)
  expect(run.code).not.toBeNull()
  expect(run.ms).toBeLessThan(20_000)
  expectOneInstallMessage(run.output)
  // Stopped before the typecheck, the lint and the suite.
  expect(run.output).not.toContain("tsc --noEmit")
}, 90_000)

it("a direct vitest run without Chromium stops in its global setup, saying what to install", async () => {
  const run = await runBounded(
    "npx",
    ["vitest", "run", "test/Domain/Ids.test.ts"],
    { CHROMIUM_PATH: "/nonexistent/chromium" },
    60_000
  )
  expect(run.code).not.toBe(0)
  expect(run.code).not.toBeNull()
  expect(run.ms).toBeLessThan(30_000)
  expect(run.output).toContain("not found: CHROMIUM_PATH=/nonexistent/chromium")
  expect(run.output).toContain("apt-get install -y --no-install-recommends ffmpeg chromium")
  expect(run.output).not.toMatch(/Tests\s+\d+ passed/)
}, 90_000)
