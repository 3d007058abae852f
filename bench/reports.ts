/**
 * `npm run bench:reports`: the appointments-with-rates report over 1,000,000 appointments in each
 * format.
 *
 * 1. Seeds, set-based (generate_series): 50 providers, 20,000 patients, 1,000,000 appointments over
 *    2025 and early 2026 (60 % completed, 10 % cancelled, 10 % no-show, 20 % scheduled, every type),
 *    and a paid claim for every completed one (600,000).
 * 2. For each format (csv, excel, json, pdf): starts a fresh app (child process, jobs on), asks for the
 *    report of the whole range with rates, polls the status until completed, and reads the file's
 *    size. Time: the job's own (started_at → generated_at) and the request to completion seen by
 *    polling (250 ms steps); memory: the app's peak RSS (VmHWM of /proc, Linux), and its RSS before
 *    the request. Targets: ≤ 15 s for csv and xlsx, RSS ≤ 300 MB.
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_reports_<random>` database, dropped at the end),
 * else an embedded PostgreSQL. Flags: --appointments (1000000), --formats (csv,excel,json,pdf), --target
 * (production: node dist/main.js, built once; tsx), --keep, --seeded URL (measure a database a run kept).
 * Profiling, as for every bench: BENCH_APP_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR" (or "--trace-gc").
 */
import { readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import { stat } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { describeTarget, parseTarget, type RunningApp, runBench, startApp, type StartAppOptions } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    appointments: { type: "string", default: process.env.BENCH_APPOINTMENTS ?? "1000000" },
    formats: { type: "string", default: "csv,excel,json,pdf" },
    // The app as the image runs it (node dist/main.js), or as `npm start` runs it (tsx: ~300 MB idle).
    target: { type: "string", default: "production" },
    keep: { type: "boolean", default: false },
    // A database an earlier run seeded and kept (--keep): measures without seeding again.
    seeded: { type: "string" }
  }
})
const appointments = Number(flags.appointments)
const target = parseTarget(flags.target)
const formats = flags.formats.split(",").map((f) => f.trim()).filter((f) => f.length > 0)
const providers = 50
const patients = 20_000
const range = { start_date: "2025-01-01", end_date: "2026-12-31" }

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`

/** A /proc/<pid>/status field in kB (VmRSS, VmHWM). */
const procKb = (pid: number, field: string) => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? 0 : Number(match[1])
}

/** Seeds a migrated, empty database. */
const seed = async (client: pg.Client) => {
  const started = performance.now()
  const step = (what: string) => console.log(`  seeding: ${what} (${secs(performance.now() - started)})`)
  await client.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed, status)
    SELECT 'provider' || i || '@bench.test', 'x', 'Provider', 'Number ' || i, 'provider', true, 'active' FROM generate_series(1, ${providers}) i`)
  await client.query(`INSERT INTO providers (user_id, roles, department)
    SELECT id, ARRAY['provider'], CASE WHEN id % 2 = 0 THEN 'Outpatient' ELSE 'Family' END FROM users WHERE email LIKE '%@bench.test'`)
  await client.query(`INSERT INTO patients (first_name, last_name, date_of_birth)
    SELECT 'Patient', 'Number ' || i, date '2010-01-01' + (i % 3000) FROM generate_series(1, ${patients}) i`)
  step("providers and patients")
  // Provider k's n-th appointment starts 30 minutes after its (n−1)-th: 25 minutes each, never overlapping.
  await client.query(`INSERT INTO appointments (patient_id, provider_id, scheduled_at, duration_minutes, status, appointment_type)
    SELECT (SELECT min(id) FROM patients) + (n % ${patients}),
      (SELECT min(id) FROM providers) + (n % ${providers}),
      timestamptz '2025-01-01 16:00Z' + make_interval(mins => 30 * (n / ${providers})),
      25,
      (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'cancelled', 'no_show', 'scheduled', 'scheduled'])[n % 10 + 1],
      (ARRAY['therapy', 'consultation', 'follow_up', 'assessment', 'group_therapy', 'medication_review'])[n % 6 + 1]
    FROM generate_series(0, ${appointments - 1}) n`)
  step("appointments")
  const [batch] = (await client.query<{ id: number }>(`INSERT INTO edi_batches (batch_id, interchange_control_number, object_key, claim_count, total_amount)
    VALUES ('EDI000000001', 1, 'edi/bench.x12', 1, 0) RETURNING id`)).rows
  await client.query(`INSERT INTO claims (patient_id, provider_id, appointment_id, cpt_code, diagnosis_codes, service_date, amount, status,
      payment_amount, payment_date, edi_batch_id)
    SELECT a.patient_id, a.provider_id, a.id, '90837', ARRAY['F329'], (a.scheduled_at AT TIME ZONE 'America/Los_Angeles')::date,
      150 + (a.id % 5) * 10, 'paid', 120 + (a.id % 7) * 5, (a.scheduled_at AT TIME ZONE 'America/Los_Angeles')::date, $1
    FROM appointments a WHERE a.status = 'completed'`, [batch!.id])
  step("claims")
  await client.query("ANALYZE")
  step("analyze")
}

interface Apps {
  readonly tmpDir: string
  readonly client: pg.Client
  readonly startApp: (options: Omit<StartAppOptions, "databaseUrl" | "dataDir">) => Promise<RunningApp>
}

/** Each format through a fresh app; prints the figures. */
const measure = async ({ client, startApp, tmpDir }: Apps) => {
  const results: Array<{ format: string; job: number; wall: number; before: number; peak: number; bytes: number; rows: number }> = []
  for (const format of formats) {
    const app = await startApp({ target, skipBuild: builds++ > 0, env: { JOBS_ENABLED: "true", JOBS_POLL_INTERVAL_MS: "200" } })
    const pid = app.child.pid!
    const headers = { "content-type": "application/json", "x-user-token": app.token }
    const before = procKb(pid, "VmRSS")
    const requested = performance.now()
    const created = await fetch(`${app.base}/v1/admin/clinic/reports/providers/appointments_with_rates`, {
      method: "POST", headers, body: JSON.stringify({ report_params: { ...range, format, include_rates: true } })
    })
    const queued = (await created.json()) as { report_id: string; summary: { total_appointments: number } }
    if (created.status !== 202) throw new Error(`request answered ${created.status}: ${JSON.stringify(queued)}`)
    let state: { status: string; progress_percentage: number } = { status: "queued", progress_percentage: 0 }
    let lastPrinted = -1
    while (state.status === "queued" || state.status === "generating") {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const response = await fetch(`${app.base}/v1/admin/clinic/reports/${queued.report_id}/status`, { headers })
      state = (await response.json()) as typeof state
      if (state.progress_percentage >= lastPrinted + 25) {
        lastPrinted = state.progress_percentage
        console.log(`  ${format}: ${state.status} ${state.progress_percentage} % (${secs(performance.now() - requested)})`)
      }
    }
    const wall = performance.now() - requested
    if (state.status !== "completed") throw new Error(`${format}: ${JSON.stringify(state)}`)
    const peak = procKb(pid, "VmHWM")
    const { rows: [row] } = await client.query<{ ms: number; key: string; bytes: string; rows: number }>(`SELECT
        extract(epoch FROM generated_at - started_at) * 1000 AS ms, object_key AS key, byte_size::text AS bytes, rows_written AS rows
      FROM reports WHERE report_id = $1`, [queued.report_id])
    // The disk store keeps the file under DATA_DIR: its size there confirms the upload.
    const stored = await stat(path.join(tmpDir, "data", "objects", row!.key)).then((s) => s.size).catch(() => Number(row!.bytes))
    results.push({ format, job: Number(row!.ms), wall, before, peak, bytes: stored, rows: row!.rows })
    console.log(`  ${format}: job ${secs(Number(row!.ms))}, request→completed ${secs(wall)}, RSS before ${mb(before)}, peak ${mb(peak)}`)
    await app.stop()
  }
  console.log("")
  // The rows written (a --seeded database may hold another number than --appointments).
  const rows = results[0]?.rows ?? appointments
  console.log(`appointments with rates, ${rows.toLocaleString("en-US")} rows (shared, loaded machine: figures are upper bounds)`)
  console.log("format   job time   request→completed   RSS before   peak RSS   file")
  for (const r of results) {
    console.log(`${r.format.padEnd(8)} ${secs(r.job).padStart(8)}   ${secs(r.wall).padStart(17)}   ${mb(r.before).padStart(10)}   ${mb(r.peak).padStart(8)}   ` +
      `${(r.bytes / 1024 / 1024).toFixed(1)} MB, ${r.rows.toLocaleString("en-US")} rows`)
  }
  for (const r of results.filter((x) => x.format === "csv" || x.format === "excel")) {
    console.log(`target ${r.format}: ≤ 15 s → ${r.job <= 15_000 ? "met" : "missed"}`)
  }
  console.log(`target RSS ≤ 300 MB → ${results.every((r) => r.peak <= 300 * 1024) ? "met" : "missed"}`)
}

let builds = 0

if (flags.seeded === undefined) {
  runBench("reports", async (bench) => {
    console.log(`bench:reports — ${appointments.toLocaleString("en-US")} appointments; formats ${formats.join(", ")}; app: ${describeTarget(target)}`)
    // The first app migrates the fresh database (and builds dist/ for the production target).
    const migrating = await bench.startApp({ target, env: { JOBS_ENABLED: "false" } })
    builds++
    await migrating.stop()
    const client = await bench.connect()
    await seed(client)
    await measure({ client, tmpDir: bench.tmpDir, startApp: bench.startApp })
  }, { keepDatabase: flags.keep })
} else {
  const seededUrl = flags.seeded
  // The first app builds dist/ from the current sources, as in a seeding run: a dist/ left by an
  // earlier build would measure older code.
  const run = async () => {
    console.log(`bench:reports — the seeded database ${new URL(seededUrl).pathname.slice(1)}; formats ${formats.join(", ")}; app: ${describeTarget(target)}`)
    const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-reports-"))
    const client = new pg.Client({ connectionString: seededUrl })
    await client.connect()
    const started: Array<RunningApp> = []
    try {
      await measure({
        client, tmpDir,
        startApp: async (options) => {
          const app = await startApp({ ...options, databaseUrl: seededUrl, dataDir: path.join(tmpDir, "data") })
          started.push(app)
          return app
        }
      })
    } finally {
      for (const app of started) await app.stop()
      await client.end()
      await fs.rm(tmpDir, { recursive: true, force: true })
    }
  }
  run().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
