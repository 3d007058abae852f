/**
 * The access matrix: every operation called with a valid request by no one, by a bad token, by a
 * parent, by clinic staff and by an admin. Operations that require a token answer 401 without one
 * or with a bad one; admin-only operations answer non-admins 403 with the area's "Admin access
 * required" body; no one the operation admits is turned away for their role. Each operation gets
 * its own callers and its own target user, since an admin's call may delete it.
 */
import { Effect } from "effect"
import fc from "fast-check"
import type { Caller, Case } from "./cases.js"
import { caseSeed, generationContext } from "./campaign.js"
import type { Received } from "./checks.js"
import type { Area, Operation } from "./document.js"
import { exchange } from "./exchange.js"
import { validDraft } from "./generate.js"
import type { Harness } from "./harness.js"
import type { Seeder, World } from "./world.js"

/** Callers in the order they call: the admin last, as its call may delete the target. */
export const matrixCallers: ReadonlyArray<Caller> = ["anonymous", "bad token", "parent", "staff", "admin"]

export interface AccessFailure {
  readonly operation: string
  readonly caller: Caller
  readonly check: string
  readonly message: string
  readonly request: string
  readonly response: string
}

const adminRequired = "Admin access required"

/** The area's 403 for a non-admin (general §7: a string; ECM §7: a list with one message). */
export const adminRequiredBody = (area: Area) => (area === "ecm" ? { errors: [adminRequired] } : { errors: adminRequired })

/** The area's 403 for a parent on a staff-only operation. */
export const staffRequiredBody = (area: Area) => (area === "ecm" ? { errors: ["Staff access required"] } : { errors: "Staff access required" })

const isAdminRefusal = (received: Received) =>
  received.status === 403 && (["general", "ecm"] as const).some((area) => JSON.stringify(received.json) === JSON.stringify(adminRequiredBody(area)))

/** What the spec's access rules require of this caller on this operation; undefined when satisfied. */
export const accessProblem = (operation: Operation, caller: Caller, received: Received): string | undefined => {
  const needsToken = operation.tokenHeader !== undefined
  const signedIn = caller === "parent" || caller === "staff" || caller === "admin"
  if (needsToken && !signedIn) {
    return received.status === 401 ? undefined : `${caller}: expected 401, got ${received.status}`
  }
  if (operation.adminOnly && (caller === "parent" || caller === "staff")) {
    const expected = adminRequiredBody(operation.area)
    return received.status === 403 && JSON.stringify(received.json) === JSON.stringify(expected)
      ? undefined
      : `${caller} on an admin-only operation: expected 403 ${JSON.stringify(expected)}, got ${received.status} ${received.text.slice(0, 200)}`
  }
  if (operation.staffOnly && !operation.adminOnly && caller === "parent") {
    const expected = staffRequiredBody(operation.area)
    return received.status === 403 && JSON.stringify(received.json) === JSON.stringify(expected)
      ? undefined
      : `parent on a staff-only operation: expected 403 ${JSON.stringify(expected)}, got ${received.status} ${received.text.slice(0, 200)}`
  }
  if (needsToken && signedIn && received.status === 401) return `${caller}: a valid token was refused with 401`
  if (operation.staffOnly && (caller === "staff" || caller === "admin") && received.status === 403) return `${caller}: refused on a staff operation`
  if (signedIn && isAdminRefusal(received)) return `${caller}: refused as a non-admin on an operation open to them`
  return undefined
}

/** One operation through the whole matrix. */
const checkOperation = (harness: Harness, seeder: Seeder, seed: number, operation: Operation, index: number) =>
  Effect.gen(function*() {
    const target = yield* seeder.user({ role: "parent" })
    const world: World = yield* seeder.world([target])
    // Plausible values: the matrix is about roles, so no edge value (a year-0000 date) may end a
    // parent's call with 422 before the handler's role check answers 403.
    const context = { ...generationContext(harness, [target.id]), ids: fc.constant(target.id), plausible: true }
    const draft = fc.sample(validDraft(operation, context, harness.tokenHeaders), { seed: caseSeed(seed, index), numRuns: 1 })[0]!
    const failures: Array<AccessFailure> = []
    for (const caller of matrixCallers) {
      const testCase: Case = { operation, caller, badToken: "not-a-session-token-0000000000", variant: "valid", draft, refusedByConstruction: false }
      const outcome = yield* exchange(harness, testCase, (role) => world.principals[role].token)
      const problems = [
        ...outcome.violations,
        ...(outcome.received === undefined ? [] : [accessProblem(operation, caller, outcome.received)].filter((p) => p !== undefined).map((message) => ({ check: "access rule", message })))
      ]
      for (const problem of problems) {
        failures.push({ operation: operation.id, caller, ...problem, request: outcome.request, response: outcome.response })
      }
    }
    return failures
  })

export interface AccessReport {
  readonly operations: number
  readonly requests: number
  readonly failures: ReadonlyArray<AccessFailure>
}

export const runAccessMatrix = (harness: Harness, seeder: Seeder, seed: number): Effect.Effect<AccessReport> =>
  Effect.gen(function*() {
    yield* seeder.resetThrottles
    const failures = yield* Effect.forEach(harness.operations, (operation, index) => checkOperation(harness, seeder, seed, operation, index), { concurrency: 4 })
    return { operations: harness.operations.length, requests: harness.operations.length * matrixCallers.length, failures: failures.flat() }
  })

export const formatAccessFailures = (failures: ReadonlyArray<AccessFailure>): string =>
  failures.map((f) => `✗ ${f.operation} as ${f.caller}: ${f.check}: ${f.message}\n${f.request.replace(/^/gm, "  ")}\n  → ${f.response}`).join("\n\n")
