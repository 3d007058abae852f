/**
 * `npm run bench:ecm-exchange`: the return files at scale.
 *
 * 1. Starts the app with its job worker (child process, fresh database) and signs in the admin.
 * 2. Seeds the PRTF bench's world (bench/ecmSeed.ts: 20,000 members, 1,000,000 events), all of it
 *    sent by one health plan.
 * 3. For the quarter 2026-01-01..2026-03-31 and each file (RTF, OTF), median of --runs after a warm-up:
 *    - the floor: the file's bare statement (ExchangeRowsRepo.ts), compiled by @effect/sql-pg and
 *      run by `pg` under the same settings, every row fetched;
 *    - generation end to end: POST …/rtf_reports (otf_reports), then polling the report until
 *      `completed` (the job's count, cursor, rows, file and upload included).
 *    And the app's peak RSS over its idle RSS. Targets: ≤ 10 s per file, ≤ 2 × the floor, peak ≤ idle + 200 MB.
 *
 * Database: DATABASE_URL's server (a fresh database, dropped at the end), else an embedded
 * PostgreSQL. Flags: --members (20000), --events (1000000), --runs (3).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as fs from "node:fs/promises"
import { parseArgs } from "node:util"
import { otfStatement, rtfStatement } from "../src/Services/EcmExchange/ExchangeRowsRepo.js"
import { seedEcm } from "./ecmSeed.js"
import { runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    members: { type: "string", default: "20000" },
    events: { type: "string", default: "1000000" },
    runs: { type: "string", default: "3" }
  }
})
const members = Number(flags.members)
const events = Number(flags.events)
const runs = Number(flags.runs)
const quarter = { start_date: "2026-01-01", end_date: "2026-03-31" }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`

/** VmRSS and VmHWM (peak) of a process, in kB (Linux). */
const memoryOf = async (pid: number) => {
  const status = await fs.readFile(`/proc/${pid}/status`, "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0)
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

runBench("exchange", async (bench) => {
  const app = await bench.startApp({ env: { JOBS_ENABLED: "true" } })
  const { base, token, adminId } = app
  const pid = app.child.pid!
  const api = async (method: string, pathname: string, body?: unknown) => {
    const response = await fetch(`${base}${pathname}`, {
      method,
      headers: { "content-type": "application/json", "x-user-token": token },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as any }
  }

  const client = await bench.connect()
  client.on("error", (error) => console.error(`bench connection: ${error.message}`))
  await seedEcm(client, adminId, members, events)
  const plan = await api("POST", "/v1/admin/clinic/ecm/health_plans", { name: "Bench Plan", mcp_id: "BENCH", provider_tin: "941234567" })
  if (plan.status !== 201) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`)
  const planId = plan.body.health_plan.id as number
  await client.query(`UPDATE mif_files SET health_plan_id = $1`, [planId])

  const criteria = { healthPlanId: planId, startDate: quarter.start_date, endDate: quarter.end_date }
  const compile = (statement: typeof rtfStatement) =>
    Effect.runPromise(statement(criteria).pipe(
      Effect.map((s) => s.compile()),
      Effect.provide(PgClient.layer({ url: Redacted.make(bench.databaseUrl) }))
    ))
  const idle = await memoryOf(pid)
  for (const [kind, statement] of [["rtf", rtfStatement], ["otf", otfStatement]] as const) {
    const [text, params] = await compile(statement)
    const bare = async () => {
      await client.query("BEGIN")
      await client.query(`SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`)
      const rows = (await client.query({ text, values: params as Array<unknown>, rowMode: "array" })).rowCount ?? 0
      await client.query("COMMIT")
      return rows
    }
    const generate = async () => {
      const created = await api("POST", `/v1/admin/clinic/ecm/${kind}_reports`, { health_plan_id: planId, ...quarter })
      if (created.status !== 202) throw new Error(`${kind}: ${created.status} ${JSON.stringify(created.body)}`)
      for (;;) {
        await sleep(50)
        const shown = await api("GET", `/v1/admin/clinic/ecm/${kind}_reports/${created.body.report.id}`)
        if (shown.body.report.status === "completed") return shown.body.report.row_count as number
        if (shown.body.report.status === "failed") throw new Error(`${kind} failed`)
      }
    }
    await bare()
    await generate()
    const bareTimes: Array<number> = []
    const generateTimes: Array<number> = []
    let rows = 0
    for (let i = 0; i < runs; i++) {
      let started = performance.now()
      rows = await bare()
      bareTimes.push(performance.now() - started)
      started = performance.now()
      await generate()
      generateTimes.push(performance.now() - started)
    }
    const floor = median(bareTimes)
    const total = median(generateTimes)
    console.log(`${kind.toUpperCase()} ${quarter.start_date}..${quarter.end_date}: ${rows} rows`)
    console.log(`  floor (bare statement): median ${secs(floor)} (runs: ${bareTimes.map(secs).join(", ")})`)
    console.log(`  generation end to end: median ${secs(total)} (runs: ${generateTimes.map(secs).join(", ")}) ` +
      `(target ≤ 10 s: ${total <= 10_000 ? "met" : "MISSED"}; ${(total / floor).toFixed(2)} × the floor, target ≤ 2: ${total <= 2 * floor ? "met" : "MISSED"})`)
  }
  const after = await memoryOf(pid)
  const grown = after.peak - idle.rss
  console.log(`app RSS: idle ${mb(idle.rss)}, peak ${mb(after.peak)} (+${mb(grown)}; target ≤ +200 MB: ${grown <= 200 * 1024 ? "met" : "MISSED"})`)
  await client.end()
})
