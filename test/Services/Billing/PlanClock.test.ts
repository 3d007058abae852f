/**
 * State timestamps come from the Effect clock (src/Services/Time.ts), not SQL `now()`: under a
 * TestClock set far from the wall clock, an update's `updated_at` is the clock's instant.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { InsurancePlansRepo } from "../../../src/Services/Billing/InsurancePlansRepo.js"
import { TestSqlLive } from "../../support/database.js"

const Repos = InsurancePlansRepo.Default.pipe(Layer.provideMerge(TestSqlLive))

describe("repository clock", () => {
  layer(Repos, { timeout: 60_000 })((it) => {
    it.effect("an insurance plan's update takes updated_at from the Effect clock", () =>
      Effect.gen(function*() {
        const repo = yield* InsurancePlansRepo
        const plan = yield* repo.insert({ name: "Clock Health", payer_id: "CLK01", claim_filing_indicator: "CI", active: true })
        const later = Date.UTC(2031, 0, 2, 3, 4, 5)
        yield* TestClock.setTime(later)
        const updated = yield* repo.update({ id: plan.id, name: "Clock Health 2", payer_id: null, claim_filing_indicator: null, active: null })
        expect(Option.map(updated, (p) => new Date(p.updated_at).getTime())).toEqual(Option.some(later))
        // The insert kept the database's default: the two differ by years, not by the clock's drift.
        expect(new Date(plan.updated_at).getTime()).not.toEqual(later)
      }))
  })
})
