/**
 * `npm run bench:patients`: the clinic patient list with 100,000 patients (the target: a
 * searched and sorted list page answers in p99 ≤ 50 ms).
 *
 * 1. A fresh database (DATABASE_URL's server, else an embedded PostgreSQL), migrated by the app
 *    itself (`npm start`, child process, logs at warn), and 100,000 patients inserted with SQL:
 *    ~400 last names, 40 first names, member ids, E.164 phones, 50 providers as primary providers.
 * 2. Signed in as the bootstrap admin (staff see every patient), it sends list requests one after
 *    another through HTTP — search by last name, full name, member id prefix and phone digits, each
 *    sorted by one of the sort fields in either direction, pages 1–3 — after a warm-up, and prints
 *    p50/p95/p99/max per kind and overall.
 *
 * Flags: --patients (100000), --requests (600), --target (`tsx` default, or `production`: the build,
 * `node dist/main.js` with the image's NODE_OPTIONS `--max-semi-space-size=32`),
 * --keep (leave the database for EXPLAIN; its name is printed).
 */
import { parseArgs } from "node:util"
import { describeTarget, latencySummary, parseTarget, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    patients: { type: "string", default: "100000" },
    requests: { type: "string", default: "600" },
    target: { type: "string", default: "tsx" },
    /** Keep the database afterwards (its name is printed), to EXPLAIN the queries. */
    keep: { type: "boolean", default: false }
  }
})
const patientCount = Number(flags.patients)
const requestCount = Number(flags.requests)
const target = parseTarget(flags.target)

const firstNames = ["Ana", "Ben", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Keiko", "Luis", "Maya",
  "Nico", "Olga", "Pedro", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Victor", "Wen", "Ximena", "Yusuf", "Zoe", "Amir", "Bianca",
  "Chen", "Dara", "Emil", "Fatima", "Gabriel", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Marco", "Nadia"]
const lastStarts = ["Lo", "Ka", "Mi", "Ng", "Sa", "Pa", "Ro", "Co", "Si", "Ha", "Be", "Da", "Fe", "Gu", "Ja", "Le", "Mo", "Ne", "Or", "Va"]
const lastEnds = ["pez", "rim", "ller", "uyen", "ntos", "tel", "ssi", "hen", "lva", "ddad", "cker", "vis", "rnandez", "zman", "mes",
  "wis", "rales", "lson", "tiz", "rgas"]

const summary = (times: ReadonlyArray<number>) => {
  const { count, p50, p95, p99, max } = latencySummary(times)
  return `n ${count}, p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`
}

runBench("patients", async (bench) => {
  const { base, token } = await bench.startApp({ target })

  // Seeding, after the app migrated the database.
  const db = await bench.connect()
  const seedStarted = performance.now()
  await db.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    SELECT 'provider' || g || '@bench.test', 'x', ($1::text[])[1 + g % 40], 'Provider' || g, 'provider', true FROM generate_series(1, 50) g`,
    [firstNames])
  await db.query(`INSERT INTO providers (user_id, roles) SELECT id, ARRAY['provider'] FROM users WHERE role = 'provider'
    ON CONFLICT (user_id) DO NOTHING`)
  await db.query(`INSERT INTO patients (member_id, first_name, last_name, date_of_birth, phone, gender, city, state, zip, provider_id, created_at)
    SELECT '9' || lpad(g::text, 8, '0') || 'A',
      ($1::text[])[1 + g % 40],
      ($2::text[])[1 + g % 20] || ($3::text[])[1 + (g / 20) % 20],
      date '1945-01-01' + (g * 37 % 27000),
      '+1' || (200 + g % 700)::text || '555' || lpad((g % 10000)::text, 4, '0'),
      CASE WHEN g % 2 = 0 THEN 'female' ELSE 'male' END, 'Oakland', 'CA', lpad((90000 + g % 6000)::text, 5, '0'),
      (SELECT min(id) FROM providers) + g % 50,
      now() - make_interval(mins => g)
    FROM generate_series(1, $4::int) g`, [firstNames, lastStarts, lastEnds, patientCount])
  // What autovacuum does to a table this size soon after the load: statistics and the visibility map.
  await db.query("VACUUM ANALYZE")
  await db.end()
  console.log(`seeded ${patientCount} patients in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`)

  const sorts = ["id", "first_name", "last_name", "date_of_birth", "created_at"]
  const kinds: Record<string, (i: number) => string> = {
    "last name": (i) => lastStarts[i % 20]! + lastEnds[(i * 7) % 20]!,
    "full name": (i) => `${firstNames[i % 40]} ${lastStarts[(i * 3) % 20]}`,
    "member id": (i) => `9${String(i * 131 % 1000).padStart(3, "0")}`,
    "phone digits": (i) => `${200 + (i % 700)}-555`,
    "no search": () => ""
  }
  const times: Record<string, Array<number>> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]))
  const all: Array<number> = []
  const send = async (i: number, record: boolean) => {
    const kind = Object.keys(kinds)[i % 5]!
    const search = kinds[kind]!(Math.floor(i / 5))
    const params = new URLSearchParams({ sort_by: sorts[i % 5 === 0 ? 0 : (i * 3) % 5]!, sort_dir: i % 2 ? "DESC" : "asc", page: String(1 + (i % 3)) })
    if (search !== "") params.set("search", search)
    const started = performance.now()
    const response = await fetch(`${base}/v1/clinic/patients?${params}`, { headers: { "x-user-token": token } })
    const body = await response.json() as { patients?: Array<unknown>; pagination?: { total_count: number } }
    const elapsed = performance.now() - started
    if (response.status !== 200) throw new Error(`list failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`)
    if (record) {
      times[kind]!.push(elapsed)
      all.push(elapsed)
    }
    return body.pagination?.total_count ?? 0
  }
  for (let i = 0; i < 50; i++) await send(i, false)
  let matched = 0
  for (let i = 0; i < requestCount; i++) matched += await send(i, true)
  console.log(`app: ${describeTarget(target)}; ${requestCount} list requests one after another ` +
    `(mean ${Math.round(matched / requestCount)} matching patients each), page size 25`)
  for (const [kind, list] of Object.entries(times)) console.log(`  ${kind.padEnd(13)} ${summary(list)}`)
  console.log(`overall: ${summary(all)} → target p99 ≤ 50 ms ${latencySummary(all).p99 <= 50 ? "met" : "MISSED"}`)
}, { keepDatabase: flags.keep })
