/**
 * The only SQL on `help_requests` (ARCHITECTURE "Persistence"): a family's questions about a
 * patient. Rows are decoded with schemas; SQL errors are defects.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { HelpRequestStatus } from "../../Domain/Patients/Records.js"
import { orDefect } from "../Repository.js"

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
    const cols = sql.literal(columns)

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ patientId: Schema.Number, limit: Schema.Int, offset: Schema.Int }),
      Result: HelpRequestRow,
      execute: ({ limit, offset, patientId }) =>
        sql`SELECT ${cols} FROM help_requests WHERE patient_id = ${patientId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`
    })
    const countOf = SqlSchema.single({
      Request: Schema.Number,
      Result: Schema.Struct({ count: Schema.Int }),
      execute: (patientId) => sql`SELECT count(*)::int AS count FROM help_requests WHERE patient_id = ${patientId}`
    })
    const insertOne = SqlSchema.single({
      Request: NewHelpRequest,
      Result: HelpRequestRow,
      execute: (r) =>
        sql`INSERT INTO help_requests (patient_id, user_id, subject, message)
            VALUES (${r.patientId}, ${r.userId}, ${r.subject}, ${r.message}) RETURNING ${cols}`
    })

    return {
      /** One page of the patient's help requests, newest first, and their count. */
      page: (patientId: number, limit: number, offset: number) =>
        orDefect(Effect.all({ rows: findPage({ patientId, limit, offset }), total: Effect.map(countOf(patientId), (c) => c.count) })),
      insert: (request: NewHelpRequest) => orDefect(insertOne(request))
    } as const
  })
}) {}
