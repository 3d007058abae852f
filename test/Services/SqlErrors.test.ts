import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { retryDeadlocks } from "../../src/Services/SqlErrors.js"

const sqlError = (code: string) => new SqlError.SqlError({ cause: { code }, message: "Failed to execute statement" })

/** A transaction that fails with `codes` in turn, then succeeds; and how many times it ran. */
const flaky = (codes: ReadonlyArray<string>) => {
  let runs = 0
  const transaction = Effect.suspend(() => {
    const code = codes[runs++]
    return code === undefined ? Effect.succeed("done") : Effect.fail(sqlError(code))
  })
  return { transaction, runs: () => runs }
}

describe("retryDeadlocks", () => {
  it.effect("runs a transaction PostgreSQL aborted for a deadlock again, up to 3 more times", () =>
    Effect.gen(function*() {
      const twice = flaky(["40P01", "40P01"])
      expect(yield* retryDeadlocks(twice.transaction)).toBe("done")
      expect(twice.runs()).toBe(3)
      const always = flaky(["40P01", "40P01", "40P01", "40P01", "40P01"])
      const failed = yield* Effect.either(retryDeadlocks(always.transaction))
      expect(Either.isLeft(failed)).toBe(true)
      expect(always.runs()).toBe(4)
    }))

  it.effect("any other failure is not retried", () =>
    Effect.gen(function*() {
      const violation = flaky(["23P01"])
      const failed = yield* Effect.either(retryDeadlocks(violation.transaction))
      expect(Either.getLeft(failed).pipe((e) => e._tag === "Some" && (e.value.cause as { code: string }).code)).toBe("23P01")
      expect(violation.runs()).toBe(1)
    }))
})
