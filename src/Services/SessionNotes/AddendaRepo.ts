/**
 * The only SQL on `session_note_addendums` (ARCHITECTURE "Persistence"): a reviewer's request for
 * changes to a note and the provider's answer. Rows are decoded with schemas; SQL errors are
 * defects. Who may read an addendum is its note's visibility, checked by the caller first.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

export const AddendumRow = Schema.Struct({
  id: Schema.Number,
  session_note_id: Schema.Number,
  instructions: Schema.String,
  instructions_response: NullText,
  signature_key: NullText,
  responded_signature_key: NullText,
  created_by_id: Schema.NullOr(Schema.Number),
  responded_by_id: Schema.NullOr(Schema.Number),
  responded_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type AddendumRow = typeof AddendumRow.Type

/** A stored signature image: its object key, the image's hash and the hash of the content it signs. */
export const StoredSignature = Schema.Struct({ key: Schema.String, sha256: Schema.String, content_sha256: Schema.String })
export type StoredSignature = typeof StoredSignature.Type

export const NewAddendum = Schema.Struct({
  session_note_id: Schema.Number,
  instructions: Schema.String,
  signature: Schema.NullOr(StoredSignature),
  created_by_id: Schema.Number
})
export type NewAddendum = typeof NewAddendum.Type

export const AddendumAnswer = Schema.Struct({
  id: Schema.Number,
  instructions_response: Schema.String,
  signature: Schema.NullOr(StoredSignature),
  responded_by_id: Schema.Number
})
export type AddendumAnswer = typeof AddendumAnswer.Type

const columns = `id, session_note_id, instructions, instructions_response, signature_key, responded_signature_key,
  created_by_id, responded_by_id, responded_at, created_at, updated_at`

const ById = Schema.Struct({ id: Schema.Number })
const One = Schema.Struct({})

export class AddendaRepo extends Effect.Service<AddendaRepo>()("app/AddendaRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const findOfNotes = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: AddendumRow,
      execute: (ids) => sql`SELECT ${cols} FROM session_note_addendums WHERE session_note_id IN ${sql.in(ids)} ORDER BY id`
    })

    const findOne = SqlSchema.findOne({
      Request: ById,
      Result: AddendumRow,
      execute: ({ id }) => sql`SELECT ${cols} FROM session_note_addendums WHERE id = ${id}`
    })

    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ addendum: NewAddendum, at: Timestamp }),
      Result: AddendumRow,
      execute: ({ addendum: a, at }) =>
        sql`INSERT INTO session_note_addendums (session_note_id, instructions, signature_key,
            signature_sha256, signed_content_sha256, signed_at, created_by_id)
          VALUES (${a.session_note_id}, ${a.instructions}, ${a.signature?.key ?? null}, ${a.signature?.sha256 ?? null},
            ${a.signature?.content_sha256 ?? null}, ${a.signature === null ? null : at}, ${a.created_by_id})
          RETURNING ${cols}`
    })

    const answerOne = SqlSchema.single({
      Request: Schema.Struct({ answer: AddendumAnswer, at: Timestamp }),
      Result: AddendumRow,
      execute: ({ answer: a, at }) =>
        sql`UPDATE session_note_addendums SET instructions_response = ${a.instructions_response},
            responded_signature_key = ${a.signature?.key ?? null}, responded_signature_sha256 = ${a.signature?.sha256 ?? null},
            responded_content_sha256 = ${a.signature?.content_sha256 ?? null},
            responded_signed_at = ${a.signature === null ? null : at},
            responded_by_id = ${a.responded_by_id}, responded_at = ${at}, updated_at = ${at}
          WHERE id = ${a.id} RETURNING ${cols}`
    })

    const findOpen = SqlSchema.findOne({
      Request: ById,
      Result: One,
      execute: ({ id }) => sql`SELECT 1 FROM session_note_addendums WHERE session_note_id = ${id} AND responded_at IS NULL`
    })

    return {
      /** The addenda of the notes, by id. */
      ofNotes: (noteIds: ReadonlyArray<number>) => noteIds.length === 0 ? Effect.succeed([]) : orDefect(findOfNotes(noteIds)),
      findById: (id: number) => orDefect(findOne({ id })),
      /** A reviewer's request, signed (at the clock's instant) when it carries a signature. */
      insert: (addendum: NewAddendum) => Effect.flatMap(now, (at) => insertOne({ addendum, at })).pipe(orDefect),
      /** The provider's answer, at the clock's instant. */
      answer: (answer: AddendumAnswer) => Effect.flatMap(now, (at) => answerOne({ answer, at })).pipe(orDefect),
      /** Whether the note has an addendum not yet answered. */
      hasOpen: (noteId: number) => Effect.map(orDefect(findOpen({ id: noteId })), (row) => row._tag === "Some")
    } as const
  })
}) {}
