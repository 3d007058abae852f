/**
 * `npm run bench:events`: ECM events of one busy member, and creating activities.
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
import { spawn } from "node:child_process"
import { parseArgs } from "node:util"
import pg from "pg"
import { freePort } from "../src/Layers/FreePort.js"
import { describeTarget, killOnExit, latencySummary, ms, parseTarget, root, runBench, stopChild, waitUntilAnswering } from "./support.js"

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
const target = parseTarget(flags.target)

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
  return latencySummary(times)
}

const run = (options: Options) =>
  new Promise<Result>((resolve, reject) => autocannon(options, (error, result) => (error ? reject(error) : resolve(result))))

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

/** The foundation bench's bare server (node:http + pg) on the same database: `GET` a user, same token check. */
const bareServerBaseline = async (databaseUrl: string, token: string, userId: number) => {
  const port = await freePort()
  const bare = killOnExit(spawn(process.execPath, ["--import", "tsx", "bench/bare-server.ts"], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "inherit"]
  }))
  try {
    const base = `http://127.0.0.1:${port}`
    await waitUntilAnswering(`${base}/v1/admin/clinic/users/${userId}`, "bare server")
    return await run({ url: base, connections, duration, headers: { "x-user-token": token }, requests: [{ path: `/v1/admin/clinic/users/${userId}` }] })
  } finally {
    await stopChild(bare)
  }
}

runBench("events", async (bench) => {
  console.log(`app: ${describeTarget(target)}`)
  const app = await bench.startApp({ target })
  const { base, token, adminId } = app

  const client = await bench.connect()
  const busy = await seed(client, adminId)
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

  const body = JSON.stringify({ activity: { activity_type: "task", message: "Bench task", assigned_to_id: adminId } })
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
  await app.stop()

  const baseline = await bareServerBaseline(bench.databaseUrl, token, adminId)

  const line = (name: string, r: Result) =>
    `${name}: ${r.requests.average.toFixed(0)} req/s, latency p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms, ` +
    `statuses ${JSON.stringify(Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])))}, ${r.errors} errors`
  console.log(`throughput, ${connections} connections × ${duration} s:`)
  console.log(`  ${line("create activity + event, 200 members", spread)}`)
  console.log(`  ${line("create activity + event, one member", single)}`)
  console.log(`  ${line("bare server GET user (foundation baseline)", baseline)}`)
  console.log(`  create / bare = ${(spread.requests.average / baseline.requests.average).toFixed(2)} (200 members), ` +
    `${(single.requests.average / baseline.requests.average).toFixed(2)} (one member)`)
})
