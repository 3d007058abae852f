/**
 * PostgreSQL errors a caller can act on (ARCHITECTURE "Persistence": unique, foreign-key and
 * exclusion violations become domain errors; every other SQL error is a defect).
 */
import { SqlError } from "@effect/sql"

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
