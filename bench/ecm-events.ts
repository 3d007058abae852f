/**
 * `npm run bench:events`: ECM events of one busy member, and creating activities (issue 11).
 *
 * 1. Starts the app (child process, fresh database, logs at warn) and signs in the bootstrap admin.
 * 2. Seeds one member with 50,000 activities and their events over two years (SQL, set-based: the
 *    bench measures reads, not the seeding), every type, statuses and call durations mixed, and an
 *    engagement history with enrolled spans so the counts join has work to do.
 * 3. Latency, one request at a time after a warm-up (client-side, loopback):
 *    - counts for a one-year range (`/events/counts`), target p99 ≤ 20 ms;
 *    - the list's first page and a deep page (`/events?per_page=25`), target p99 ≤ 20 ms.
 * 4. Throughput with autocannon (--connections, --duration): `POST …/activities` (a task and its
 *    event, audit entry) spread over 200 members, and all on one member (writes to one member's
 *    activities are serialised by its advisory lock); next to the foundation bench's bare server
 *    (bench/bare-server.ts: node:http + pg, `GET /v1/admin/clinic/users/:id` with the same token
 *    check) on the same database and machine.
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_events_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir. Flags: --events (50000), --samples (1000),
 * --connections (50), --duration (10 s), --target (`tsx`, default, or `production`: `node
 * dist/main.js`, built first, with the image's `--max-semi-space-size=32`).
 */
import autocannon, { type Options, type Result } from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
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
    events: { type: "string", default: process.env.BENCH_EVENTS ?? "50000" },
    samples: { type: "string", default: process.env.BENCH_SAMPLES ?? "1000" },
    connections: { type: "string", default: process.env.BENCH_CONNECTIONS ?? "50" },
    duration: { type: "string", default: process.env.BENCH_DURATION ?? "10" },
    target: { type: "string", default: process.env.BENCH_TARGET ?? "tsx" }
  }
})
const events = Number(flags.events)
const samples = Number(flags.samples)
const connections = Number(flags.connections)
const duration = Number(flags.duration)
const target = flags.target
if (target !== "tsx" && target !== "production") throw new Error(`--target must be tsx or production, got ${target}`)

const children = new Set<ChildProcess>()
process.on("exit", () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")))

const waitFor = async (url: string, what: string) => {
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error(`${what} did not start`)
    try {
      const r = await fetch(url)
      if (r.status < 500) return
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200))
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** `samples` requests one at a time after 100 unmeasured ones: p50, p99 and max in ms. */
const latency = async (url: string, token: string) => {
  const once = async () => {
    const started = performance.now()
    const response = await fetch(url, { headers: { "x-user-token": token } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`)
    return performance.now() - started
  }
  for (let i = 0; i < 100; i++) await once()
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) times.push(await once())
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), max: times[times.length - 1]! }
}

const run = (options: Options) =>
  new Promise<Result>((resolve, reject) => autocannon(options, (error, result) => (error ? reject(error) : resolve(result))))

const ms = (n: number) => `${n.toFixed(1)} ms`

const seed = async (client: pg.Client, adminId: number) => {
  await client.query(`INSERT INTO patients (first_name, last_name) SELECT 'Bench', 'Member ' || i FROM generate_series(1, 200) i`)
  const { rows: [busy] } = await client.query<{ id: number }>(`SELECT min(id) AS id FROM patients`)
  // Enrolled for the middle of each year, disenrolled around it.
  await client.query(`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source) VALUES
    ($1, 'new_member', '2025-01-01', 'mif'), ($1, 'enrolled', '2025-03-01', 'user'), ($1, 'disenrolled', '2025-10-01', 'user'),
    ($1, 'enrolled', '2026-02-01', 'user')`, [busy!.id])
  const started = performance.now()
  // One activity per event; types cycle task, sms, call, email, in_person_appointment.
  await client.query(`INSERT INTO ecm_activities (patient_id, activity_type, status, message, body, occurred_at, duration,
      performed_by_id, assigned_to_id, voice_call_id, text_message_id, booked_at, email_to)
    SELECT $1, (ARRAY['task','sms','call','email','in_person_appointment'])[1 + i % 5],
      (ARRAY['created','complete','complete','cancelled'])[1 + (i / 5) % 4],
      'Bench task ' || i, 'Bench body ' || i,
      timestamptz '2025-01-01' + (i * (730.0 / $2)) * interval '1 day',
      CASE WHEN i % 5 IN (2, 4) THEN (i / 7) % 40 ELSE NULL END,
      $3, $3, CASE WHEN i % 5 = 2 THEN i END, CASE WHEN i % 5 = 1 THEN i END,
      CASE WHEN i % 5 = 4 THEN timestamptz '2025-01-01' + (i * (730.0 / $2)) * interval '1 day' END,
      CASE WHEN i % 5 = 3 THEN 'member@example.test' END
    FROM generate_series(0, $2 - 1) i`, [busy!.id, events, adminId])
  // The events as the EventGenerator writes them (src/Domain/Ecm/Activity.ts eventOf).
  await client.query(`INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, subject, body, duration)
    SELECT patient_id, id, CASE activity_type WHEN 'in_person_appointment' THEN 'appointment' ELSE activity_type END,
      CASE WHEN status <> 'created' THEN status WHEN activity_type IN ('task', 'in_person_appointment') THEN 'scheduled' ELSE 'attempted' END,
      occurred_at, subject, coalesce(body, CASE WHEN activity_type = 'task' THEN message END),
      CASE WHEN activity_type IN ('call', 'in_person_appointment') THEN duration END
    FROM ecm_activities WHERE patient_id = $1`, [busy!.id])
  await client.query(`VACUUM ANALYZE`) // as autovacuum would: index-only scans need the visibility map
  console.log(`seeded ${events} activities and events for one member in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return busy!.id
}

const main = async () => {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-events-"))
  let serverUrl = process.env.DATABASE_URL
  let stopEmbedded: (() => Promise<void>) | undefined
  if (!serverUrl) {
    const server = await startEmbeddedPostgres({ dataDir: path.join(tmp, "pg"), persistent: false })
    serverUrl = server.url
    stopEmbedded = server.stop
  }
  const database = `cc_bench_events_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  const stop = async (child: ChildProcess | undefined) => {
    if (!child || child.exitCode !== null) return
    const exited = new Promise((r) => child.once("exit", r))
    child.kill("SIGTERM")
    await exited
  }
  let app: ChildProcess | undefined
  let bare: ChildProcess | undefined
  try {
    const port = await freePort()
    if (target === "production") execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" })
    const entry = target === "production" ? ["--max-semi-space-size=32", "dist/main.js"] : ["--import", "tsx", "src/main.ts"]
    console.log(`app: ${target === "production" ? "node dist/main.js (--max-semi-space-size=32)" : "npm start (tsx)"}`)
    app = spawn(process.execPath, entry, {
      cwd: root,
      env: {
        ...process.env, ...(target === "production" ? { NODE_ENV: "production" } : {}), DATABASE_URL: url.toString(), PORT: String(port),
        HOST: "127.0.0.1", LOG_LEVEL: "warn", DATA_DIR: path.join(tmp, "data"), BOOTSTRAP_ADMIN_EMAIL: "bench@example.test",
        BOOTSTRAP_ADMIN_PASSWORD: "bench-password-1", OTEL_EXPORTER_OTLP_ENDPOINT: ""
      },
      stdio: ["ignore", "inherit", "inherit"]
    })
    children.add(app)
    const base = `http://127.0.0.1:${port}`
    await waitFor(`${base}/health`, "app")
    const signIn = await fetch(`${base}/v1/users/sign_in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: { email: "bench@example.test", password: "bench-password-1" } })
    })
    const { token, user } = (await signIn.json()) as { token: string; user: { id: number } }

    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    const busy = await seed(client, user.id)
    const { rows: patients } = await client.query<{ id: number }>(`SELECT id FROM patients ORDER BY id`)
    await client.end()

    const counts = await latency(`${base}/v1/clinic/ecm/patients/${busy}/events/counts?start_date=2025-06-01&end_date=2026-05-31`, token)
    const firstPage = await latency(`${base}/v1/clinic/ecm/patients/${busy}/events?per_page=25`, token)
    const deepPage = await latency(`${base}/v1/clinic/ecm/patients/${busy}/events?per_page=25&page=1000`, token)
    const typedPage = await latency(`${base}/v1/clinic/ecm/patients/${busy}/events?per_page=25&event_type=call&start_date=2025-06-01&end_date=2026-05-31`, token)
    const verdict = (p99: number) => (p99 <= 20 ? "met" : "MISSED")
    console.log(`counts, one-year range (${samples} requests): p50 ${ms(counts.p50)}, p99 ${ms(counts.p99)}, max ${ms(counts.max)} (target p99 ≤ 20 ms: ${verdict(counts.p99)})`)
    console.log(`list, first page: p50 ${ms(firstPage.p50)}, p99 ${ms(firstPage.p99)}, max ${ms(firstPage.max)} (target p99 ≤ 20 ms: ${verdict(firstPage.p99)})`)
    console.log(`list, page 1000: p50 ${ms(deepPage.p50)}, p99 ${ms(deepPage.p99)}, max ${ms(deepPage.max)}`)
    console.log(`list, calls in a year: p50 ${ms(typedPage.p50)}, p99 ${ms(typedPage.p99)}, max ${ms(typedPage.max)}`)

    const body = JSON.stringify({ activity: { activity_type: "task", message: "Bench task", assigned_to_id: user.id } })
    const headers = { "content-type": "application/json", "x-user-token": token }
    let next = 0
    const spread = await run({
      url: base, connections, duration,
      requests: [{
        method: "POST", headers, body,
        setupRequest: (request) => ({ ...request, path: `/v1/clinic/ecm/patients/${patients[next++ % patients.length]!.id}/activities` })
      }]
    })
    const single = await run({ url: base, connections, duration, requests: [{ method: "POST", headers, body, path: `/v1/clinic/ecm/patients/${busy}/activities` }] })
    await stop(app)
    app = undefined

    const barePort = await freePort()
    bare = spawn(process.execPath, ["--import", "tsx", "bench/bare-server.ts"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(barePort), HOST: "127.0.0.1" },
      stdio: ["ignore", "ignore", "inherit"]
    })
    children.add(bare)
    const bareBase = `http://127.0.0.1:${barePort}`
    await waitFor(`${bareBase}/v1/admin/clinic/users/${user.id}`, "bare server")
    const baseline = await run({ url: bareBase, connections, duration, headers: { "x-user-token": token }, requests: [{ path: `/v1/admin/clinic/users/${user.id}` }] })

    const line = (name: string, r: Result) =>
      `${name}: ${r.requests.average.toFixed(0)} req/s, latency p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms, ` +
      `statuses ${JSON.stringify(Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])))}, ${r.errors} errors`
    console.log(`throughput, ${connections} connections × ${duration} s:`)
    console.log(`  ${line("create activity + event, 200 members", spread)}`)
    console.log(`  ${line("create activity + event, one member", single)}`)
    console.log(`  ${line("bare server GET user (foundation baseline)", baseline)}`)
    console.log(`  create / bare = ${(spread.requests.average / baseline.requests.average).toFixed(2)} (200 members), ` +
      `${(single.requests.average / baseline.requests.average).toFixed(2)} (one member)`)
  } finally {
    await stop(app)
    await stop(bare)
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
    await stopEmbedded?.()
    await fs.rm(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
