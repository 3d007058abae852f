/** Help requests (general §4.2): a family's questions, emailed to the clinic's support inbox. */
import { Effect } from "effect"
import { messages, ServiceUnavailable, unavailableRetryAfterSeconds } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { HelpRequestList, type CreateHelpRequestRequest } from "../../Api/Patients/HelpRequests.js"
import { HelpRequest } from "../../Domain/Patients/Records.js"
import { AppConfig } from "../AppConfig.js"
import { Mailer } from "../Mailer.js"
import { Access, type Viewer } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import { HelpRequestsRepo } from "./HelpRequestsRepo.js"

export class HelpRequests extends Effect.Service<HelpRequests>()("app/HelpRequests", {
  effect: Effect.gen(function*() {
    const helpRequests = yield* HelpRequestsRepo
    const transaction = yield* makeTransaction
    const access = yield* Access
    const mailer = yield* Mailer
    const config = yield* AppConfig

    const list = Effect.fn("HelpRequests.list")(function*(viewer: Viewer, patientId: number | undefined, request: PageRequest) {
      const patient = yield* access.defaultPatientFor(viewer, patientId)
      const { pagination, rows } = yield* helpRequests.list(patient, request)
      return HelpRequestList.make({ help_requests: rows.map((r) => HelpRequest.make(r, true)), pagination }, true)
    })

    /**
     * Recorded and mailed in one transaction: a request the clinic was not told about is not kept
     * (the family gets a 503 and sends it again). The mail names the request, not its content:
     * the message is health information and stays in the API.
     */
    const create = Effect.fn("HelpRequests.create")(function*(viewer: Viewer, input: CreateHelpRequestRequest["help_request"]) {
      const patient = yield* access.defaultPatientFor(viewer, input.patient_id)
      return yield* transaction(Effect.gen(function*() {
        const row = yield* helpRequests.insert({ patientId: patient, userId: viewer.id, subject: input.subject.trim(), message: input.message.trim() })
        yield* mailer.send({
          to: [config.clinicSupportEmail],
          subject: `Help request #${row.id}`,
          text: [
            `A family has sent help request #${row.id} about patient #${patient}.`,
            "Open it in the clinic application to read and answer it."
          ].join("\n\n")
        }).pipe(Effect.catchTag("MailError", (error) =>
          Effect.logWarning("help request email not delivered").pipe(
            Effect.annotateLogs({ "help_request.id": row.id, reason: error._tag }),
            Effect.zipRight(Effect.fail(new ServiceUnavailable({ errors: messages.unavailable, retryAfterSeconds: unavailableRetryAfterSeconds })))
          )))
        return HelpRequest.make(row, true)
      }))
    })

    return { list, create } as const
  }),
  dependencies: [Access.Default, HelpRequestsRepo.Default]
}) {}
