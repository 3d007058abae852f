/**
 * Race mode: for every operation, one valid request sent many times at once (20 by default).
 * Two rounds:
 * - **one caller**: the very same request (same caller, same target, same body) 20 times at once;
 * - **fresh callers**: 20 requests at once, each with callers, target, fixture and values of its
 *   own (drawn from a seed of its own: a request may consume what it uses, a session on sign-out,
 *   a code on confirmation, an email on registration), so every copy would succeed alone.
 * Every response passes every check of the campaign (never a 5xx, declared statuses, documented
 * bodies, no leaks). An operation with a single-use or uniqueness rule (`singleUse.ts`) must
 * succeed exactly once in the first round, and in the second refuse no copy but for a rate limit
 * (429): independent requests must not block each other. Fixtures (`fixtures.ts`) make the copies
 * requests that can succeed. The request of operation `i` is derived from the seed and `i` alone.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { type Case, type Caller, tokensOf, type Tokens } from "./cases.js"
import { caseSeed, generationContext } from "./campaign.js"
import type { Operation } from "./document.js"
import { exchange, type Outcome } from "./exchange.js"
import { type Fixture, fixtures as defaultFixtures, makeFixtureTools } from "./fixtures.js"
import { validDraft } from "./generate.js"
import type { Harness } from "./harness.js"
import type { Inbox } from "./inbox.js"
import { singleUseOf } from "./singleUse.js"
import type { Seeder, World } from "./world.js"

export const defaultRaceCopies = 20

export type RaceRound = "one caller" | "fresh callers"

export interface RaceFailure {
  readonly operation: string
  readonly round: RaceRound
  readonly check: string
  readonly message: string
  /** Copies that broke it. */
  readonly count: number
  readonly seed: number
  /** The operation's position in the document: with the seed, it regenerates the request. */
  readonly operationIndex: number
  readonly request: string
  readonly response: string
}

export interface RaceOptions {
  readonly harness: Harness
  readonly seeder: Seeder
  readonly inbox: Inbox
  readonly seed: number
  /** Identical requests sent at once (default 20). */
  readonly copies?: number
  /** Independent requests sent at once in the fresh-callers round (default: `copies`). */
  readonly freshCopies?: number
  /** Only these operation ids (default: every operation of the document). */
  readonly operations?: ReadonlyArray<string>
  readonly fixtures?: Readonly<Record<string, Fixture>>
}

export interface RaceReport {
  readonly seed: number
  readonly copies: number
  readonly freshCopies: number
  readonly operations: number
  readonly requests: number
  /** Operations with a single-use rule, and the rule. */
  readonly singleUse: ReadonlyMap<string, string>
  /** Per operation, the statuses each round got: `201 ×1, 422 ×19`. */
  readonly statuses: ReadonlyMap<string, Readonly<Record<RaceRound, string>>>
  readonly failures: ReadonlyArray<RaceFailure>
  readonly durationMs: number
}

/** The seed of operation `index`'s race request: apart from the campaign's case seeds. */
export const raceSeed = (seed: number, index: number): number => caseSeed(seed ^ 0x52_41_43_45, index)

/** Whom the copies come from: an admin (admitted everywhere) where a token is needed, else no one. */
export const raceCaller = (operation: Operation): Caller => (operation.tokenHeader === undefined ? "anonymous" : "admin")

const isSuccess = (status: number | undefined) => status !== undefined && status >= 200 && status < 300

/** `201 ×1, 500 ×19` */
export const statusSummary = (outcomes: ReadonlyArray<Outcome>): string => {
  const counts = new Map<string, number>()
  for (const o of outcomes) {
    const key = o.received === undefined ? "no response" : String(o.received.status)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s} ×${n}`).join(", ")
}

interface Copy {
  readonly testCase: Case
  readonly tokens: Tokens
}

export const runRace = (options: RaceOptions): Effect.Effect<RaceReport> =>
  Effect.gen(function*() {
    const started = performance.now()
    const { harness, inbox, seed, seeder } = options
    const copies = options.copies ?? defaultRaceCopies
    const freshCopies = options.freshCopies ?? copies
    const fixtures = options.fixtures ?? defaultFixtures
    // Fixtures call the Api with throttles forgotten first: one at a time, so one's calls do not use up another's allowance.
    const fixtureLock = yield* Effect.makeSemaphore(1)
    const failures: Array<RaceFailure> = []
    const statuses = new Map<string, Record<RaceRound, string>>()
    const singleUse = new Map<string, string>()
    let requests = 0
    let operations = 0

    for (const [operationIndex, operation] of harness.operations.entries()) {
      if (options.operations !== undefined && !options.operations.includes(operation.id)) continue
      operations++
      const rule = singleUseOf(operation)
      if (rule !== undefined) singleUse.set(operation.id, rule)
      const fixture = fixtures[operation.id]
      const fail = (round: RaceRound, check: string, message: string, count: number, example: Outcome | undefined) =>
        failures.push({
          operation: operation.id,
          round,
          check,
          message,
          count,
          seed,
          operationIndex,
          request: example?.request ?? "(not sent)",
          response: example?.response ?? ""
        })

      /**
       * A copy with a world of its own: fresh callers and the fixture's records. The world's parent
       * is the target (copies come from an admin or no one, so it never calls).
       */
      const prepare = (world: World, draftSeed: number) => Effect.gen(function*() {
        const target = world.principals.parent
        const context = { ...generationContext(harness, [target.id]), ids: fc.constant(target.id), plausible: true }
        const generated = fc.sample(validDraft(operation, context, harness.tokenHeaders), { seed: draftSeed, numRuns: 1 })[0]!
        const patch = fixture === undefined
          ? (d: typeof generated) => d
          : yield* fixtureLock.withPermits(1)(fixture(makeFixtureTools(harness, seeder, inbox, world)))
        const testCase: Case = {
          operation,
          caller: raceCaller(operation),
          badToken: "",
          variant: "race",
          draft: patch(generated),
          refusedByConstruction: false
        }
        return { testCase, tokens: tokensOf(world) } satisfies Copy
      })

      const fire = (round: RaceRound, batch: ReadonlyArray<Copy>) =>
        Effect.gen(function*() {
          yield* seeder.resetThrottles
          const outcomes = yield* Effect.forEach(batch, (copy) => exchange(harness, copy.testCase, copy.tokens), { concurrency: "unbounded" })
          requests += outcomes.length
          const summary = statusSummary(outcomes)
          // Every check of the campaign, one failure per class with how many copies broke it.
          const byCheck = new Map<string, { message: string; count: number; example: Outcome }>()
          for (const outcome of outcomes) {
            for (const violation of outcome.violations) {
              const seen = byCheck.get(violation.check)
              if (seen) seen.count++
              else byCheck.set(violation.check, { message: violation.message, count: 1, example: outcome })
            }
          }
          for (const [check, { count, example, message }] of byCheck) {
            fail(round, check, `${message} (${count} of ${outcomes.length}; statuses: ${summary})`, count, example)
          }
          if (rule !== undefined) {
            const successes = outcomes.filter((o) => isSuccess(o.received?.status))
            if (round === "one caller" && successes.length !== 1) {
              fail(round, "single use", `${rule}: ${successes.length} of ${outcomes.length} identical requests at once succeeded, expected exactly 1 (${summary})`,
                successes.length, successes[1] ?? outcomes[0])
            }
            const refused = outcomes.filter((o) => !isSuccess(o.received?.status) && o.received?.status !== 429)
            if (round === "fresh callers" && refused.length > 0) {
              fail(round, "independent requests refused",
                `${refused.length} of ${outcomes.length} requests at once, each with records of its own, were refused (${summary}); only a rate limit (429) may refuse them`,
                refused.length, refused[0])
            }
          }
          return summary
        })

      const one = yield* Effect.either(prepare(yield* seeder.world([]), raceSeed(seed, operationIndex)))
      const sameSummary = one._tag === "Left"
        ? (fail("one caller", "fixture", one.left.message, copies, undefined), "not sent")
        : yield* fire("one caller", Array.from({ length: copies }, () => one.right))
      // Each fresh copy is drawn from a seed of its own: independent requests (an invite's email differs).
      // Their worlds are written together (one statement for the users, one for their sessions).
      const freshWorlds = yield* seeder.worlds(freshCopies)
      const fresh = yield* Effect.either(Effect.forEach(freshWorlds, (world, k) => prepare(world, caseSeed(raceSeed(seed, operationIndex), k)), { concurrency: 4 }))
      const freshSummary = fresh._tag === "Left"
        ? (fail("fresh callers", "fixture", fresh.left.message, freshCopies, undefined), "not sent")
        : yield* fire("fresh callers", fresh.right)
      statuses.set(operation.id, { "one caller": sameSummary, "fresh callers": freshSummary })
    }
    return { seed, copies, freshCopies, operations, requests, singleUse, statuses, failures, durationMs: performance.now() - started }
  })

/** Each failure with the request that reproduces it; "" when there are none. */
export const formatRaceFailures = (failures: ReadonlyArray<RaceFailure>): string =>
  failures.map((f) =>
    [`✗ ${f.check} — ${f.operation} (${f.round}): ${f.message}`,
      `  reproduce: seed ${f.seed}, operation ${f.operationIndex} of the document`, f.request.replace(/^/gm, "  "), `  → ${f.response}`].join("\n")
  ).join("\n\n")

/** The report as text: each operation's statuses per round, then the failures. */
export const formatRaceReport = (report: RaceReport): string =>
  [
    `race mode, seed ${report.seed}: ${report.operations} operations × ${report.copies} identical and ${report.freshCopies} independent requests at once, ` +
    `${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s`,
    ...[...report.statuses].map(([id, s]) =>
      `  ${id.padEnd(32)}${report.singleUse.has(id) ? "[single use] " : ""}one caller: ${s["one caller"]}  |  fresh callers: ${s["fresh callers"]}`),
    `failures: ${report.failures.length}`,
    ...(report.failures.length > 0 ? ["", formatRaceFailures(report.failures)] : [])
  ].join("\n")
