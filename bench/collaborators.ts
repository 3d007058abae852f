/**
 * `npm run bench:collaborators`: 100,000 collaborators and 500,000 assessments.
 *
 * 1. A fresh database migrated by the app itself (`npm start`, child process, TRUSTED_PROXIES=1 so
 *    each simulated collaborator has an address of its own for the public rate limit), then seeded
 *    with SQL generate_series: 2,000 parent owners, 50 providers, 10,000 patients (each with a
 *    primary provider, every fifth linked to a parent), 100,000 collaborators (types, statuses and
 *    organizations spread), one linked patient each, 5 assessments each (mostly completed, scored).
 * 2. Filtered lists one after another, as the admin (type, status, organization contains,
 *    patient_id, pages 1–3), as an owner and as a primary provider: p50/p95/p99 per caller.
 * 3. Form + submit flows: 50 at once (each its own link and address: GET form, then POST the
 *    answers with the token), several rounds; p99 of each request and of the whole flow. Then the
 *    machine's floor for such a burst (`burstFloor`: 50 GET /health at once).
 *
 * Flags: --collaborators (100000), --requests (600), --rounds (4), --target (`tsx` or `production`),
 * --keep (leave the database, its name printed).
 */
import { createHash, randomBytes } from "node:crypto"
import { parseArgs } from "node:util"
import { burstFloor, describeTarget, latencySummary, parseTarget, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    collaborators: { type: "string", default: "100000" },
    requests: { type: "string", default: "600" },
    rounds: { type: "string", default: "4" },
    target: { type: "string", default: "tsx" },
    keep: { type: "boolean", default: false }
  }
})
const collaboratorCount = Number(flags.collaborators)
const requestCount = Number(flags.requests)
const rounds = Number(flags.rounds)
const target = parseTarget(flags.target)
const flowsAtOnce = 50

const summary = (times: ReadonlyArray<number>) => {
  const { count, p50, p95, p99, max } = latencySummary(times)
  return `n ${count}, p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`
}

const organizations = ["Lincoln Elementary", "Roosevelt Middle School", "Bayview Pediatrics", "Harbor Family Services", "Oak Grove Therapy",
  "Sunrise Speech Clinic", "Eastside Social Services", "Valley High School", "Mission Health Partners", "Hillcrest Academy"]
const types = ["school", "therapist", "physician", "social_worker", "case_manager", "family_member", "other"]
const statuses = ["active", "active", "active", "inactive", "pending", "declined", "suspended"]
const assessmentTypes = ["behavioral_observation", "academic_performance", "social_skills", "progress_report", "treatment_feedback"]
const socialAnswers = ["starts_conversations", "takes_turns", "cooperates", "resolves_conflict", "empathy"].map((question_id, i) => ({
  question_id, answer: ["Never", "Rarely", "Sometimes", "Often", "Almost always"][i % 5]!
}))

runBench("collaborators", async (bench) => {
  const { base, token: adminToken } = await bench.startApp({ target, env: { TRUSTED_PROXIES: "1" } })
  const db = await bench.connect()
  const seedStarted = performance.now()
  await db.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    SELECT 'owner' || g || '@bench.test', 'x', 'Owner', 'Parent' || g, 'parent', true FROM generate_series(1, 2000) g`)
  await db.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    SELECT 'provider' || g || '@bench.test', 'x', 'Dr', 'Provider' || g, 'provider', true FROM generate_series(1, 50) g`)
  await db.query(`INSERT INTO providers (user_id, roles) SELECT id, ARRAY['provider'] FROM users WHERE role = 'provider'
    ON CONFLICT (user_id) DO NOTHING`)
  await db.query(`INSERT INTO patients (first_name, last_name, date_of_birth, provider_id, user_id)
    SELECT 'Child' || g, 'Family' || g, date '2010-01-01' + g % 3000,
      (SELECT min(id) FROM providers) + g % 50,
      CASE WHEN g % 5 = 0 THEN (SELECT min(id) FROM users WHERE role = 'parent') + (g / 5) % 2000 END
    FROM generate_series(1, 10000) g`)
  await db.query(`INSERT INTO collaborators (owner_id, first_name, last_name, email, organization, type, status, created_at, updated_at)
    SELECT (SELECT min(id) FROM users WHERE role = 'parent') + g % 2000, 'First' || g, 'Last' || g, 'c' || g || '@school.bench',
      ($1::text[])[1 + g % 10] || ' ' || (g % 97), ($2::text[])[1 + g % 7], ($3::text[])[1 + (g / 7) % 7],
      now() - make_interval(mins => g), now() - make_interval(mins => g)
    FROM generate_series(1, $4::int) g`, [organizations, types, statuses, collaboratorCount])
  await db.query(`INSERT INTO collaborator_patients (collaborator_id, patient_id)
    SELECT c.id, (SELECT min(id) FROM patients) + c.id % 10000 FROM collaborators c`)
  await db.query(`INSERT INTO collaborator_assessments (collaborator_id, patient_id, assessment_type, question_set_version, status,
      responses, total_score, interpretation, completed_at, created_at, updated_at)
    SELECT cp.collaborator_id, cp.patient_id, ($1::text[])[1 + k], 1, CASE WHEN k = 4 THEN 'expired' ELSE 'completed' END,
      '[{"question_id":"comments","question_text":"Other observations","answer":"Seeded","score":null}]', 10, 'developing',
      now() - make_interval(days => k), now() - make_interval(days => k), now()
    FROM collaborator_patients cp, generate_series(0, 4) k`, [assessmentTypes])
  // Sessions for one owner and one primary provider (the API signs them in; here their tokens are inserted hashed).
  const session = async (where: string) => {
    const token = randomBytes(32).toString("base64url")
    await db.query(`INSERT INTO user_tokens (token_hash, user_id) SELECT $1, id FROM users WHERE ${where} LIMIT 1`,
      [createHash("sha256").update(token).digest()])
    return token
  }
  const ownerToken = await session("email = 'owner7@bench.test'")
  const providerToken = await session("email = 'provider3@bench.test'")
  await db.query("VACUUM ANALYZE")
  const counts = await db.query<{ c: number; a: number }>(`SELECT (SELECT count(*)::int FROM collaborators) AS c, (SELECT count(*)::int FROM collaborator_assessments) AS a`)
  console.log(`seeded ${counts.rows[0]!.c} collaborators, ${counts.rows[0]!.a} assessments in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`)
  const [patientRow] = (await db.query<{ id: number }>("SELECT min(id) AS id FROM patients")).rows

  // --- Filtered lists ---------------------------------------------------------------------------
  const listTimes: Record<string, Array<number>> = { admin: [], owner: [], provider: [] }
  const listOnce = async (i: number, record: boolean) => {
    const caller = i % 4 === 0 ? "owner" : i % 4 === 1 ? "provider" : "admin"
    const token = caller === "owner" ? ownerToken : caller === "provider" ? providerToken : adminToken
    const params = new URLSearchParams({ page: String(1 + (i % 3)) })
    if (i % 3 === 0) params.set("type", types[i % 7]!)
    if (i % 5 < 2) params.set("status", statuses[i % 7]!)
    if (i % 7 < 3) params.set("organization", organizations[i % 10]!.split(" ")[0]!.toLowerCase())
    if (caller === "admin" && i % 11 === 0) params.set("patient_id", String(patientRow!.id + (i % 10000)))
    const started = performance.now()
    const response = await fetch(`${base}/v1/collaborators?${params}`, { headers: { "x-user-token": token } })
    const body = await response.json() as { pagination?: { total_count: number } }
    const elapsed = performance.now() - started
    if (response.status !== 200) throw new Error(`list failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`)
    if (record) listTimes[caller]!.push(elapsed)
  }
  for (let i = 0; i < 60; i++) await listOnce(i, false)
  for (let i = 0; i < requestCount; i++) await listOnce(i, true)
  const allLists = Object.values(listTimes).flat()
  console.log(`app: ${describeTarget(target)}; ${requestCount} filtered collaborator lists one after another, page size 25`)
  for (const [caller, times] of Object.entries(listTimes)) console.log(`  as ${caller.padEnd(8)} ${summary(times)}`)
  console.log(`lists overall: ${summary(allLists)} → target p99 ≤ 50 ms ${latencySummary(allLists).p99 <= 50 ? "met" : "MISSED"}`)

  // --- Form + submit flows ----------------------------------------------------------------------
  const pairs = (await db.query<{ collaborator_id: number; patient_id: number }>(`SELECT cp.collaborator_id, cp.patient_id
    FROM collaborator_patients cp JOIN collaborators c ON c.id = cp.collaborator_id
    WHERE c.status IN ('pending', 'active') ORDER BY cp.collaborator_id LIMIT $1`, [flowsAtOnce * (rounds + 1)])).rows
  const issue = async (pair: { collaborator_id: number; patient_id: number }) => {
    const params = new URLSearchParams({ collaborator_id: String(pair.collaborator_id), patient_id: String(pair.patient_id), assessment_type: "social_skills" })
    const response = await fetch(`${base}/v1/collaborator_assessments/token?${params}`, { headers: { "x-user-token": adminToken } })
    const body = await response.json() as { token?: string }
    if (response.status !== 200 || body.token === undefined) throw new Error(`token failed: ${response.status} ${JSON.stringify(body)}`)
    return body.token
  }
  const formTimes: Array<number> = []
  const submitTimes: Array<number> = []
  const flowTimes: Array<number> = []
  let address = 0
  const flow = async (token: string, record: boolean) => {
    const forwarded = { "x-forwarded-for": `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` }
    const started = performance.now()
    const form = await fetch(`${base}/v1/collaborator_assessments/form?token=${encodeURIComponent(token)}`, { headers: forwarded })
    await form.arrayBuffer()
    const formDone = performance.now()
    const submitted = await fetch(`${base}/v1/collaborator_assessments`, {
      method: "POST",
      headers: { ...forwarded, "content-type": "application/json" },
      body: JSON.stringify({ token, collaborator_assessment: { responses: socialAnswers } })
    })
    await submitted.arrayBuffer()
    const done = performance.now()
    if (form.status !== 200 || submitted.status !== 201) throw new Error(`flow failed: form ${form.status}, submit ${submitted.status}`)
    if (record) {
      formTimes.push(formDone - started)
      submitTimes.push(done - formDone)
      flowTimes.push(done - started)
    }
  }
  for (let round = 0; round <= rounds; round++) {
    const tokens = []
    for (const pair of pairs.slice(round * flowsAtOnce, (round + 1) * flowsAtOnce)) tokens.push(await issue(pair))
    // Round 0 warms up.
    await Promise.all(tokens.map((token) => flow(token, round > 0)))
  }
  console.log(`${rounds} rounds of ${flowsAtOnce} concurrent form + submit flows (each its own link and address)`)
  console.log(`  form     ${summary(formTimes)}`)
  console.log(`  submit   ${summary(submitTimes)}`)
  console.log(`  flow     ${summary(flowTimes)}`)
  const worst = Math.max(latencySummary(formTimes).p99, latencySummary(submitTimes).p99)
  console.log(`flows: request p99 ${worst.toFixed(1)} ms → target p99 ≤ 100 ms ${worst <= 100 ? "met" : "MISSED"}`)
  console.log(await burstFloor(base, flowsAtOnce))
}, { keepDatabase: flags.keep })
