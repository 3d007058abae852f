/**
 * The only SQL on `patient_documents` (ARCHITECTURE "Persistence"): the rows that make a patient's
 * files in the ObjectStore reachable. Rows are decoded with schemas; SQL errors are defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const DocumentRow = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  content_type: Schema.String,
  /** A `bigint`: node-postgres reads it as text. */
  size: Schema.Union(Schema.Number, Schema.NumberFromString),
  /** Clinical content: hidden from front desk and billing. */
  clinical: Schema.Boolean,
  object_key: Schema.String,
  uploaded_by_id: Schema.NullOr(Schema.Int),
  created_at: Schema.DateFromSelf
})
export type DocumentRow = typeof DocumentRow.Type

const NewDocument = Schema.Struct({
  patientId: Schema.Number,
  name: Schema.String,
  contentType: Schema.String,
  size: Schema.Number,
  clinical: Schema.Boolean,
  objectKey: Schema.String,
  uploadedById: Schema.Number
})
export type NewDocument = typeof NewDocument.Type

const columns = "id, name, content_type, size, clinical, object_key, uploaded_by_id, created_at"

export class PatientDocumentsRepo extends Effect.Service<PatientDocumentsRepo>()("app/PatientDocumentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)

    /** All documents, or (`includeClinical` false) only those not marked clinical. */
    const shown = (includeClinical: boolean) => includeClinical ? sql`TRUE` : sql`NOT clinical`

    const newestFirst = { created_at: sql`created_at` }
    const list = (patientId: number, includeClinical: boolean, page: PageRequest) =>
      listPage({
        select: cols,
        from: sql`patient_documents`,
        row: DocumentRow,
        filters: [sql`patient_id = ${patientId}`, shown(includeClinical)],
        sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`id` }
      }, page)
    const insertOne = SqlSchema.single({
      Request: NewDocument,
      Result: DocumentRow,
      execute: (d) =>
        sql`INSERT INTO patient_documents (patient_id, name, content_type, size, clinical, object_key, uploaded_by_id)
          VALUES (${d.patientId}, ${d.name}, ${d.contentType}, ${d.size}, ${d.clinical}, ${d.objectKey}, ${d.uploadedById})
          RETURNING ${cols}`
    })
    const deleteOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, patientId: Schema.Number, includeClinical: Schema.Boolean }),
      Result: Schema.Struct({ object_key: Schema.String }),
      execute: ({ id, includeClinical, patientId }) =>
        sql`DELETE FROM patient_documents WHERE id = ${id} AND patient_id = ${patientId} AND ${shown(includeClinical)}
          RETURNING object_key`
    })

    return {
      /** One page of the patient's documents (clinical ones only when `includeClinical`), newest first, with its pagination. */
      list,
      insert: (document: NewDocument) => orDefect(insertOne(document)),
      /** The deleted row's object key; none when the patient has no such document (or it is clinical and `includeClinical` is false). */
      delete: (id: number, patientId: number, includeClinical: boolean) => orDefect(deleteOne({ id, patientId, includeClinical }))
    } as const
  })
}) {}
