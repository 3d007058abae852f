/**
 * `npm run bench:lcm`: lead care manager bulk assign of 1,000 entries (target ≤ 1 s per request).
 *
 * 1. Starts the app as `npm start` runs it (child process, fresh database, logs at warn), signs in.
 * 2. Seeds --patients patients (default 1,000) and two staff users straight into the database.
 * 3. Times `POST /v1/admin/clinic/ecm/lead_care_managers/bulk_assign` with every patient, in three
 *    shapes, --rounds times each (default 5): *new* (no case loads yet: every row inserted, both
 *    roles given), *swap* (every role moves to the other user: every row updated, 2 changes each),
 *    *same* (nothing changes). The first *new* round creates the case loads, so later *new* rounds
 *    run on fresh patients.
 * 4. Prints each shape's fastest, median and slowest time and whether the median meets the target.
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_lcm_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir.
 */
import { parseArgs } from "node:util"
import { latencySummary, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    patients: { type: "string", default: "1000" },
    rounds: { type: "string", default: "5" }
  }
})
const patients = Number(flags.patients)
const rounds = Number(flags.rounds)
const targetMs = 1000

runBench("lcm", async (bench) => {
  const { base, token } = await bench.startApp()

  const db = await bench.connect()
  const { rows: users } = await db.query<{ id: number }>(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    VALUES ('olcm@bench.test', 'x', 'Olive', 'Lead', 'provider', true), ('ilcm@bench.test', 'x', 'Ivan', 'Lead', 'supervisor', true)
    RETURNING id`)
  const [a, b] = [users[0]!.id, users[1]!.id]
  const seedPatients = async () =>
    (await db.query<{ id: number }>(`INSERT INTO patients (first_name, last_name)
      SELECT 'Bench', 'Patient ' || n FROM generate_series(1, $1::int) n RETURNING id`, [patients])).rows.map((r) => r.id)

  const bulk = async (ids: ReadonlyArray<number>, olcm: number, ilcm: number) => {
    const body = JSON.stringify({ assignments: ids.map((id) => ({ patient_id: id, olcm_user_id: olcm, ilcm_user_id: ilcm })) })
    const started = performance.now()
    const response = await fetch(`${base}/v1/admin/clinic/ecm/lead_care_managers/bulk_assign`, {
      method: "POST", headers: { "content-type": "application/json", "x-user-token": token }, body
    })
    const result = (await response.json()) as { successful_count?: number }
    const elapsed = performance.now() - started
    if (response.status !== 200 || result.successful_count !== ids.length) {
      throw new Error(`bulk assign answered ${response.status}: ${JSON.stringify(result).slice(0, 300)}`)
    }
    return elapsed
  }

  const report = (shape: string, times: Array<number>) => {
    const { min, p50: median, max } = latencySummary(times)
    console.log(`${shape.padEnd(5)} ${patients} entries × ${rounds}: fastest ${min.toFixed(0)} ms, median ${median.toFixed(0)} ms, ` +
      `slowest ${max.toFixed(0)} ms → ${median <= targetMs ? "met" : "MISSED"} (≤ ${targetMs} ms)`)
    return median <= targetMs
  }

  // One warm-up request: the first request of a process pays for loading and planning.
  await bulk(await seedPatients(), a, b)
  const fresh: Array<number> = []
  const swap: Array<number> = []
  const same: Array<number> = []
  let ids: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    ids = await seedPatients()
    fresh.push(await bulk(ids, a, b))
    swap.push(await bulk(ids, b, a))
    same.push(await bulk(ids, b, a))
  }
  const met = [report("new", fresh), report("swap", swap), report("same", same)].every(Boolean)
  console.log(`target: ≤ ${targetMs} ms for ${patients} entries → ${met ? "met" : "MISSED"}`)
})
