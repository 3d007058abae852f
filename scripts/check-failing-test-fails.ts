/**
 * CI guard: a failing test must make the test command exit non-zero, with DATABASE_URL and with
 * the embedded PostgreSQL the tests start without it (whose exit hooks once turned a failed run
 * into exit 0). Plants one failing test in a scratch copy of the repository and runs only that
 * file on both paths. With no DATABASE_URL given, the DATABASE_URL path gets an embedded server
 * started here. Usage: `tsx scripts/check-failing-test-fails.ts` from the repository root.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, copyFileSync, symlinkSync, existsSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { stripVTControlCharacters } from "node:util"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"

const root = process.cwd()
const plantedFile = "test/PlantedFailure.test.ts"

/** The tracked files as they are in the working tree, plus the installed node_modules. */
const scratchCopy = (): string => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "cc-api-planted-"))
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean)
  for (const file of tracked) {
    if (!existsSync(path.join(root, file))) continue // deleted in the working tree
    mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true })
    copyFileSync(path.join(root, file), path.join(scratch, file))
  }
  symlinkSync(path.join(root, "node_modules"), path.join(scratch, "node_modules"))
  writeFileSync(
    path.join(scratch, plantedFile),
    `import { expect, it } from "vitest"\n\nit("fails on purpose", () => {\n  expect(1).toBe(2)\n})\n`
  )
  return scratch
}

/** Runs the planted file; the run must exit non-zero and report that very test as failed. */
const expectFailedRun = (scratch: string, label: string, databaseUrl: string | undefined): boolean => {
  const env = { ...process.env }
  delete env["DATABASE_URL"]
  if (databaseUrl) env["DATABASE_URL"] = databaseUrl
  const started = Date.now()
  const run = spawnSync("npx", ["vitest", "run", plantedFile], { cwd: scratch, env, encoding: "utf8" })
  // CI=true makes vitest colour its output even into a pipe: read the text without the colour codes.
  const output = stripVTControlCharacters(`${run.stdout}${run.stderr}`)
  const reportedFailure = /Tests\s+1 failed/.test(output)
  const seconds = Math.round((Date.now() - started) / 1000)
  if (run.status !== 0 && run.status !== null && reportedFailure) {
    console.log(`ok: a failing test exits ${run.status} ${label} (${seconds} s)`)
    return true
  }
  console.error(`FAIL: a failing test ${label} gave exit status ${run.status}${reportedFailure ? "" : " without reporting the failed test"}`)
  console.error(output)
  return false
}

const main = async () => {
  const scratch = scratchCopy()
  let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined
  try {
    const embeddedPath = expectFailedRun(scratch, "without DATABASE_URL (embedded PostgreSQL)", undefined)
    let databaseUrl = process.env["DATABASE_URL"]
    if (!databaseUrl) {
      server = await startEmbeddedPostgres({ dataDir: path.join(scratch, ".pg"), persistent: false })
      databaseUrl = server.url
    }
    const urlPath = expectFailedRun(scratch, "with DATABASE_URL", databaseUrl)
    return embeddedPath && urlPath
  } finally {
    await server?.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

// An explicit exit: this check must not depend on the exit-code handling it checks.
process.exit((await main()) ? 0 : 1)
