/**
 * `npm run bench:edi`: 837P generation of a batch of 1,000 claims (target ≤ 2 s).
 *
 * 1. The generator alone: 1,000 claims (a third of them children under a guardian subscriber)
 *    written as an interchange and run through our structural checker, several times.
 * 2. End to end through the `EdiBatches` service, as `POST /v1/admin/clinic/claims/generate_edi`
 *    runs it: 1,000 ready claims locked and read with their patients, coverage, plans and
 *    providers, the file generated and checked, stored (local disk store, as `npm start`), the
 *    batch written and the claims moved to submitted, in one transaction. Rounds of fresh claims.
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_edi_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir. Flags: --claims (1000), --rounds (3).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { checkInterchange } from "../src/Domain/Billing/Edi/Check.js"
import { type EdiClaim, generate837P } from "../src/Domain/Billing/Edi/Claim837.js"
import { npiCheckDigit } from "../src/Domain/Providers/Npi.js"
import { AdaptersLive } from "../src/Layers/Adapters.js"
import { appConfig } from "../src/Layers/Config.js"
import { backendLayer } from "../src/Layers/Main.js"
import { AppConfig } from "../src/Services/AppConfig.js"
import { batchOf, EdiBatches } from "../src/Services/Billing/EdiBatches.js"
import { runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: { claims: { type: "string", default: "1000" }, rounds: { type: "string", default: "3" } }
})
const claimCount = Number(flags.claims)
const rounds = Number(flags.rounds)
const targetMs = 2000

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const fmt = (n: number) => `${n.toFixed(0)} ms`

// 1. The generator alone.
const address = { line1: "100 Main St", city: "Sacramento", state: "CA", zip: "95814" }
const claims: Array<EdiClaim> = Array.from({ length: claimCount }, (_, i) => ({
  claimNumber: `CLM${String(i + 1).padStart(8, "0")}`,
  amountCents: 10000 + (i % 97) * 25,
  placeOfService: i % 4 === 0 ? "10" : "11",
  diagnosisCodes: i % 10 === 0 ? ["F900", "F411", "Z6372", "F4310", "F5101", "F840", "F8181", "F952", "F430", "F4322", "F341", "R69"] : ["F329", "F411"],
  cptCode: "90837",
  modifiers: i % 4 === 0 ? ["95"] : [],
  serviceDate: "2026-01-05",
  patient: { firstName: "Pat", lastName: `Patient${i}`, dateOfBirth: i % 3 === 0 ? "2015-06-01" : "1990-02-03", gender: "F", address },
  coverage: {
    payerName: "Blue Shield", payerId: "94036", claimFilingIndicator: "BL", memberId: `M${i}`, groupNumber: "G1",
    relationship: i % 3 === 0 ? "child" : "self",
    subscriber: i % 3 === 0 ? { firstName: "Morgan", lastName: `Guardian${i}`, dateOfBirth: "1985-09-09", gender: "F", address } : null
  },
  renderingProvider: { npi: `98765432${i % 10}${npiCheckDigit(`98765432${i % 10}`)}`, firstName: "Avery", lastName: "Quinn" }
}))
const billing = (await Effect.runPromise(appConfig)).billing
const pure: Array<number> = []
let bytes = 0
for (let i = 0; i < 7; i++) {
  const start = process.hrtime.bigint()
  const text = generate837P(batchOf(billing, 1 + i, `EDI${i}`, new Date(), claims))
  const check = checkInterchange(text)
  pure.push(ms(start))
  bytes = text.length
  if (check.problems.length > 0) throw new Error(check.problems.join("; "))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`generator + checker, ${claimCount} claims (${(bytes / 1024).toFixed(0)} KiB): median ${fmt(median(pure))}, max ${fmt(Math.max(...pure))} (7 runs, first includes warm-up)`)

// 2. End to end through the service.
const seed = (round: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tag = `r${round}`
    // Ten providers with NPIs, one plan, patients (a third of them children with a guardian), completed appointments, ready claims.
    yield* sql`INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed)
      SELECT ${tag} || '.provider' || g || '@bench.test', 'x', 'Avery', 'Quinn' || g, 'provider', 'active', true FROM generate_series(1, 10) g`
    const providers = yield* sql<{ id: number }>`INSERT INTO providers (user_id, roles)
      SELECT u.id, ARRAY['provider'] FROM users u WHERE u.email LIKE ${`${tag}.provider%`} RETURNING id`
    for (const p of providers) {
      const nine = `${round}${String(p.id).padStart(8, "0")}`
      yield* sql`UPDATE providers SET npi = ${nine + npiCheckDigit(nine)} WHERE id = ${p.id}`
    }
    const [plan] = yield* sql<{ id: number }>`INSERT INTO insurance_plans (name, payer_id, claim_filing_indicator) VALUES ('Bench Plan', '94036', 'BL') RETURNING id`
    yield* sql`INSERT INTO patients (first_name, last_name, date_of_birth, gender, address, city, state, zip, member_id)
      SELECT 'Pat', 'Bench' || g, CASE WHEN g % 3 = 0 THEN date '2015-06-01' ELSE date '1990-02-03' END, 'F', '12 Oak Ave', 'Davis', 'CA', '95616',
        ${tag} || '-' || g FROM generate_series(1, ${claimCount}) g`
    yield* sql`INSERT INTO patient_coverages (patient_id, insurance_plan_id, member_id, relationship, subscriber_first_name, subscriber_last_name, subscriber_date_of_birth)
      SELECT p.id, ${plan!.id}, 'M' || p.id, CASE WHEN p.id % 3 = 0 THEN 'child' ELSE 'self' END,
        CASE WHEN p.id % 3 = 0 THEN 'Morgan' END, CASE WHEN p.id % 3 = 0 THEN 'Guardian' || p.id END, CASE WHEN p.id % 3 = 0 THEN date '1985-09-09' END
      FROM patients p WHERE p.member_id LIKE ${`${tag}-%`}`
    const providerIds = providers.map((p) => p.id)
    yield* sql`INSERT INTO appointments (patient_id, provider_id, scheduled_at, duration_minutes, status, appointment_type)
      SELECT p.id, (${providerIds as Array<number>}::int[])[1 + (p.id % 10)],
        timestamptz '2026-01-05 17:00Z' - make_interval(days => ${round * 30}) + make_interval(mins => (p.id / 10) * 5), 5, 'completed', 'therapy'
      FROM patients p WHERE p.member_id LIKE ${`${tag}-%`}`
    const ids = yield* sql<{ id: number }>`INSERT INTO claims (patient_id, provider_id, appointment_id, cpt_code, diagnosis_codes, service_date, amount, status)
      SELECT a.patient_id, a.provider_id, a.id, '90837', ARRAY['F329', 'F411'], (a.scheduled_at AT TIME ZONE 'America/Los_Angeles')::date,
        100 + (a.id % 97) * 0.25, 'ready'
      FROM appointments a JOIN patients p ON p.id = a.patient_id WHERE p.member_id LIKE ${`${tag}-%`} RETURNING id`
    return ids.map((r) => r.id)
  }).pipe(Effect.orDie)

const program = Effect.gen(function*() {
  const edi = yield* EdiBatches
  const timings: Array<number> = []
  for (let round = 1; round <= rounds; round++) {
    const ids = yield* seed(round)
    const start = process.hrtime.bigint()
    const batch = yield* edi.generate(1, ids, `bench ${round}`).pipe(Effect.orDie)
    const elapsed = ms(start)
    timings.push(elapsed)
    if (batch.claim_count !== claimCount) throw new Error(`batch has ${batch.claim_count} claims`)
    console.log(`round ${round}: ${batch.claim_count} claims, total ${batch.total_amount}, ${batch.batch_id}: ${fmt(elapsed)}`)
  }
  return timings
})

/** The app's configuration on the bench's database, DATA_DIR `dataDir`, the job worker off. */
const settings = (databaseUrl: string, dataDir: string) => Effect.map(appConfig, (base) => ({
  ...base,
  dataDir,
  databaseUrl: Option.some(Redacted.make(databaseUrl)),
  dbPoolSize: 4,
  bootstrapAdminEmail: Option.some("bench-admin@bench.test"),
  bootstrapAdminPassword: Option.some(Redacted.make("bench-password-1")),
  jobs: { ...base.jobs, enabled: false },
  logLevel: LogLevel.Warning
}))

runBench("edi", async (bench) => {
  const layer = backendLayer.pipe(
    Layer.provideMerge(AdaptersLive),
    Layer.provideMerge(Layer.effect(AppConfig, settings(bench.databaseUrl, path.join(bench.tmpDir, "data")))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
  const timings = await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped) as Effect.Effect<Array<number>>)
  const worst = Math.max(...timings)
  console.log(`end to end (service, disk store), ${claimCount} claims: median ${fmt(median(timings))}, max ${fmt(worst)} over ${rounds} rounds; target ≤ ${targetMs} ms: ${worst <= targetMs ? "met" : "MISSED"}`)
  if (worst > targetMs) process.exitCode = 1
})
