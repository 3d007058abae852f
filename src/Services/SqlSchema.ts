/**
 * `@effect/sql`'s `SqlSchema` constructors, with the same signatures, compiling their request
 * encoder and result decoder on a statement's first run instead of when the repository is built.
 * Repositories declare some 400 statements at start-up and a process runs few of them: compiled
 * eagerly, their parsers were ~3 MB of idle heap (bench:startup).
 */
import { SqlSchema } from "@effect/sql"

/** `make(options)` built on the first call of the statement, then reused. */
const onFirstRun = <O, F extends (request: never) => unknown>(make: (options: O) => F) => (options: O): F => {
  let statement: F | undefined
  return ((request: never) => (statement ??= make(options))(request)) as F
}

export const findAll: typeof SqlSchema.findAll = onFirstRun(SqlSchema.findAll)
export const findOne: typeof SqlSchema.findOne = onFirstRun(SqlSchema.findOne)
export const single: typeof SqlSchema.single = onFirstRun(SqlSchema.single)
const void_: typeof SqlSchema.void = onFirstRun(SqlSchema.void)
export { void_ as void }
