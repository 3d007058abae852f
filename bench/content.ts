/**
 * `npm run bench:content`: recommendations and the user piece list on a large library (the
 * targets, 20 concurrent clients: recommendations p99 ≤ 50 ms, user_pieces list p99 ≤ 20 ms).
 *
 * 1. A fresh database migrated by the app itself (`npm start`, CONTENT_DEMO=false), then with SQL:
 *    500 tags, 50,000 pieces over every type, age group and level (1–3 tags each), 100,000 parent
 *    accounts each with one patient (ages 5–40), and 1,000,000 user pieces (10 per patient: 40 %
 *    completed with ratings, 10 % skipped, the rest open). The nightly `content.refresh_stats` job is
 *    queued and run by the app's worker; the bench waits for its figures.
 * 2. As the bootstrap admin (staff), 20 clients at once each send requests one after another after a
 *    warm-up: `GET /v1/recommendations/content_pieces?patient_id=…` and
 *    `GET /v1/content/user_pieces?patient_id=…`, random patients; p50/p95/p99/max per kind.
 *
 * Flags: --pieces (50000), --patients (100000), --per-patient (10), --requests (per client and kind, 50),
 * --clients (20), --target (`tsx` or `production`), --keep.
 */
import { parseArgs } from "node:util"
import { burstFloor, describeTarget, latencySummary, parseTarget, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    pieces: { type: "string", default: "50000" },
    patients: { type: "string", default: "100000" },
    "per-patient": { type: "string", default: "10" },
    requests: { type: "string", default: "50" },
    clients: { type: "string", default: "20" },
    target: { type: "string", default: "tsx" },
    keep: { type: "boolean", default: false }
  }
})
const pieceCount = Number(flags.pieces)
const patientCount = Number(flags.patients)
const perPatient = Number(flags["per-patient"])
const requestCount = Number(flags.requests)
const clientCount = Number(flags.clients)
const target = parseTarget(flags.target)

const summary = (times: ReadonlyArray<number>) => {
  const { count, p50, p95, p99, max } = latencySummary(times)
  return `n ${count}, p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`
}

runBench("content", async (bench) => {
  const { base, token } = await bench.startApp({ target, env: { CONTENT_DEMO: "false", DB_POOL_SIZE: "20" } })
  const db = await bench.connect()
  const seedStarted = performance.now()
  const stepTimes: Array<string> = []
  const step = async (name: string, run: () => Promise<unknown>) => {
    const started = performance.now()
    await run()
    stepTimes.push(`${name} ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  await step("tags", () => db.query(`INSERT INTO content_tags (slug, name, display_name, category)
    SELECT 'tag-' || g, 'tag ' || g, 'Tag ' || g, 'category-' || (g % 10) FROM generate_series(1, 500) g`))
  await step("pieces", () => db.query(`INSERT INTO content_pieces (slug, title, content_type, external_url, age_group, difficulty_level, created_at, bundle_position)
    SELECT 'piece-' || g, 'Piece ' || g,
      (ARRAY['video', 'article', 'audio', 'interactive', 'worksheet', 'quiz'])[1 + g % 6],
      'https://content.example.org/piece-' || g,
      (ARRAY['child', 'teen', 'adult', 'all'])[1 + (g / 6) % 4],
      (ARRAY['beginner', 'intermediate', 'advanced'])[1 + (g / 24) % 3],
      now() - make_interval(mins => g), g
    FROM generate_series(1, $1::int) g`, [pieceCount]))
  await step("piece tags", () => db.query(`INSERT INTO content_piece_tags (piece_id, tag_id)
    SELECT p.id, t.id FROM content_pieces p
      CROSS JOIN LATERAL (SELECT v.n FROM (VALUES (1, 1 + p.id * 7 % 500), (2, 1 + p.id * 13 % 500), (3, 1 + p.id * 31 % 500)) AS v(k, n)
        WHERE v.k <= 1 + p.id % 3) AS v
      JOIN content_tags t ON t.slug = 'tag-' || v.n
    ON CONFLICT DO NOTHING`))
  await step("parents", () => db.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    SELECT 'parent' || g || '@bench.test', 'x', 'Parent', 'P' || g, 'parent', true FROM generate_series(1, $1::int) g`, [patientCount]))
  await step("patients", () => db.query(`INSERT INTO patients (first_name, last_name, date_of_birth, user_id)
    SELECT 'Kid', 'P' || substr(u.email, 7, position('@' IN u.email) - 7), current_date - make_interval(years => 5 + u.id % 36),
      u.id FROM users u WHERE u.email LIKE 'parent%@bench.test'`))
  // A million rows: loaded like a restore (secondary indexes built afterwards in one sort each, foreign
  // keys not checked row by row: the ids come from the rows just made), else this step alone took minutes.
  const { rows: userPieceIndexes } = await db.query<{ name: string; definition: string }>(`SELECT i.relname AS name,
      pg_get_indexdef(i.oid) AS definition
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = 'content_user_pieces'::regclass AND NOT x.indisprimary`)
  await step("user pieces", async () => {
    for (const index of userPieceIndexes) await db.query(`DROP INDEX ${index.name}`)
    await db.query("SET session_replication_role = replica")
    await db.query(`INSERT INTO content_user_pieces (content_piece_id, user_id, patient_id, status, assigned_at, completed_at, rating)
    SELECT 1 + (p.id * 37 + k * 101) % $1::int, p.user_id, p.id,
      (ARRAY['completed', 'completed', 'completed', 'completed', 'skipped', 'assigned', 'assigned', 'started', 'in_progress', 'assigned'])[1 + (p.id + k) % 10],
      now() - make_interval(days => 150),
      CASE WHEN (p.id + k) % 10 < 4 THEN now() - make_interval(days => (p.id + k * 13) % 120) END,
      CASE WHEN (p.id + k) % 10 < 4 AND (p.id + k) % 3 <> 0 THEN 1 + (p.id * k) % 5 END
    FROM patients p CROSS JOIN generate_series(1, $2::int) k WHERE p.user_id IS NOT NULL ORDER BY p.id, k`, [pieceCount, perPatient])
    await db.query("SET session_replication_role = DEFAULT")
    for (const index of userPieceIndexes) await db.query(index.definition)
  })
  await step("popularity job", async () => {
    await db.query("SELECT graphile_worker.add_job('content.refresh_stats', '{}'::json)")
    for (let waited = 0; ; waited += 500) {
      const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM content_piece_stats")
      if (Number(rows[0]!.n) >= pieceCount) break
      if (waited > 300_000) throw new Error("content.refresh_stats did not run within 5 minutes")
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  })
  await step("vacuum analyze", () => db.query("VACUUM ANALYZE"))
  const { rows: counts } = await db.query<{ pieces: string; user_pieces: string; patients: string }>(`SELECT
    (SELECT count(*) FROM content_pieces) AS pieces, (SELECT count(*) FROM content_user_pieces) AS user_pieces,
    (SELECT count(*) FROM patients) AS patients`)
  const { rows: patientRange } = await db.query<{ min: number; max: number }>("SELECT min(id) AS min, max(id) AS max FROM patients")
  await db.end()
  console.log(`seeded ${counts[0]!.pieces} pieces, ${counts[0]!.patients} patients, ${counts[0]!.user_pieces} user pieces ` +
    `and the popularity figures in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${stepTimes.join(", ")})`)

  const low = patientRange[0]!.min
  const span = patientRange[0]!.max - low + 1
  let seed = 42
  const randomPatient = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return low + (seed % span)
  }
  const kinds = {
    recommendations: (patient: number) => `/v1/recommendations/content_pieces?patient_id=${patient}`,
    "user_pieces list": (patient: number) => `/v1/content/user_pieces?patient_id=${patient}`
  } as const
  const times: Record<keyof typeof kinds, Array<number>> = { recommendations: [], "user_pieces list": [] }
  const send = async (kind: keyof typeof kinds, record: boolean) => {
    const started = performance.now()
    const response = await fetch(`${base}${kinds[kind](randomPatient())}`, { headers: { "x-user-token": token } })
    const body = await response.text()
    const elapsed = performance.now() - started
    if (response.status !== 200) throw new Error(`${kind} failed: ${response.status} ${body.slice(0, 300)}`)
    if (record) times[kind].push(elapsed)
  }
  const client = async (warmUp: number, count: number, record: boolean) => {
    for (let i = 0; i < count; i++) {
      await send("recommendations", record && i >= warmUp)
      await send("user_pieces list", record && i >= warmUp)
    }
  }
  await Promise.all(Array.from({ length: clientCount }, () => client(0, 5, false)))
  const started = performance.now()
  await Promise.all(Array.from({ length: clientCount }, () => client(0, requestCount, true)))
  const seconds = (performance.now() - started) / 1000
  console.log(`app: ${describeTarget(target)}; ${clientCount} clients at once, each ${requestCount} recommendations and ` +
    `${requestCount} user_pieces lists in turn (${((clientCount * requestCount * 2) / seconds).toFixed(0)} requests/s)`)
  const targets = { recommendations: 50, "user_pieces list": 20 } as const
  for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) {
    const p99 = latencySummary(times[kind]).p99
    console.log(`  ${kind.padEnd(17)} ${summary(times[kind])} → target p99 ≤ ${targets[kind]} ms ${p99 <= targets[kind] ? "met" : "MISSED"}`)
  }
  console.log(await burstFloor(base, clientCount))
}, { keepDatabase: flags.keep })
