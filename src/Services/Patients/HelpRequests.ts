/** Help requests (general §4.2, issue 13): a family's questions, emailed to the clinic's support inbox. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { messages, ServiceUnavailable, unavailableRetryAfterSeconds } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { HelpRequestList, type CreateHelpRequestRequest } from "../../Api/Patients/HelpRequests.js"
import { HelpRequest } from "../../Domain/Patients/Records.js"
import { AppConfig } from "../AppConfig.js"
import { Mailer } from "../Mailer.js"
import { Access, type Viewer } from "../Access/Access.js"

const columns = "id, patient_id, user_id, subject, message, status, created_at, updated_at"
type Row = ConstructorParameters<typeof HelpRequest>[0]

export class HelpRequests extends Effect.Service<HelpRequests>()("app/HelpRequests", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const cols = sql.literal(columns)

    const list = (viewer: Viewer, patientId: number | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, patientId)
        const rows = yield* sql<Row>`SELECT ${cols} FROM help_requests WHERE patient_id = ${patient}
          ORDER BY created_at DESC, id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM help_requests WHERE patient_id = ${patient}`
        return HelpRequestList.make({
          help_requests: rows.map((r) => HelpRequest.make(r, true)),
          pagination: paginationOf(request, counted?.count ?? 0)
        }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("HelpRequests.list"))

    /**
     * Recorded and mailed in one transaction: a request the clinic was not told about is not kept
     * (the family gets a 503 and sends it again). The mail names the request, not its content:
     * the message is health information and stays in the API.
     */
    const create = (viewer: Viewer, input: CreateHelpRequestRequest["help_request"]) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, input.patient_id)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<Row>`INSERT INTO help_requests (patient_id, user_id, subject, message)
            VALUES (${patient}, ${viewer.id}, ${input.subject.trim()}, ${input.message.trim()}) RETURNING ${cols}`
          yield* mailer.send({
            to: [config.clinicSupportEmail],
            subject: `Help request #${row!.id}`,
            text: [
              `A family has sent help request #${row!.id} about patient #${patient}.`,
              "Open it in the clinic application to read and answer it."
            ].join("\n\n")
          }).pipe(Effect.catchTag("MailError", (error) =>
            Effect.logWarning("help request email not delivered").pipe(
              Effect.annotateLogs({ "help_request.id": row!.id, reason: error._tag }),
              Effect.zipRight(Effect.fail(new ServiceUnavailable({ errors: messages.unavailable, retryAfterSeconds: unavailableRetryAfterSeconds })))
            )))
          return HelpRequest.make(row!, true)
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("HelpRequests.create"))

    return { list, create } as const
  }),
  dependencies: [Access.Default]
}) {}
