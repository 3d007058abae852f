/**
 * What every repository shares (ARCHITECTURE "Persistence"). A repository's statements fail only
 * with the domain errors it maps (unique, foreign-key and exclusion violations); any other SQL
 * error, and a row that does not decode, is a bug or an outage and becomes a defect here, once.
 */
import { SqlClient, SqlError, SqlSchema as EffectSqlSchema, type Statement } from "@effect/sql"
import { Cause, Effect, ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import { now } from "./Time.js"

/**
 * `@effect/sql`'s `SqlSchema` constructors, with the same signatures, compiling their request
 * encoder and result decoder on a statement's first run instead of when the repository is built.
 * Repositories declare some 400 statements at start-up and a process runs few of them: compiled
 * eagerly, their parsers were ~3 MB of idle heap (bench:startup). Repositories build every
 * statement with these; an ESLint rule keeps `@effect/sql`'s own out of src.
 */
const onFirstRun = <O, F extends (request: never) => unknown>(make: (options: O) => F) => (options: O): F => {
  let statement: F | undefined
  return ((request: never) => (statement ??= make(options))(request)) as F
}

export const SqlSchema: {
  readonly findAll: typeof EffectSqlSchema.findAll
  readonly findOne: typeof EffectSqlSchema.findOne
  readonly single: typeof EffectSqlSchema.single
  readonly void: typeof EffectSqlSchema.void
} = {
  findAll: onFirstRun(EffectSqlSchema.findAll),
  findOne: onFirstRun(EffectSqlSchema.findOne),
  single: onFirstRun(EffectSqlSchema.single),
  void: onFirstRun(EffectSqlSchema.void)
}

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
 * The recovery sweep's one statement shape (./Recovery.ts, which has no services): fails the rows
 * of `table` (aliased `r`) that `where` selects, writing `set` and `updated_at` from the Effect
 * clock; how many. Each area gives its failure columns and its condition: how long a row may sit
 * unmoved (the database's clock, see `staleCutoff`) and who could still finish it.
 */
export const failStale = (statement: (sql: SqlClient.SqlClient) => {
  readonly table: string
  readonly set: Statement.Fragment
  readonly where: Statement.Fragment
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { set, table, where } = statement(sql)
    const failed = yield* SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (at) => sql`UPDATE ${sql(table)} r SET ${set}, updated_at = ${at} WHERE ${where} RETURNING r.id`
    })(yield* now)
    return failed.length
  }).pipe(orDefect)

/**
 * A scope condition selected as a column (`… AS visible`): SQL answers null where a column it
 * compares is null, and only true lets the caller in.
 */
export const ScopeAnswer = Schema.transform(Schema.NullOr(Schema.Boolean), Schema.Boolean, {
  strict: true,
  decode: (answer) => answer === true,
  encode: (answer) => answer
})

/** Text a request gave, trimmed; blank (or absent) → null, so an empty filter or field means "none". */
export const blankToNull = (text: string | null | undefined): string | null => {
  const trimmed = text?.trim() ?? ""
  return trimmed === "" ? null : trimmed
}

/** A list of texts as a statement parameter (`${textArray(xs)}::text[]`): the driver's types want a mutable array. */
export const textArray = (items: ReadonlyArray<string>) => items as Array<string>

/**
 * `transaction(effect)` runs `effect` in one transaction (nested calls become savepoints).
 * Services use it to make the statements of several repositories one change; a failed commit is
 * a defect. Taken once when a service is built, so its methods need no `SqlClient`.
 */
export const makeTransaction = Effect.map(SqlClient.SqlClient, (sql) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Unexpected>, R> => orDefect(sql.withTransaction(effect)))

/**
 * A statement the repository sends as a named (prepared) statement: PostgreSQL parses and plans it
 * once per connection instead of on every call, which is most of the server's work for a short
 * fixed-shape statement (the token lookup, a load by primary key, the audit insert). Only for
 * those: a search or list statement must stay unnamed, since a prepared statement may switch to a
 * generic plan that ignores its parameters' values (a patient search became 8.8× slower).
 *
 * `@effect/sql-pg` sends every statement unnamed (`client.query(text, values)`); this runs the
 * statement through the same connection (the transaction's, inside one), span and error as a plain
 * statement, as `client.query({ name, text, values })`. The name is `label` plus a hash of the
 * text, so each text gets its own name. A connection that cannot take a name (another driver)
 * runs it unnamed. Rows are returned as the driver gives them (this client transforms no names).
 */
export const prepared = (label: string) =>
<A extends object = Row>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  (statement as unknown as StatementInternals<A>).withConnection("execute", (connection, text, params) =>
    typeof connection.runWithClient !== "function"
      ? connection.execute(text, params, undefined)
      : connection.runWithClient((client, resume) => {
        client.query({ name: statementName(label, text), text, values: params as Array<unknown> }, (error, result) => {
          resume(error
            ? Effect.fail(new SqlError.SqlError({ cause: error, message: "Failed to execute statement" }))
            : Effect.succeed((result?.rows ?? []) as ReadonlyArray<A>))
        })
      }))

type Row = Record<string, unknown>

/** What `prepared` uses of a statement and a `@effect/sql-pg` connection (not part of their public types). */
interface PgConnection {
  readonly execute: (text: string, params: ReadonlyArray<unknown>, transformRows: undefined) => Effect.Effect<ReadonlyArray<any>, SqlError.SqlError>
  readonly runWithClient?: <A>(
    f: (client: PgQueryable, resume: (effect: Effect.Effect<A, SqlError.SqlError>) => void) => void
  ) => Effect.Effect<A, SqlError.SqlError>
}
interface PgQueryable {
  readonly query: (
    config: { readonly name: string | undefined; readonly text: string; readonly values: Array<unknown> },
    callback: (error: Error | null, result: { readonly rows?: ReadonlyArray<unknown> } | undefined) => void
  ) => void
}
interface StatementInternals<A> {
  readonly withConnection: (
    operation: string,
    f: (connection: PgConnection, text: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
}

/** Statement texts seen, by name; bounded, so a statement whose text varies cannot fill the server's memory. */
const names = new Map<string, string>()
const maxNames = 256
const statementName = (label: string, text: string): string | undefined => {
  let name = names.get(text)
  if (name === undefined) {
    if (names.size >= maxNames) return undefined
    name = `${label}_${createHash("sha1").update(text).digest("hex").slice(0, 12)}`
    names.set(text, name)
  }
  return name
}
