/**
 * The only SQL on `help_requests` (ARCHITECTURE "Persistence"): a family's questions about a
 * patient. Rows are decoded with schemas; SQL errors are defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { HelpRequestStatus } from "../../Domain/Patients/Records.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

export const HelpRequestRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  user_id: Schema.NullOr(Schema.Int),
  subject: Schema.String,
  message: Schema.String,
  status: HelpRequestStatus,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type HelpRequestRow = typeof HelpRequestRow.Type

const NewHelpRequest = Schema.Struct({ patientId: Schema.Number, userId: Schema.Number, subject: Schema.String, message: Schema.String })
export type NewHelpRequest = typeof NewHelpRequest.Type

const columns = "id, patient_id, user_id, subject, message, status, created_at, updated_at"

export class HelpRequestsRepo extends Effect.Service<HelpRequestsRepo>()("app/HelpRequestsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const cols = sql.literal(columns)

    const newestFirst = { created_at: sql`created_at` }
    const list = (patientId: number, page: PageRequest) =>
      listPage({
        select: cols,
        from: sql`help_requests`,
        row: HelpRequestRow,
        filters: [sql`patient_id = ${patientId}`],
        sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`id` }
      }, page)
    const insertOne = SqlSchema.single({
      Request: NewHelpRequest,
      Result: HelpRequestRow,
      execute: (r) =>
        sql`INSERT INTO help_requests (patient_id, user_id, subject, message)
            VALUES (${r.patientId}, ${r.userId}, ${r.subject}, ${r.message}) RETURNING ${cols}`
    })

    return {
      /** One page of the patient's help requests, newest first, with its pagination. */
      list,
      insert: (request: NewHelpRequest) => orDefect(insertOne(request))
    } as const
  })
}) {}
