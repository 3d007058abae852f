/** Public screeners (general §4.12 marketing questionnaires): no account, no patient. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { QuestionnaireId } from "../../Domain/Ids.js"
import { Questionnaire, ScreenerResult, TargetAudience } from "../../Domain/Questionnaires/Questionnaire.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { TooManyRequests, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedString } from "../Schemas.js"
import { InviteEmail } from "./Invites.js"
import { Answers } from "./Questionnaires.js"

export class ScreenerList extends Schema.Class<ScreenerList>("MarketingQuestionnaireList")({
  marketing_questionnaires: Schema.Array(Questionnaire),
  pagination: Pagination
}) {}

export class CreateScreenerRequest extends Schema.Class<CreateScreenerRequest>("CreateMarketingQuestionnaireRequest")({
  marketing_questionnaire: Schema.Struct({
    questionnaire_id: QuestionnaireId.annotations({ description: "An active questionnaire with a target_audience" }),
    email: InviteEmail.annotations({ description: "Where the result (the band only) is sent" }),
    responses: Answers,
    website: Schema.optional(BoundedString(200).annotations({ description: "Leave out or empty (a field for robots)" }))
  })
}, requestBody({
  marketing_questionnaire: { questionnaire_id: 3, email: "someone@example.org", responses: [{ question_id: 30, answer: "Several days" }] }
})) {}

export class ScreenerResultResponse extends Schema.Class<ScreenerResultResponse>("MarketingQuestionnaireResponse")({
  marketing_questionnaire: ScreenerResult
}) {}

export class ScreenersApi extends HttpApiGroup.make("marketingQuestionnaires")
  .add(
    HttpApiEndpoint.get("list", "/marketing_questionnaires")
      .setUrlParams(listQuery({ size: "page_size", fields: { target_audience: Schema.optional(TargetAudience) } }))
      .addSuccess(ScreenerList)
      .annotateContext(operationDocs({
        summary: "List public screeners",
        description: "Active questionnaires offered to the public (those with a target audience), by title, 25 a page by default.",
        access: Access.public,
        spec: "general §4.12"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/marketing_questionnaires")
      .setPayload(CreateScreenerRequest)
      .addSuccess(ScreenerResultResponse, { status: 201 })
      .addError(TooManyRequests.schema)
      .annotate(BodyLimit, 512 * 1024)
      .annotateContext(operationDocs({
        summary: "Take a public screener",
        description: "Scores the answers and emails the band to the address given; kept 180 days. 5 an hour per client " +
          "address and 3 a day per email (429). A self-harm answer adds `crisis_resources` and alerts the clinic.",
        access: Access.public,
        spec: "general §4.12"
      }))
  )
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Questionnaires · Public screeners",
    description: "Anonymous screeners for the public: scored at once, no account and no patient record."
  }))
{}
