/**
 * `npm run bench:reminders`: 10,000 appointment reminders due at the same moment.
 *
 * 1. Starts one API-only instance (`JOBS_ENABLED=false`) as `npm start` runs it, on a fresh
 *    database: it migrates and seeds nothing else. Then one worker instance (round 1) and two
 *    worker instances (round 2), each with the local outbox layers (telephony JSONL, mail .eml
 *    files, push JSONL) under their own DATA_DIR, default JOBS_CONCURRENCY unless --concurrency.
 * 2. Each round writes N reminders (a third each SMS, email, push) and their `reminders.send` jobs
 *    in one transaction, all with `send_at` = run_at = T (a few seconds ahead), then waits until every
 *    reminder is `sent`. Reported: time from T (or the commit, if later) to the last `sent_at`, reminders/s, and duplicates:
 *    outbox entries (SMS lines + .eml files + push lines, over every instance) minus reminders, and
 *    push reminder ids seen twice (the push outbox line carries the reminder id).
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_rem_<random>` database, dropped at the end), else
 * an embedded PostgreSQL in a temp dir. Flags: --reminders (10000), --concurrency (the default, 4),
 * --limit-seconds (60: the target; the run fails above it).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { freePort } from "../src/Layers/FreePort.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const { values: flags } = parseArgs({
  options: {
    reminders: { type: "string", default: "10000" },
    concurrency: { type: "string" },
    "limit-seconds": { type: "string", default: "60" }
  }
})
const reminderCount = Number(flags.reminders)
const limitSeconds = Number(flags["limit-seconds"])

const children = new Set<ChildProcess>()
process.on("exit", () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Instance {
  readonly process: ChildProcess
  readonly dataDir: string
}

const startInstance = async (databaseUrl: string, dataDir: string, jobs: boolean): Promise<Instance> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: {
      ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", DATA_DIR: dataDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: "", JOBS_ENABLED: String(jobs), JOBS_POLL_INTERVAL_MS: "1000",
      ...(flags.concurrency === undefined ? {} : { JOBS_CONCURRENCY: flags.concurrency }),
      TWILIO_ACCOUNT_SID: "", SMTP_URL: "", FCM_SERVICE_ACCOUNT_FILE: ""
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  children.add(child)
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error("app did not start")
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break
    } catch { /* not yet */ }
    await sleep(200)
  }
  return { process: child, dataDir }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
const cpuSeconds = async (pid: number | undefined) => {
  try {
    const fields = (await fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

const stopInstance = async (instance: Instance) => {
  if (instance.process.exitCode !== null) return
  const exited = new Promise((resolve) => instance.process.once("exit", resolve))
  instance.process.kill("SIGTERM")
  await exited
}

const linesOf = async (file: string) => {
  try {
    return (await fs.readFile(file, "utf8")).split("\n").filter((line) => line !== "")
  } catch {
    return []
  }
}
const filesIn = async (dir: string) => {
  try {
    return (await fs.readdir(dir)).length
  } catch {
    return 0
  }
}

/** Everything the instances' outboxes hold: SMS lines, .eml files, push reminder ids. */
const outboxes = async (instances: ReadonlyArray<Instance>) => {
  let sms = 0
  let mail = 0
  const pushIds: Array<string> = []
  for (const { dataDir } of instances) {
    sms += (await linesOf(path.join(dataDir, "outbox", "telephony.jsonl"))).length
    mail += await filesIn(path.join(dataDir, "outbox", "mail"))
    for (const line of await linesOf(path.join(dataDir, "outbox", "push.jsonl"))) {
      pushIds.push((JSON.parse(line) as { data: { appointment_reminder_id: string } }).data.appointment_reminder_id)
    }
  }
  return { sms, mail, pushIds }
}

const main = async () => {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-rem-"))
  let serverUrl = process.env.DATABASE_URL
  let stopEmbedded: (() => Promise<void>) | undefined
  if (!serverUrl) {
    const server = await startEmbeddedPostgres({ dataDir: path.join(tmp, "pg"), persistent: false })
    serverUrl = server.url
    stopEmbedded = server.stop
  }
  const database = `cc_bench_rem_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  const databaseUrl = url.toString()
  const db = new pg.Client({ connectionString: databaseUrl })
  const instances: Array<Instance> = []
  let failed = false
  try {
    // The API-only instance migrates the database; it runs no jobs.
    instances.push(await startInstance(databaseUrl, path.join(tmp, "api"), false))
    await db.connect()

    // One provider, one patient with a phone, an email and a parent account with a push device, and
    // one appointment far ahead: reminders differ only by id and channel.
    const { rows: [providerUser] } = await db.query<{ id: number }>(`INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed)
      VALUES ('provider@bench.test', 'x', 'Avery', 'Quinn', 'provider', 'active', true) RETURNING id`)
    const { rows: [provider] } = await db.query<{ id: number }>(`INSERT INTO providers (user_id, roles) VALUES ($1, '{provider}') RETURNING id`, [providerUser!.id])
    const { rows: [parent] } = await db.query<{ id: number }>(`INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed)
      VALUES ('parent@bench.test', 'x', 'Pat', 'Parent', 'parent', 'active', true) RETURNING id`)
    await db.query(`INSERT INTO user_devices (user_id, token, platform) VALUES ($1, 'bench-device-token-0001', 'android')`, [parent!.id])
    const { rows: [patient] } = await db.query<{ id: number }>(`INSERT INTO patients (first_name, last_name, user_id, phone, email, language)
      VALUES ('Robin', 'Vale', $1, '+14155550123', 'robin@bench.test', 'es') RETURNING id`, [parent!.id])
    const { rows: [appointment] } = await db.query<{ id: number }>(`INSERT INTO appointments (patient_id, provider_id, scheduled_at, duration_minutes)
      VALUES ($1, $2, now() + interval '30 days', 50) RETURNING id`, [patient!.id, provider!.id])

    const round = async (label: string, workers: number) => {
      const roundIndex = instances.length
      const started: Array<Instance> = []
      for (let w = 0; w < workers; w++) started.push(await startInstance(databaseUrl, path.join(tmp, `round${roundIndex}-worker${w}`), true))
      instances.push(...started)
      // All due at the same moment T, a few seconds ahead: written (rows and jobs) in one transaction.
      const cpuBefore = await Promise.all(started.map((i) => cpuSeconds(i.process.pid)))
      const { rows: [due] } = await db.query<{ at: Date }>(`SELECT now() + interval '4 seconds' AS at`)
      const seeding = performance.now()
      await db.query("BEGIN")
      const { rows: ids } = await db.query<{ id: number }>(`INSERT INTO appointment_reminders (appointment_id, reminder_type, send_at, lead_seconds, language)
        SELECT $1, (ARRAY['sms', 'email', 'push'])[1 + g % 3], $2, 2592000, 'es' FROM generate_series(1, $3::int) g RETURNING id`,
      [appointment!.id, due!.at, reminderCount])
      await db.query(`SELECT graphile_worker.add_job('reminders.send', json_build_object('reminder_id', r.id),
          run_at => $1::timestamptz, job_key => 'appointment_reminder:' || r.id, max_attempts => 5)
        FROM appointment_reminders r WHERE r.id = ANY($2::int[])`, [due!.at, ids.map((r) => r.id)])
      await db.query("COMMIT")
      // Due from T, or from the commit if writing took longer: the moment every job is visible and due.
      const { rows: [committed] } = await db.query<{ at: Date }>(`SELECT clock_timestamp() AS at`)
      const dueFrom = new Date(Math.max(due!.at.getTime(), committed!.at.getTime()))
      const idList = ids.map((r) => r.id)
      console.log(`${label}: ${reminderCount} reminders and jobs written in ${((performance.now() - seeding) / 1000).toFixed(1)} s, all due from ${dueFrom.toISOString()}`)
      const deadline = Date.now() + (limitSeconds + 120) * 1000
      for (;;) {
        const { rows: [state] } = await db.query<{ pending: number }>(
          `SELECT count(*)::int AS pending FROM appointment_reminders WHERE id = ANY($1::int[]) AND status <> 'sent'`, [idList])
        if (state!.pending === 0) break
        if (Date.now() > deadline) throw new Error(`${label}: ${state!.pending} reminders still not sent`)
        await sleep(250)
      }
      const { rows: [timing] } = await db.query<{ first: Date; last: Date; claimed_twice: number }>(`SELECT min(sent_at) AS first, max(sent_at) AS last,
          count(*) FILTER (WHERE attempts > 1)::int AS claimed_twice FROM appointment_reminders WHERE id = ANY($1::int[])`, [idList])
      const seconds = (timing!.last.getTime() - dueFrom.getTime()) / 1000
      const cpuAfter = await Promise.all(started.map((i) => cpuSeconds(i.process.pid)))
      const cpu = cpuAfter.reduce((sum, after, i) => sum + after - cpuBefore[i]!, 0)
      console.log(`${label}: worker CPU ${cpu.toFixed(1)} s in all, ${((cpu * 1000) / reminderCount).toFixed(2)} ms a reminder ` +
        `(so ${(reminderCount / cpu).toFixed(0)} reminders per CPU-second of the worker process; PostgreSQL's CPU not included)`)
      const seen = await outboxes(instances)
      const pushUnique = new Set(seen.pushIds)
      const entries = seen.sms + seen.mail + seen.pushIds.length
      const expected = reminderCount * (roundIndex === 1 ? 1 : 2)
      console.log(`${label}: all ${reminderCount} sent ${seconds.toFixed(1)} s after they fell due ` +
        `(the first ${((timing!.first.getTime() - dueFrom.getTime()) / 1000).toFixed(1)} s after; load average ${os.loadavg()[0]!.toFixed(1)}), ${(reminderCount / seconds).toFixed(0)} reminders/s; ` +
        `outbox entries ${entries} for ${expected} reminders sent so far (sms ${seen.sms}, mail ${seen.mail}, push ${seen.pushIds.length}); ` +
        `duplicates: ${entries - expected} sends, ${seen.pushIds.length - pushUnique.size} push ids twice; claims taken twice ${timing!.claimed_twice}`)
      if (seconds > limitSeconds || entries !== expected || pushUnique.size !== seen.pushIds.length) failed = true
      for (const instance of started) await stopInstance(instance)
    }

    await round("1 instance", 1)
    await round("2 instances", 2)
  } finally {
    for (const instance of instances) await stopInstance(instance)
    await db.end().catch(() => {})
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
    await admin.end()
    await stopEmbedded?.()
    await fs.rm(tmp, { recursive: true, force: true })
  }
  if (failed) {
    console.log(`FAILED: over ${limitSeconds} s or duplicates`)
    process.exit(1)
  }
}

await main()
