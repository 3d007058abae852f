/**
 * The quality harness as a long campaign, outside vitest: `npm run fuzz -- --runs 10000 --seed 7`.
 * Same code as test/Harness.test.ts: the real app in-process with in-memory adapters, on a
 * database of its own (DATABASE_URL's server, or an embedded PostgreSQL as the tests start one),
 * then the fuzz campaign, the access matrix, the BOLA checks (family against family, staff against
 * staff), race mode (repeated with seeds S, S+1 …), oversize mode, and a telemetry scan. Prints the figures and every class of failure with
 * a request that reproduces it; exits 1 on any failure.
 *
 * Options: --runs N (default 10000), --seed S (default: the time), --concurrency C (default 4),
 * --race-repeats R (default 3), --latency-ms L (oversize mode's bound, default 2000).
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { benchDatabase, benchTempDir } from "../bench/support.js"
import { formatAccessFailures, runAccessMatrix } from "../test/harness/access.js"
import { HarnessApp } from "../test/harness/app.js"
import { formatBolaFailures, patients, runBola, users } from "../test/harness/bola.js"
import { ecmPatientFamilies } from "../test/harness/patients.js"
import { formatReport, runCampaign } from "../test/harness/campaign.js"
import { serverHarness } from "../test/harness/harness.js"
import { memoryInbox } from "../test/harness/inbox.js"
import { defaultLatencyBoundMs, formatOversizeReport, runOversize } from "../test/harness/oversize.js"
import { formatRaceReport, runRace } from "../test/harness/race.js"
import { formatBreakGlassSamples, formatStaffBolaFigures, runStaffBola } from "../test/harness/staff.js"
import { describeHits, Telemetry } from "../test/harness/telemetry.js"
import { makeSeeder } from "../test/harness/world.js"

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10000" },
    seed: { type: "string" },
    concurrency: { type: "string", default: "4" },
    "race-repeats": { type: "string", default: "3" },
    "latency-ms": { type: "string", default: String(defaultLatencyBoundMs) }
  }
})
const runs = Number(values.runs)
const seed = values.seed === undefined ? Date.now() % 2_147_483_647 : Number(values.seed)
const concurrency = Number(values.concurrency)
const raceRepeats = Number(values["race-repeats"])
const latencyBoundMs = Number(values["latency-ms"])
if (
  !Number.isInteger(runs) || runs <= 0 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency <= 0 ||
  !Number.isInteger(raceRepeats) || raceRepeats < 0 || !(latencyBoundMs > 0)
) {
  console.error("usage: npm run fuzz -- [--runs N] [--seed S] [--concurrency C] [--race-repeats R] [--latency-ms L]")
  process.exit(2)
}

/**
 * An empty database of the campaign's own (bench/support.ts: on DATABASE_URL's server, else on an
 * embedded one in a temporary directory), dropped with the directory at the end; the app migrates
 * it at start.
 */
const campaignDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const tmp = await benchTempDir("fuzz")
    return { tmp, database: await benchDatabase("fuzz", tmp.dir) }
  }),
  ({ database, tmp }) => Effect.promise(async () => {
    await database.release()
    await tmp.remove()
  })
).pipe(Effect.map(({ database }) => database.url))

const campaign = (telemetry: Telemetry) =>
  Effect.gen(function*() {
    const harness = yield* serverHarness(telemetry)
    console.log(`${harness.operations.length} operations in the document; seed ${seed}, ${runs} requests, concurrency ${concurrency}`)
    const report = yield* runCampaign(harness, {
      seed,
      runs,
      concurrency,
      onProgress: (sent, failures) => process.stderr.write(`\r${sent}/${runs} sent, ${failures} failures`)
    })
    process.stderr.write("\n")
    console.log(formatReport(report))

    const seeder = yield* makeSeeder(harness.pii, seed)
    const access = yield* runAccessMatrix(harness, seeder, seed)
    console.log(`\naccess matrix: ${access.operations} operations × 5 callers, ${access.failures.length} failures`)
    if (access.failures.length > 0) console.log(formatAccessFailures(access.failures))

    const families = ecmPatientFamilies(harness.pii, seed)
    const bola = yield* runBola({ harness, kinds: [patients(families), users], newParent: seeder.user({ role: "parent" }), seed })
    const scoped = [...bola.scoped].map(([kind, ops]) => `${kind}: ${ops.length}`).join(", ")
    console.log(`BOLA: scoped operations ${scoped}; ${bola.requests} requests, ${bola.failures.length} failures`)
    if (bola.failures.length > 0) console.log(formatBolaFailures(bola.failures))

    const staffBola = yield* runStaffBola({
      harness,
      seeder: families,
      newParent: seeder.user({ role: "parent" }),
      frontOffice: (staffRole) => seeder.user({ role: "staff", staffRole }),
      seed
    })
    console.log(formatStaffBolaFigures(staffBola))
    console.log(formatBreakGlassSamples(staffBola))
    if (staffBola.failures.length > 0) console.log(formatBolaFailures(staffBola.failures))

    const inbox = yield* memoryInbox
    let raceFailures = 0
    for (let repeat = 0; repeat < raceRepeats; repeat++) {
      const race = yield* runRace({ harness, seeder, inbox, seed: seed + repeat })
      console.log(`\n${formatRaceReport(race)}`)
      raceFailures += race.failures.length
    }

    const oversize = yield* runOversize({ harness, seeder, seed, latencyBoundMs })
    console.log(`\n${formatOversizeReport(oversize)}`)

    const scan = telemetry.scan(harness.secrets)
    console.log(`telemetry: ${scan.spans} spans and ${scan.logLines} log lines scanned for ${harness.secrets.size} generated values, ${scan.hits.length} hits`)
    for (const line of describeHits(scan.hits.slice(0, 50))) console.log(`  ${line}`)
    return report.failureCount + access.failures.length + bola.failures.length + staffBola.failures.length + raceFailures + oversize.failures.length + scan.hits.length
  })

const program = Effect.gen(function*() {
  const telemetry = new Telemetry()
  const app = HarnessApp({ databaseUrl: campaignDatabase, observability: telemetry.layer, underTestClock: false })
  return yield* campaign(telemetry).pipe(Effect.provide(app))
}).pipe(Effect.scoped)

const failures = await Effect.runPromise(program)
console.log(failures === 0 ? "\nno failures" : `\n${failures} failures`)
process.exit(failures === 0 ? 0 : 1)
