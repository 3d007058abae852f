/**
 * What the single-area benches share: `runBench` gives each a scratch directory and a fresh
 * database, starts the app as a child process signed in as its bootstrap admin, and releases all
 * of it at the end; children never outlive the bench; latency percentiles.
 *
 * bench/run.ts and bench/startup.ts keep their own richer machinery (output capture, signal
 * handling, several targets at once). scripts/fuzz.ts takes its scratch database from here too.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { freePort } from "../src/Layers/FreePort.js"

/** The repository root: children run from it. */
export const root = fileURLToPath(new URL("..", import.meta.url))

// ---------------------------------------------------------------------------------------------
// Children

const children = new Set<ChildProcess>()
// Last resort when the bench exits another way (an error, process.exit): no server outlives it.
process.on("exit", () => {
  for (const child of children) if (isRunning(child)) child.kill("SIGKILL")
})

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Kills `child` when the bench exits, if it is still running then. */
export const killOnExit = (child: ChildProcess): ChildProcess => {
  children.add(child)
  return child
}

/** SIGTERM and wait for the exit; nothing if the child is already gone. */
export const stopChild = async (child: ChildProcess): Promise<void> => {
  if (!isRunning(child)) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGTERM")
  await exited
}

/** Polls `url` every 200 ms, for at most a minute, until it answers anything but a server error. */
export const waitUntilAnswering = async (url: string, what: string): Promise<void> => {
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error(`${what} did not start`)
    try {
      const response = await fetch(url)
      await response.arrayBuffer()
      if (response.status < 500) return
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

// ---------------------------------------------------------------------------------------------
// Scratch directory and database

/**
 * A fresh temp directory `cc-bench-<name>-…`, 0755 like an ordinary directory (mkdtemp makes it
 * 0700): under root the embedded server runs as the `postgres` user and must enter it.
 */
export const benchTempDir = async (name: string) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `cc-bench-${name}-`))
  await fs.chmod(dir, 0o755)
  return { dir, remove: () => fs.rm(dir, { recursive: true, force: true }) }
}

export interface BenchDatabase {
  /** Connection URL of the fresh database. */
  readonly url: string
  readonly name: string
  /** Drops the database (unless `keep`) and stops the embedded server if one was started. */
  readonly release: (options?: { readonly keep?: boolean }) => Promise<void>
}

/**
 * A fresh `cc_bench_<name>_<random>` database on DATABASE_URL's server, else on an embedded
 * PostgreSQL whose data lives in `<tmpDir>/pg`.
 */
export const benchDatabase = async (name: string, tmpDir: string): Promise<BenchDatabase> => {
  let serverUrl = process.env.DATABASE_URL
  let stopEmbedded: (() => Promise<void>) | undefined
  if (!serverUrl) {
    const server = await startEmbeddedPostgres({ dataDir: path.join(tmpDir, "pg"), persistent: false })
    serverUrl = server.url
    stopEmbedded = server.stop
  }
  const database = `cc_bench_${name}_${randomBytes(4).toString("hex")}`
  // A connection to the server's default database per statement, none held for the bench: test
  // runs on the same server may terminate connections to it (they clone databases from a template).
  const onServer = async (statement: string) => {
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    try {
      await admin.query(statement)
    } finally {
      await admin.end()
    }
  }
  await onServer(`CREATE DATABASE ${database}`)
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return {
    url: url.toString(),
    name: database,
    release: async (options) => {
      if (!options?.keep) await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await stopEmbedded?.()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The app

/** `tsx`: the app as `npm start` runs it; `production`: `node dist/main.js` as the image runs it. */
export type AppTarget = "tsx" | "production"

export const parseTarget = (value: string | undefined): AppTarget => {
  if (value !== "tsx" && value !== "production") throw new Error(`--target must be tsx or production, got ${value}`)
  return value
}

/**
 * The Dockerfile's runtime environment beyond NODE_ENV: glibc's malloc with two arenas, and blocks
 * of 64 KiB and more (socket reads, file chunks) mapped on their own, so freeing one returns it
 * to the system (README "Production build").
 */
export const imageEnv: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "65536" }

export const describeTarget = (target: AppTarget) =>
  target === "production"
    ? `node dist/main.js (the image's ${Object.entries(imageEnv).map(([name, value]) => `${name}=${value}`).join(" ")})`
    : "npm start (tsx)"

/** The Dockerfile's node flags: none (V8's default young generation, README "Production build"). */
const imageNodeFlags: ReadonlyArray<string> = []

/** The node flags the target runs with: the image's, or those of package.json's start script. */
export const targetNodeFlags = (target: AppTarget): ReadonlyArray<string> => {
  if (target === "production") return imageNodeFlags
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } }
  return pkg.scripts.start.split(/\s+/).filter((word) => word.startsWith("--") && !word.startsWith("--import"))
}

export const benchAdmin = { email: "bench@example.test", password: "bench-password-1" } as const

export interface StartAppOptions {
  readonly databaseUrl: string
  readonly dataDir: string
  readonly target?: AppTarget
  /** Replaces the target's node flags (`targetNodeFlags`). */
  readonly nodeFlags?: ReadonlyArray<string>
  /** Added to (and overriding) the bench environment, e.g. DB_POOL_SIZE. */
  readonly env?: Readonly<Record<string, string>>
  /** The production target runs the existing dist/ (built by an earlier start) instead of building again. */
  readonly skipBuild?: boolean
}

export interface RunningApp {
  readonly child: ChildProcess
  /** `http://127.0.0.1:<port>` */
  readonly base: string
  /** The bootstrap admin's session token and user id. */
  readonly token: string
  readonly adminId: number
  /** SIGTERM and wait; safe to call twice. */
  readonly stop: () => Promise<void>
}

/**
 * Starts the app on a free port (the production target is built first), migrating `databaseUrl`,
 * logs at warn and tracing export off, waits for /health and signs in as the bootstrap admin.
 */
export const startApp = async (options: StartAppOptions): Promise<RunningApp> => {
  const target = options.target ?? "tsx"
  if (target === "production" && options.skipBuild !== true) execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
  // BENCH_APP_NODE_FLAGS adds flags to the app's node only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // (node refuses --cpu-prof in NODE_OPTIONS).
  const extraFlags = process.env.BENCH_APP_NODE_FLAGS?.split(/\s+/).filter((flag) => flag !== "") ?? []
  const nodeFlags = [...(options.nodeFlags ?? targetNodeFlags(target)), ...extraFlags]
  const entry = target === "production" ? ["dist/main.js"] : ["--import", "tsx", "src/main.ts"]
  const port = await freePort()
  const child = killOnExit(spawn(process.execPath, [...nodeFlags, ...entry], {
    cwd: root,
    env: {
      ...process.env,
      ...(target === "production" ? { NODE_ENV: "production", ...imageEnv } : {}),
      DATABASE_URL: options.databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      DATA_DIR: options.dataDir,
      BOOTSTRAP_ADMIN_EMAIL: benchAdmin.email,
      BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      ...options.env
    },
    stdio: ["ignore", "inherit", "inherit"]
  }))
  const stop = () => stopChild(child)
  try {
    const base = `http://127.0.0.1:${port}`
    await waitUntilAnswering(`${base}/health`, "app")
    const signIn = await fetch(`${base}/v1/users/sign_in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: benchAdmin })
    })
    const session = (await signIn.json()) as { token: string; user: { id: number } }
    if (signIn.status !== 200) throw new Error(`bootstrap admin sign-in answered ${signIn.status}: ${JSON.stringify(session)}`)
    return { child, base, token: session.token, adminId: session.user.id, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

// ---------------------------------------------------------------------------------------------
// A bench run

export interface Bench {
  /** Scratch directory, removed at the end. */
  readonly tmpDir: string
  /** The fresh database. */
  readonly databaseUrl: string
  /** `startApp` on this bench's database, DATA_DIR `<tmpDir>/data`; stopped at the end. */
  readonly startApp: (options?: Omit<StartAppOptions, "databaseUrl" | "dataDir">) => Promise<RunningApp>
  /** A client of the fresh database, ended at the end (before the drop, which would end it with an error). */
  readonly connect: () => Promise<pg.Client>
}

/**
 * Runs `body` with a scratch directory and a fresh database (`cc_bench_<name>_…`), then stops the
 * apps it started, ends its clients, drops the database (unless `keepDatabase`: its name is
 * printed) and removes the directory, also when it failed. A failure is printed and exits 1.
 */
export const runBench = (name: string, body: (bench: Bench) => Promise<void>, options: { readonly keepDatabase?: boolean } = {}) => {
  const run = async () => {
    const tmp = await benchTempDir(name)
    const database = await benchDatabase(name, tmp.dir)
    const apps: Array<RunningApp> = []
    const clients: Array<pg.Client> = []
    try {
      await body({
        tmpDir: tmp.dir,
        databaseUrl: database.url,
        startApp: async (appOptions) => {
          const app = await startApp({ ...appOptions, databaseUrl: database.url, dataDir: path.join(tmp.dir, "data") })
          apps.push(app)
          return app
        },
        connect: async () => {
          const client = new pg.Client({ connectionString: database.url })
          clients.push(client)
          await client.connect()
          return client
        }
      })
    } finally {
      for (const app of apps) await app.stop()
      for (const client of clients) await client.end().catch(() => undefined)
      if (options.keepDatabase) console.log(`kept database ${database.name}`)
      await database.release({ keep: options.keepDatabase ?? false })
      await tmp.remove()
    }
  }
  run().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}

// ---------------------------------------------------------------------------------------------
// Latencies

/** The nearest-rank percentile `p` (0–1) of ascending `sorted`. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number => {
  if (sorted.length === 0) throw new Error("percentile of no samples")
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]!
}

export interface LatencySummary {
  readonly count: number
  readonly min: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

/** Count, extremes and percentiles of `samples` (any order; not modified). */
export const latencySummary = (samples: ReadonlyArray<number>): LatencySummary => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    count: sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1]!
  }
}

/** Milliseconds with one decimal: `12.3 ms`. */
export const ms = (n: number) => `${n.toFixed(1)} ms`

/**
 * The machine's floor for a burst target ("N requests at once, p99 ≤ …"): the same burst of the
 * cheapest requests the app answers, `GET /health` (one `SELECT 1`) and an unrouted path (no
 * database), sent by the same client. A target below these figures cannot be met by any endpoint
 * on this machine, whatever it does.
 */
export const burstFloor = async (base: string, concurrency: number, rounds = 5) => {
  const burst = async (path: string) => {
    const times: Array<number> = []
    for (let round = 0; round < rounds + 2; round++) {
      const samples = await Promise.all(Array.from({ length: concurrency }, async () => {
        const started = performance.now()
        const response = await fetch(`${base}${path}`)
        await response.arrayBuffer()
        return performance.now() - started
      }))
      // The first two rounds open the client's connections and warm the server up.
      if (round >= 2) times.push(...samples)
    }
    return latencySummary(times)
  }
  const health = await burst("/health")
  const unrouted = await burst("/no-such-path")
  return `floor (${concurrency} at once, ${rounds} rounds, same client): GET /health p50 ${ms(health.p50)}, p99 ${ms(health.p99)}; unrouted 404 p50 ${ms(unrouted.p50)}, p99 ${ms(unrouted.p99)}`
}
