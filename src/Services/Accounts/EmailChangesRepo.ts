/**
 * The only SQL on `email_changes` (ARCHITECTURE "Persistence"): one pending change of email per
 * user, its code stored hashed. Each step is one atomic statement, so a code works once and
 * wrong codes stop at the limit even under concurrent requests.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

const Hash = Schema.Uint8ArrayFromSelf

const PendingChange = Schema.Struct({
  userId: Schema.Number,
  newEmail: Schema.String,
  codeHash: Hash,
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf
})

/** A try at a pending change: refused once `maxWrongAttempts` were wrong or it expired by `at`. */
const Attempt = Schema.Struct({ userId: Schema.Number, maxWrongAttempts: Schema.Int, at: Schema.DateFromSelf })

export class EmailChangesRepo extends Effect.Service<EmailChangesRepo>()("app/EmailChangesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = SqlSchema.void({
      Request: PendingChange,
      execute: (change) =>
        sql`INSERT INTO email_changes (user_id, new_email, code_hash, expires_at, failed_attempts, created_at)
          VALUES (${change.userId}, ${change.newEmail}, ${change.codeHash}, ${change.expiresAt}, 0, ${change.createdAt})
          ON CONFLICT (user_id) DO UPDATE SET new_email = EXCLUDED.new_email, code_hash = EXCLUDED.code_hash,
            expires_at = EXCLUDED.expires_at, failed_attempts = 0, created_at = EXCLUDED.created_at`
    })

    const claim = SqlSchema.findOne({
      Request: Schema.Struct({ ...Attempt.fields, codeHash: Hash }),
      Result: Schema.Struct({ new_email: Schema.String }),
      execute: ({ at, codeHash, maxWrongAttempts, userId }) =>
        sql`DELETE FROM email_changes
          WHERE user_id = ${userId} AND code_hash = ${codeHash} AND failed_attempts < ${maxWrongAttempts} AND expires_at > ${at}
          RETURNING new_email`
    })

    const countWrong = SqlSchema.findOne({
      Request: Attempt,
      Result: Schema.Struct({ user_id: Schema.Number }),
      execute: ({ at, maxWrongAttempts, userId }) =>
        sql`UPDATE email_changes SET failed_attempts = failed_attempts + 1
          WHERE user_id = ${userId} AND failed_attempts < ${maxWrongAttempts} AND expires_at > ${at}
          RETURNING user_id`
    })

    const failedAttempts = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ failed_attempts: Schema.Int }),
      execute: (userId) => sql`SELECT failed_attempts FROM email_changes WHERE user_id = ${userId}`
    })

    const deleteOf = SqlSchema.void({
      Request: Schema.Number,
      execute: (userId) => sql`DELETE FROM email_changes WHERE user_id = ${userId}`
    })

    return {
      /** Records the wanted email, replacing any earlier request, its code and its wrong tries. */
      upsert: (change: typeof PendingChange.Type) => orDefect(upsert(change)),
      /** Consumes the pending change if the code is its own and it is still open; the new email. */
      claim: (attempt: typeof Attempt.Type, codeHash: Uint8Array) =>
        Effect.map(orDefect(claim({ ...attempt, codeHash })), Option.map((row) => row.new_email)),
      /** Counts a wrong code against an open change; whether there was one to count. */
      countWrong: (attempt: typeof Attempt.Type) => Effect.map(orDefect(countWrong(attempt)), Option.isSome),
      /** The wrong tries of the pending change; None when there is none. */
      failedAttempts: (userId: number) => Effect.map(orDefect(failedAttempts(userId)), Option.map((row) => row.failed_attempts)),
      deleteOf: (userId: number) => orDefect(deleteOf(userId))
    } as const
  })
}) {}
