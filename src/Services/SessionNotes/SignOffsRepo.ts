/**
 * The only SQL on `session_note_sign_offs` (ARCHITECTURE "Persistence"): a reviewer's signature
 * over a note's content, with the content's hash. Rows are decoded with schemas; SQL errors are
 * defects. Who may read a sign-off is its note's visibility, checked by the caller first.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

export const SignOffRow = Schema.Struct({
  id: Schema.Number,
  session_note_id: Schema.Number,
  reviewer_id: Schema.Number,
  review_date: Timestamp,
  instructions: NullText,
  signature_key: Schema.String,
  signed_content_sha256: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type SignOffRow = typeof SignOffRow.Type

/** A sign-off with its reviewer's name, for the PDF. */
export const NamedSignOffRow = Schema.Struct({ ...SignOffRow.fields, reviewer: Schema.String })
export type NamedSignOffRow = typeof NamedSignOffRow.Type

export const NewSignOff = Schema.Struct({
  session_note_id: Schema.Number,
  reviewer_id: Schema.Number,
  review_date: Timestamp,
  instructions: NullText,
  signature_key: Schema.String,
  signature_sha256: Schema.String,
  signed_content_sha256: Schema.String
})
export type NewSignOff = typeof NewSignOff.Type

/** Fields of a sign-off to change; an absent one keeps its value. */
export const SignOffChange = Schema.Struct({
  id: Schema.Number,
  instructions: Schema.optional(NullText),
  review_date: Schema.optional(Timestamp)
})
export type SignOffChange = typeof SignOffChange.Type

const columns = `id, session_note_id, reviewer_id, review_date, instructions, signature_key, signed_content_sha256,
  created_at, updated_at`

const ById = Schema.Struct({ id: Schema.Number })

export class SignOffsRepo extends Effect.Service<SignOffsRepo>()("app/SignOffsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const findOfNotes = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: SignOffRow,
      execute: (ids) => sql`SELECT ${cols} FROM session_note_sign_offs WHERE session_note_id IN ${sql.in(ids)} ORDER BY id`
    })

    const findNamed = SqlSchema.findAll({
      Request: ById,
      Result: NamedSignOffRow,
      execute: ({ id }) =>
        sql`SELECT ${sql.literal(columns.split(",").map((c) => `o.${c.trim()}`).join(", "))},
            u.first_name || ' ' || u.last_name AS reviewer
          FROM session_note_sign_offs o JOIN users u ON u.id = o.reviewer_id WHERE o.session_note_id = ${id} ORDER BY o.id`
    })

    const findOne = SqlSchema.findOne({
      Request: ById,
      Result: SignOffRow,
      execute: ({ id }) => sql`SELECT ${cols} FROM session_note_sign_offs WHERE id = ${id}`
    })

    const insertOne = SqlSchema.single({
      Request: NewSignOff,
      Result: SignOffRow,
      execute: (s) => sql`INSERT INTO session_note_sign_offs ${sql.insert(s)} RETURNING ${cols}`
    })

    const updateOne = SqlSchema.single({
      Request: Schema.Struct({ change: SignOffChange, at: Timestamp }),
      Result: SignOffRow,
      execute: ({ at, change: c }) =>
        sql`UPDATE session_note_sign_offs SET
            instructions = ${c.instructions === undefined ? sql`instructions` : sql`${c.instructions}`},
            review_date = ${c.review_date === undefined ? sql`review_date` : sql`${c.review_date}`},
            updated_at = ${at}
          WHERE id = ${c.id} RETURNING ${cols}`
    })

    const deleteOne = SqlSchema.void({
      Request: ById,
      execute: ({ id }) => sql`DELETE FROM session_note_sign_offs WHERE id = ${id}`
    })

    return {
      /** The sign-offs of the notes, by id. */
      ofNotes: (noteIds: ReadonlyArray<number>) => noteIds.length === 0 ? Effect.succeed([]) : orDefect(findOfNotes(noteIds)),
      /** The note's sign-offs with their reviewers' names. */
      namedOfNote: (noteId: number) => orDefect(findNamed({ id: noteId })),
      findById: (id: number) => orDefect(findOne({ id })),
      insert: (signOff: NewSignOff) => orDefect(insertOne(signOff)),
      /** Writes the given fields, `updated_at` from the clock. */
      update: (change: SignOffChange) => Effect.flatMap(now, (at) => updateOne({ change, at })).pipe(orDefect),
      delete: (id: number) => orDefect(deleteOne({ id }))
    } as const
  })
}) {}
