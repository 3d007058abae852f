/**
 * `npm run bench:prtf`: PRTF report generation at scale.
 *
 * 1. Starts the app (child process, fresh database, logs at warn) and signs in the bootstrap admin.
 * 2. Seeds, set-based (generate_series): 20,000 ECM members (eligibility records over 5 providers,
 *    case loads with lead care managers, engagement histories — MIF entry before the quarter,
 *    outreach and enrolment inside it for most, some disenrolled — and a Form C for every third),
 *    and 1,000,000 activities with their events over one year (a quarter of them inside the quarter),
 *    every type, status and call duration mixed.
 * 3. Times, for the quarter 2026-01-01..2026-03-31 (median of --runs after one warm-up):
 *    - the bare aggregate query alone: PrtfRowsRepo's one statement, compiled and run by `pg` in a
 *      transaction with the report's settings (`prtfSettings`), every row fetched (the database's part);
 *    - generation end to end: `POST /v1/admin/clinic/ecm/prtf_reports` over HTTP (the query streamed,
 *      the CSV written, the upload to the ObjectStore — local disk — and the report row).
 *    Targets: generation ≤ 3 s, and ≤ 1.5 × the bare query.
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_prtf_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir. Flags: --members (20000), --events (1000000), --runs (5), --keep
 * (leave the database for EXPLAIN; DATABASE_URL only).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { parseArgs } from "node:util"
import { prtfSettings, prtfStatement } from "../src/Services/Ecm/PrtfRowsRepo.js"
import { seedEcm } from "./ecmSeed.js"
import { runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    members: { type: "string", default: process.env.BENCH_MEMBERS ?? "20000" },
    events: { type: "string", default: process.env.BENCH_EVENTS ?? "1000000" },
    runs: { type: "string", default: process.env.BENCH_RUNS ?? "5" },
    // Keeps the seeded database (DATABASE_URL only) for EXPLAIN; drop it by hand afterwards.
    keep: { type: "boolean", default: false }
  }
})
const members = Number(flags.members)
const events = Number(flags.events)
const runs = Number(flags.runs)
const quarter = { start_date: "2026-01-01", end_date: "2026-03-31" }

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`

const timed = async <A>(f: () => Promise<A>) => {
  const started = performance.now()
  const result = await f()
  return { ms: performance.now() - started, result }
}

runBench("prtf", async (bench) => {
  const { base, token, adminId } = await bench.startApp({ env: { JOBS_ENABLED: "false" } })
  const client = await bench.connect()
  client.on("error", (error) => console.error(`bench connection: ${error.message}`))
  await seedEcm(client, adminId, members, events)

  // The statement exactly as the report runs it, compiled by @effect/sql-pg.
  const [text, params] = await Effect.runPromise(
    prtfStatement({ startDate: quarter.start_date, endDate: quarter.end_date, npi: null, providerName: null, providerPhone: null, producedOn: "2026-04-02" }).pipe(
      Effect.map((statement) => statement.compile()),
      Effect.provide(PgClient.layer({ url: Redacted.make(bench.databaseUrl) }))
    )
  )
  // In a transaction with the settings the report runs it under (PrtfRowsRepo.ts `prtfSettings`).
  const bare = async () => {
    await client.query("BEGIN")
    for (const [name, value] of prtfSettings) await client.query(`SELECT set_config($1, $2, true)`, [name, value])
    const rows = (await client.query({ text, values: params as Array<unknown>, rowMode: "array" })).rowCount ?? 0
    await client.query("COMMIT")
    return rows
  }
  const generate = async () => {
    const response = await fetch(`${base}/v1/admin/clinic/ecm/prtf_reports`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user-token": token },
      body: JSON.stringify(quarter)
    })
    const body = (await response.json()) as { prtf_report: { patient_count: number } }
    if (response.status !== 201) throw new Error(`generate: ${response.status} ${JSON.stringify(body)}`)
    return body.prtf_report.patient_count
  }
  await bare()
  await generate()
  const bareTimes: Array<number> = []
  const generateTimes: Array<number> = []
  let rows = 0
  let included = 0
  for (let i = 0; i < runs; i++) {
    const b = await timed(bare)
    bareTimes.push(b.ms)
    rows = b.result
    const g = await timed(generate)
    generateTimes.push(g.ms)
    included = g.result
  }
  await client.end()
  const bareMs = median(bareTimes)
  const generateMs = median(generateTimes)
  const ratio = generateMs / bareMs
  console.log(`quarter ${quarter.start_date}..${quarter.end_date}: ${included} members in the file (${rows} rows from the bare query)`)
  console.log(`bare aggregate query: median ${secs(bareMs)} (runs: ${bareTimes.map(secs).join(", ")})`)
  console.log(`generation end to end: median ${secs(generateMs)} (runs: ${generateTimes.map(secs).join(", ")}) ` +
    `(target ≤ 3 s: ${generateMs <= 3000 ? "met" : "MISSED"})`)
  console.log(`generation / bare query = ${ratio.toFixed(2)} (target ≤ 1.5: ${ratio <= 1.5 ? "met" : "MISSED"})`)
}, { keepDatabase: flags.keep && process.env.DATABASE_URL !== undefined })
