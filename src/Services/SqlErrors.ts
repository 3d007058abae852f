/**
 * PostgreSQL errors a caller can act on (ARCHITECTURE "Persistence": unique, foreign-key and
 * exclusion violations become domain errors; every other SQL error is a defect).
 */
import { SqlError } from "@effect/sql"
import { Effect } from "effect"

/** A unique violation (SQLSTATE 23505), of `constraint` when one is named. */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  if (!(error instanceof SqlError.SqlError)) return false
  const cause = error.cause as { code?: unknown; constraint?: unknown } | null | undefined
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
}

const sqlStateOf = (error: unknown): { code?: unknown; constraint?: unknown } | undefined =>
  error instanceof SqlError.SqlError ? (error.cause as { code?: unknown; constraint?: unknown } | null | undefined) ?? undefined : undefined

/** An exclusion-constraint violation (SQLSTATE 23P01), of `constraint` when one is named. */
export const isExclusionViolation = (error: unknown, constraint?: string): boolean => {
  const cause = sqlStateOf(error)
  return cause?.code === "23P01" && (constraint === undefined || cause.constraint === constraint)
}

/** A foreign-key violation (SQLSTATE 23503), of `constraint` when one is named. */
export const isForeignKeyViolation = (error: unknown, constraint?: string): boolean => {
  const cause = sqlStateOf(error)
  return cause?.code === "23503" && (constraint === undefined || cause.constraint === constraint)
}

/** A check-constraint violation (SQLSTATE 23514), of `constraint` when one is named. */
export const isCheckViolation = (error: unknown, constraint?: string): boolean => {
  const cause = sqlStateOf(error)
  return cause?.code === "23514" && (constraint === undefined || cause.constraint === constraint)
}

/** A deadlock PostgreSQL broke by aborting this transaction (SQLSTATE 40P01). */
export const isDeadlock = (error: unknown): boolean => sqlStateOf(error)?.code === "40P01"

/**
 * Runs `transaction` again when PostgreSQL aborted it to break a deadlock (up to 3 more times):
 * the other side has committed or rolled back by then, so the run sees its outcome (a constraint
 * violation, say) instead of a 500. Only for a whole transaction that has no effect outside the
 * database.
 */
export const retryDeadlocks = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(transaction, { while: isDeadlock, times: 3 })
