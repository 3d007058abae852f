/** The only SQL on `content_files` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"

export const NewContentFile = Schema.Struct({
  object_key: Schema.String,
  filename: Schema.String,
  content_type: Schema.String,
  size: Schema.Number,
  created_by_id: Schema.Number
})

export class ContentFilesRepo extends Effect.Service<ContentFilesRepo>()("app/ContentFilesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: NewContentFile,
      execute: (file) => sql`INSERT INTO content_files ${sql.insert(file)}`
    })

    const findKnown = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ object_key: Schema.String }),
      execute: (keys) => sql`SELECT object_key FROM content_files WHERE object_key IN ${sql.in(keys)}`
    })

    return {
      insert: (file: typeof NewContentFile.Type) => orDefect(insert(file)),
      /** Which of `keys` name a stored file. */
      known: (keys: ReadonlyArray<string>) =>
        keys.length === 0
          ? Effect.succeed(new Set<string>())
          : Effect.map(orDefect(findKnown(keys)), (rows) => new Set(rows.map((row) => row.object_key)))
    } as const
  })
}) {}
