/**
 * The fuzz campaign: `runs` generated requests, round-robin over every operation of the document
 * (the first round valid requests, the second hostile ones, then a mix), each from callers of its
 * own, in batches that share other users as targets. Every response is checked; every failure
 * keeps the seed, the case number and the request. The telemetry is scanned after each batch.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import { type Case, caseArbitrary, type Kind, tokensOf } from "./cases.js"
import type { Violation } from "./checks.js"
import { exchange } from "./exchange.js"
import type { GenerationContext } from "./generate.js"
import type { Harness } from "./harness.js"
import { describeHits, type TelemetryScan } from "./telemetry.js"
import { makeSeeder, type World } from "./world.js"

export interface CampaignOptions {
  readonly seed: number
  readonly runs: number
  /** Requests in flight at once. */
  readonly concurrency?: number
  /** Requests per world. */
  readonly batchSize?: number
  readonly onProgress?: (sent: number, failures: number) => void
}

export interface Failure extends Violation {
  readonly operation: string
  readonly variant: string
  readonly seed: number
  readonly caseIndex: number
  readonly request: string
  readonly response: string
}

export interface CampaignReport {
  readonly seed: number
  readonly requests: number
  readonly statuses: ReadonlyMap<number, number>
  /** Cases per operation id and kind (`valid` / `hostile`), and the statuses they got. */
  readonly coverage: ReadonlyMap<string, { valid: number; hostile: number; statuses: Map<number, number> }>
  readonly variants: ReadonlyMap<string, number>
  readonly failures: ReadonlyArray<Failure>
  readonly failureCount: number
  readonly telemetry: TelemetryScan
  readonly durationMs: number
}

/** Failures kept in full; the rest are only counted. */
const keptFailures = 200

/** The seed of one case: the campaign's seed and the case's number, mixed. */
export const caseSeed = (seed: number, index: number): number => (Math.imul(seed ^ 0x5bd1e995, 0x01000193) + Math.imul(index + 1, 0x9e3779b1)) | 0

/** Which operation and kind of request case `index` is. */
export const planCase = (harness: Harness, index: number) => {
  const count = harness.operations.length
  const kind: Kind = index < count ? "valid" : index < 2 * count ? "hostile" : "any"
  return { operation: harness.operations[index % count]!, kind }
}

/** Generation that draws ids mostly from records that exist, sometimes any id. */
export const generationContext = (
  harness: Harness,
  existingIds: ReadonlyArray<number>,
  known?: GenerationContext["known"]
): GenerationContext => ({
  document: harness.document,
  pii: harness.pii,
  ...(known === undefined ? {} : { known }),
  ids: existingIds.length === 0 ? fc.integer({ min: 1, max: 2_000_000 }) : fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...existingIds) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 2_000_000 }) }
  )
})

/** Case `index` of the campaign with `seed`, generated for `world`. */
export const generateCase = (harness: Harness, world: World, seed: number, index: number, password?: string): Case => {
  const { kind, operation } = planCase(harness, index)
  const known = password === undefined ? undefined : { emails: world.emails, password }
  const arbitrary = caseArbitrary(operation, generationContext(harness, [...world.userIds, ...(world.recordIds ?? [])], known), harness.tokenHeaders, kind)
  return fc.sample(arbitrary, { seed: caseSeed(seed, index), numRuns: 1 })[0]!
}

/** Sends case `caseIndex` and checks the response; each violation becomes a failure that says how to reproduce it. */
export const runCase = (harness: Harness, world: World, testCase: Case, seed: number, caseIndex: number) =>
  Effect.map(exchange(harness, testCase, tokensOf(world)), (outcome) => ({
    status: outcome.received?.status,
    failures: outcome.violations.map((v): Failure => ({
      ...v,
      operation: testCase.operation.id,
      variant: testCase.variant,
      seed,
      caseIndex,
      request: outcome.request,
      response: outcome.response
    }))
  }))

export const runCampaign = (harness: Harness, options: CampaignOptions): Effect.Effect<CampaignReport, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const started = performance.now()
    const concurrency = options.concurrency ?? 4
    const batchSize = options.batchSize ?? 100
    const seeder = yield* makeSeeder(harness.pii, options.seed)
    const statuses = new Map<number, number>()
    const variants = new Map<string, number>()
    const coverage = new Map(harness.operations.map((o) => [o.id, { valid: 0, hostile: 0, statuses: new Map<number, number>() }]))
    const failures: Array<Failure> = []
    let failureCount = 0
    let sent = 0
    for (let start = 0; start < options.runs; start += batchSize) {
      yield* seeder.resetThrottles
      const others = yield* seeder.others
      const records = yield* seeder.records
      const indexes = Array.from({ length: Math.min(batchSize, options.runs - start) }, (_, i) => start + i)
      yield* Effect.forEach(indexes, (index) =>
        Effect.gen(function*() {
          const world = yield* seeder.world(others, records)
          const testCase = generateCase(harness, world, options.seed, index, seeder.password)
          const outcome = yield* runCase(harness, world, testCase, options.seed, index)
          sent++
          if (outcome.status !== undefined) statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1)
          variants.set(testCase.variant, (variants.get(testCase.variant) ?? 0) + 1)
          const counts = coverage.get(testCase.operation.id)!
          if (testCase.variant === "valid") counts.valid++
          else counts.hostile++
          if (outcome.status !== undefined) counts.statuses.set(outcome.status, (counts.statuses.get(outcome.status) ?? 0) + 1)
          failureCount += outcome.failures.length
          failures.push(...outcome.failures.slice(0, Math.max(0, keptFailures - failures.length)))
        }), { concurrency, discard: true })
      harness.telemetry.scan(harness.secrets)
      options.onProgress?.(sent, failureCount)
    }
    const telemetry = harness.telemetry.scan(harness.secrets)
    return {
      seed: options.seed,
      requests: sent,
      statuses,
      coverage,
      variants,
      failures,
      failureCount,
      telemetry,
      durationMs: performance.now() - started
    }
  })

/** The report as text: figures first, then each class of failure with one example. */
export const formatReport = (report: CampaignReport): string => {
  const byClass = new Map<string, Array<Failure>>()
  for (const failure of report.failures) {
    const key = `${failure.check} — ${failure.operation}`
    byClass.set(key, [...(byClass.get(key) ?? []), failure])
  }
  const statuses = (counts: ReadonlyMap<number, number>) => [...counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(", ")
  const lines = [
    `seed ${report.seed}: ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s`,
    `statuses: ${statuses(report.statuses)}`,
    ...[...report.coverage].map(([id, c]) => `  ${id.padEnd(32)} ${String(c.valid).padStart(5)} valid ${String(c.hostile).padStart(6)} hostile   ${statuses(c.statuses)}`),
    `variants: ${[...report.variants].sort(([a], [b]) => a.localeCompare(b)).map(([v, n]) => `${v} ${n}`).join(", ")}`,
    `failures: ${report.failureCount}${report.failureCount > report.failures.length ? ` (the first ${report.failures.length} kept)` : ""}`,
    `telemetry: ${report.telemetry.spans} spans and ${report.telemetry.logLines} log lines scanned, ${report.telemetry.hits.length} hits`
  ]
  for (const [key, list] of byClass) {
    const example = list[0]!
    lines.push("", `✗ ${key} (${list.length}): ${example.message}`,
      `  reproduce: seed ${example.seed}, case ${example.caseIndex}`, example.request.replace(/^/gm, "  "), `  → ${example.response}`)
  }
  if (report.telemetry.hits.length > 0) lines.push("", "telemetry hits:", ...describeHits(report.telemetry.hits.slice(0, 20)))
  return lines.join("\n")
}
