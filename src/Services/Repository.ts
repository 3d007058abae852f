/**
 * What every repository shares (ARCHITECTURE "Persistence"). A repository's statements fail only
 * with the domain errors it maps (unique, foreign-key and exclusion violations); any other SQL
 * error, and a row that does not decode, is a bug or an outage and becomes a defect here, once.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Cause, Effect, ParseResult } from "effect"

type Unexpected = SqlError.SqlError | ParseResult.ParseError | Cause.NoSuchElementException

const isUnexpected = (error: unknown): error is Unexpected =>
  error instanceof SqlError.SqlError || ParseResult.isParseError(error) || Cause.isNoSuchElementException(error)

/** SQL errors, undecodable rows and a missing `single` row become defects. */
export const orDefect = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Unexpected>, R> =>
  Effect.catchIf(effect, (error): error is Extract<E, Unexpected> => isUnexpected(error), (error) => Effect.die(error)) as Effect.Effect<
    A,
    Exclude<E, Unexpected>,
    R
  >

/**
 * `transaction(effect)` runs `effect` in one transaction (nested calls become savepoints).
 * Services use it to make the statements of several repositories one change; a failed commit is
 * a defect. Taken once when a service is built, so its methods need no `SqlClient`.
 */
export const makeTransaction = Effect.map(SqlClient.SqlClient, (sql) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Unexpected>, R> => orDefect(sql.withTransaction(effect)))
