/**
 * Questionnaire invites (general §4.12): staff or a parent email a single-use link to a
 * questionnaire; the public form and its one submission are beyond the spec.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientId, QuestionnaireId } from "../../Domain/Ids.js"
import { InviteForm, InviteResponseReceipt, QuestionnaireInvite } from "../../Domain/Questionnaires/Questionnaire.js"
import { IsoDate } from "../../Domain/Time.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, reportAllErrors, TooManyRequests, ValidationFailed } from "../Errors.js"
import { BoundedString, IssuedToken, maxLengths, RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"
import { Answers } from "./Questionnaires.js"

export const inviteLimits = { message: 1000 } as const

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** An address to write to; general §7's "invalid format". */
export const InviteEmail = RequiredString(maxLengths.email).pipe(
  Schema.filter((s) => emailPattern.test(s.trim()), { message: () => "invalid format" })
)

export class CreateQuestionnaireInviteRequest extends Schema.Class<CreateQuestionnaireInviteRequest>("CreateQuestionnaireInviteRequest")({
  questionnaire_invite: Schema.Struct({
    questionnaire_id: QuestionnaireId.annotations({ description: "An active questionnaire" }),
    patient_id: PatientId,
    email: InviteEmail,
    due_date: Schema.optional(Schema.NullOr(IsoDate).annotations({
      description: "Today or later (clinic time zone), at most 30 days ahead: the link works until the end of that day; without it, 14 days"
    })),
    message: Schema.optional(Schema.NullOr(BoundedString(inviteLimits.message)))
  })
}, requestBody({
  questionnaire_invite: { questionnaire_id: 1, patient_id: 7, email: "parent@example.org", due_date: "2026-12-01", message: "Before Tuesday's visit, please." }
})) {}

export class QuestionnaireInviteResponse extends Schema.Class<QuestionnaireInviteResponse>("QuestionnaireInviteResponse")({
  questionnaire_invite: QuestionnaireInvite
}) {}

export class RespondToInviteRequest extends Schema.Class<RespondToInviteRequest>("RespondToQuestionnaireInviteRequest")({
  token: IssuedToken.annotations({ description: "The token of the invite link" }),
  responses: Answers
}, requestBody({ token: "q0t3Xb8yJv2mW1sZ9kR4nP7cL5hA6eD0fG3iU8oY2wE", responses: [{ question_id: 1, answer: "Not at all" }] })) {}

export class InviteReceiptResponse extends Schema.Class<InviteReceiptResponse>("QuestionnaireInviteReceiptResponse")({
  questionnaire_response: InviteResponseReceipt
}) {}

export class QuestionnaireInvitesApi extends HttpApiGroup.make("questionnaireInvites")
  .add(
    HttpApiEndpoint.post("create", "/questionnaire_invites")
      .setPayload(CreateQuestionnaireInviteRequest)
      .addSuccess(QuestionnaireInviteResponse, { status: 201 })
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Invite someone to fill in a questionnaire",
        description: "Emails a single-use link to the questionnaire's form. A new invite for the same patient and questionnaire " +
          "revokes the open one. Statuses: sent → opened → completed | expired | revoked.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.12"
      }))
  )
  .add(
    HttpApiEndpoint.get("form", "/questionnaire_invites/form")
      .setUrlParams(Schema.Struct({ token: IssuedToken }).annotations(reportAllErrors))
      .addSuccess(InviteForm)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Open an invite's form",
        description: "The questionnaire an invite asks for, without patient data; marks the invite opened. Unknown, used, expired " +
          "or revoked tokens are 404 `Invite not found`. 30 requests a minute per client address.",
        access: Access.public,
        spec: "general §4.12 (beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.post("respond", "/questionnaire_invites/respond")
      .setPayload(RespondToInviteRequest)
      .addSuccess(InviteReceiptResponse, { status: 201 })
      .addError(TooManyRequests.schema)
      .annotate(BodyLimit, 512 * 1024)
      .annotateContext(operationDocs({
        summary: "Answer an invite",
        description: "Saves the complete set of answers as a submitted response (no score in the reply) and uses up the " +
          "invite: concurrent submissions with one token give one 201, the rest 404. Answers that do not fit, or leave a " +
          "required question blank, are 422 and the link keeps working. " +
          "30 requests a minute per client address.",
        access: Access.public,
        spec: "general §4.12 (beyond the spec)"
      }))
  )
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Questionnaires · Invites",
    description: "Emailed, single-use links to a questionnaire's form for a patient's family."
  }))
{}
