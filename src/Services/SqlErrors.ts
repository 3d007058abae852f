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
