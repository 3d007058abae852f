/**
 * `npm run bench:questionnaires`: the targets — 100 concurrent PHQ-9 submissions answer in
 * p99 ≤ 100 ms, and one patient's response list among 1,000,000 responses in p99 ≤ 30 ms.
 *
 * 1. A fresh database (DATABASE_URL's server, else an embedded PostgreSQL), migrated and seeded
 *    with the instruments by the app itself (`npm start`, child process, logs at warn); then 10,000
 *    patients and 1,000,000 PHQ-9 responses (100 a patient, every status, spread over two years,
 *    nine answers each) inserted with SQL generate_series, and VACUUM ANALYZE.
 * 2. Submissions: rounds of 100 complete PHQ-9 responses sent at once (one in ten with a self-harm
 *    answer, so the alert row, audit entry and mail job are in the measured path), as the admin.
 *    Then the machine's floor for that burst (`burstFloor`: 100 GET /health at once).
 * 3. Lists: `GET /v1/clinic/patients/questionnaires?patient_id=…` one after another over random
 *    patients, pages 1–4, sometimes filtered by status, after a warm-up.
 *
 * Flags: --responses (1000000), --patients (10000), --rounds (5), --lists (500), --target (`tsx`
 * default, or `production`), --keep (leave the database for EXPLAIN; its name is printed).
 */
import { parseArgs } from "node:util"
import { burstFloor, describeTarget, latencySummary, parseTarget, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    responses: { type: "string", default: "1000000" },
    patients: { type: "string", default: "10000" },
    rounds: { type: "string", default: "5" },
    lists: { type: "string", default: "500" },
    target: { type: "string", default: "tsx" },
    keep: { type: "boolean", default: false }
  }
})
const responseCount = Number(flags.responses)
const patientCount = Number(flags.patients)
const rounds = Number(flags.rounds)
const listCount = Number(flags.lists)
const target = parseTarget(flags.target)

const summary = (times: ReadonlyArray<number>) => {
  const { count, p50, p95, p99, max } = latencySummary(times)
  return `n ${count}, p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`
}

runBench("questionnaires", async (bench) => {
  const { base, token } = await bench.startApp({ target })
  const headers = { "x-user-token": token, "content-type": "application/json" }

  const db = await bench.connect()
  const seedStarted = performance.now()
  const { rows: [phq9] } = await db.query<{ id: number; version: number }>("SELECT id, version FROM questionnaires WHERE slug = 'phq9' AND active")
  if (phq9 === undefined) throw new Error("the app did not seed the PHQ-9")
  const { rows: questions } = await db.query<{ id: number; key: string }>(
    "SELECT id, key FROM questionnaire_questions WHERE questionnaire_id = $1 ORDER BY position", [phq9.id])
  const scored = questions.filter((q) => q.key !== "phq9_10")
  const options = ["Not at all", "Several days", "More than half the days", "Nearly every day"]
  const answersJson = JSON.stringify(Object.fromEntries(scored.map((q, i) => [String(q.id), options[i % 4]])))
  await db.query(`INSERT INTO patients (first_name, last_name, date_of_birth, created_at)
    SELECT 'Bench', 'Patient' || g, date '1980-01-01' + (g % 9000), now() FROM generate_series(1, $1::int) g`, [patientCount])
  const { rows: [range] } = await db.query<{ min: number }>("SELECT min(id) AS min FROM patients")
  await db.query(`INSERT INTO questionnaire_responses (questionnaire_id, questionnaire_version, patient_id, status, answers, score,
      severity, flags, completed_at, submitted_at, created_at, updated_at)
    SELECT $1::int, $2::int, $3::int + g % $4::int,
      (ARRAY['started', 'in_progress', 'completed', 'submitted', 'reviewed'])[1 + g % 5],
      CASE WHEN g % 5 < 2 THEN '{}'::jsonb ELSE $5::jsonb END,
      CASE WHEN g % 5 < 2 THEN NULL ELSE 13 END,
      CASE WHEN g % 5 < 2 THEN NULL ELSE 'moderate' END,
      CASE WHEN g % 97 = 0 THEN ARRAY['self_harm'] ELSE '{}'::text[] END,
      CASE WHEN g % 5 < 2 THEN NULL ELSE now() - make_interval(mins => g) END,
      CASE WHEN g % 5 < 3 THEN NULL ELSE now() - make_interval(mins => g) END,
      now() - make_interval(mins => g), now() - make_interval(mins => g)
    FROM generate_series(1, $6::int) g`, [phq9.id, phq9.version, range!.min, patientCount, answersJson, responseCount])
  await db.query("VACUUM ANALYZE")
  await db.end()
  console.log(`seeded ${patientCount} patients and ${responseCount} responses in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`)

  const patientAt = (i: number) => range!.min + ((i * 7919) % patientCount)

  // Submissions: complete PHQ-9s, 100 at once.
  const submit = async (i: number) => {
    const responses = scored.map((q, k) => ({
      question_id: q.id,
      answer: q.key === "phq9_9" ? options[i % 10 === 0 ? 1 : 0]! : options[(i + k) % 4]!
    }))
    const started = performance.now()
    const response = await fetch(`${base}/v1/questionnaire_responses`, {
      method: "POST", headers,
      body: JSON.stringify({ questionnaire_response: { questionnaire_id: phq9.id, patient_id: patientAt(i), responses } })
    })
    const body = await response.json() as { questionnaire_response?: { status: string } }
    const elapsed = performance.now() - started
    if (response.status !== 201 || body.questionnaire_response?.status !== "completed") {
      throw new Error(`submission failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`)
    }
    return elapsed
  }
  await Promise.all(Array.from({ length: 20 }, (_, i) => submit(1_000_000 + i)))
  const submissions: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    submissions.push(...await Promise.all(Array.from({ length: 100 }, (_, i) => submit(round * 100 + i))))
  }

  const floor = await burstFloor(base, 100)

  // One patient's list.
  const statuses = ["completed", "submitted", "reviewed"]
  const list = async (i: number) => {
    const params = new URLSearchParams({ patient_id: String(patientAt(i * 31 + 5)), page: String(1 + (i % 4)) })
    if (i % 3 === 0) params.set("status", statuses[i % 3 === 0 ? (i / 3) % 3 : 0]!)
    const started = performance.now()
    const response = await fetch(`${base}/v1/clinic/patients/questionnaires?${params}`, { headers })
    const body = await response.json() as { questionnaire_responses?: Array<unknown>; pagination?: { total_count: number } }
    const elapsed = performance.now() - started
    if (response.status !== 200) throw new Error(`list failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`)
    return { elapsed, total: body.pagination?.total_count ?? 0 }
  }
  for (let i = 0; i < 50; i++) await list(i)
  const lists: Array<number> = []
  let total = 0
  for (let i = 0; i < listCount; i++) {
    const { elapsed, total: count } = await list(i)
    lists.push(elapsed)
    total += count
  }

  console.log(`app: ${describeTarget(target)}`)
  const submitP99 = latencySummary(submissions).p99
  const listP99 = latencySummary(lists).p99
  console.log(`submissions (${rounds} rounds of 100 at once, complete PHQ-9, 1 in 10 raising the self-harm alert): ${summary(submissions)} → target p99 ≤ 100 ms ${submitP99 <= 100 ? "met" : "MISSED"}`)
  console.log(floor)
  console.log(`one patient's list among ${responseCount} (${listCount} one after another, mean ${Math.round(total / listCount)} matching, page size 25): ${summary(lists)} → target p99 ≤ 30 ms ${listP99 <= 30 ? "met" : "MISSED"}`)
}, { keepDatabase: flags.keep })
