/** The only SQL on `claim_documents` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DocumentKind } from "../../Domain/Billing/Claim.js"
import { ClaimDocumentId, ClaimId } from "../../Domain/Ids.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

export const DocumentRow = Schema.Struct({
  id: ClaimDocumentId,
  claim_id: ClaimId,
  name: Schema.String,
  content_type: Schema.String,
  size: Schema.Int,
  kind: DocumentKind,
  object_key: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type DocumentRow = typeof DocumentRow.Type

const DocumentOf = Schema.Struct({ claimId: Schema.Number, id: Schema.Number })

export const NewDocument = Schema.Struct({
  claimId: Schema.Number,
  name: Schema.String,
  contentType: Schema.String,
  size: Schema.Int,
  kind: DocumentKind,
  objectKey: Schema.String,
  createdById: Schema.Number
})

export const DocumentChange = Schema.Struct({
  claimId: Schema.Number,
  id: Schema.Number,
  name: Schema.String,
  kind: DocumentKind,
  contentType: Schema.String,
  size: Schema.Int,
  objectKey: Schema.String
})

const ObjectKey = Schema.Struct({ object_key: Schema.String })

export class ClaimDocumentsRepo extends Effect.Service<ClaimDocumentsRepo>()("app/ClaimDocumentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOne = SqlSchema.findOne({
      Request: DocumentOf,
      Result: DocumentRow,
      execute: ({ claimId, id }) => sql`SELECT * FROM claim_documents WHERE id = ${id} AND claim_id = ${claimId}`
    })

    const findAllOf = SqlSchema.findAll({
      Request: Schema.Number,
      Result: DocumentRow,
      execute: (claimId) => sql`SELECT * FROM claim_documents WHERE claim_id = ${claimId} ORDER BY created_at, id`
    })

    const insertOne = SqlSchema.single({
      Request: NewDocument,
      Result: DocumentRow,
      execute: (d) =>
        sql`INSERT INTO claim_documents (claim_id, name, content_type, size, kind, object_key, created_by_id)
          VALUES (${d.claimId}, ${d.name}, ${d.contentType}, ${d.size}, ${d.kind}, ${d.objectKey}, ${d.createdById})
          RETURNING *`
    })

    const updateOne = SqlSchema.findOne({
      Request: Schema.Struct({ ...DocumentChange.fields, at: Schema.DateFromSelf }),
      Result: DocumentRow,
      execute: (d) =>
        sql`UPDATE claim_documents SET name = ${d.name}, kind = ${d.kind}, content_type = ${d.contentType}, size = ${d.size},
            object_key = ${d.objectKey}, updated_at = ${d.at}
          WHERE id = ${d.id} AND claim_id = ${d.claimId} RETURNING *`
    })

    const deleteOne = SqlSchema.findOne({
      Request: DocumentOf,
      Result: ObjectKey,
      execute: ({ claimId, id }) => sql`DELETE FROM claim_documents WHERE id = ${id} AND claim_id = ${claimId} RETURNING object_key`
    })

    const deleteAll = SqlSchema.findAll({
      Request: Schema.Number,
      Result: ObjectKey,
      execute: (claimId) => sql`DELETE FROM claim_documents WHERE claim_id = ${claimId} RETURNING object_key`
    })

    return {
      findOne: (claimId: number, id: number) => orDefect(findOne({ claimId, id })),
      /** The claim's documents, oldest first. */
      listOf: (claimId: number) => orDefect(findAllOf(claimId)),
      insert: (document: typeof NewDocument.Type) => orDefect(insertOne(document)),
      /** The document as changed, or none when it is gone. */
      update: (change: typeof DocumentChange.Type) => Effect.flatMap(now, (at) => orDefect(updateOne({ ...change, at }))),
      /** The removed document's object key, or none when there was none. */
      delete: (claimId: number, id: number) => orDefect(deleteOne({ claimId, id })),
      /** Deletes every document of a claim; their object keys, for the files to go after the commit. */
      deleteAllOf: (claimId: number) => Effect.map(orDefect(deleteAll(claimId)), (rows) => rows.map((row) => row.object_key))
    } as const
  })
}) {}
