/** The questionnaire catalogue and patients' responses (general §2.11, §4.12, §4.2). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientId, PatientIdFromText, QuestionId, QuestionnaireId, QuestionnaireIdFromText } from "../../Domain/Ids.js"
import {
  Questionnaire,
  QuestionnaireCategory,
  QuestionnaireResponse
} from "../../Domain/Questionnaires/Questionnaire.js"
import { maxTextAnswer, ResponseStatus } from "../../Domain/Questionnaires/Scoring.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BooleanFromQuery, BoundedArray, BoundedString, IdParam } from "../Schemas.js"
import { Authentication } from "../Security.js"

export const questionnairesPageSize = 25
export const questionnaireLimits = { answers: 100, checkboxChoices: 50, label: 200, reviewNotes: 5000, ageGroup: 50 } as const

/** One answer in a request: a label, a list of labels (checkbox), text or a date; null clears it. */
export const AnswerInput = Schema.Struct({
  question_id: QuestionId.annotations({ description: "A question of this questionnaire" }),
  answer: Schema.NullOr(Schema.Union(
    BoundedString(maxTextAnswer),
    BoundedArray(BoundedString(questionnaireLimits.label), questionnaireLimits.checkboxChoices)
  )).annotations({
    description: "An option label (multiple_choice, scale, yes_no), a list of labels (checkbox), text of at most " +
      `${maxTextAnswer} characters, or a date YYYY-MM-DD; null clears the answer`
  })
})
export type AnswerInput = typeof AnswerInput.Type
export const Answers = BoundedArray(AnswerInput, questionnaireLimits.answers)

export const CatalogueQuery = listQuery({
  size: "page_size",
  fields: {
    category: Schema.optional(QuestionnaireCategory),
    active: Schema.optional(BooleanFromQuery),
    age_group: Schema.optional(BoundedString(questionnaireLimits.ageGroup).annotations({ description: "adult, teen or child" }))
  }
})

export class QuestionnaireList extends Schema.Class<QuestionnaireList>("QuestionnaireList")({
  questionnaires: Schema.Array(Questionnaire),
  pagination: Pagination
}) {}
export class QuestionnaireResponseBody extends Schema.Class<QuestionnaireResponseBody>("QuestionnaireBody")({
  questionnaire: Questionnaire
}) {}

const catalogueAccess = Access.signedIn
const responseAccess = "Any signed-in user (`X-User-Token`); a response of a patient the caller may not see, or an unknown id, is 404."

export class QuestionnairesApi extends HttpApiGroup.make("questionnaires")
  .add(
    HttpApiEndpoint.get("list", "/questionnaires")
      .setUrlParams(CatalogueQuery)
      .addSuccess(QuestionnaireList)
      .annotateContext(operationDocs({
        summary: "List questionnaires",
        description: "The instruments (every version; `active` is the current one of each), by title, 25 a page by default.",
        access: catalogueAccess,
        spec: "general §4.12"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/questionnaires/:id")
      .setPath(Schema.Struct({ id: QuestionnaireIdFromText }))
      .addSuccess(QuestionnaireResponseBody)
      .annotateContext(operationDocs({
        summary: "Show a questionnaire",
        description: "One instrument version with its questions in order; 404 `Questionnaire not found`.",
        access: catalogueAccess,
        spec: "general §4.12"
      }))
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Questionnaires",
    description: "Validated instruments (PHQ-9, PHQ-A, GAD-7, PSC-17) seeded from `seeds/questionnaires`; a changed seed makes a new version."
  }))
{}

export class CreateQuestionnaireResponseRequest
  extends Schema.Class<CreateQuestionnaireResponseRequest>("CreateQuestionnaireResponseRequest")({
    questionnaire_response: Schema.Struct({
      questionnaire_id: QuestionnaireId.annotations({ description: "An active questionnaire" }),
      patient_id: PatientId,
      responses: Answers
    })
  }, requestBody({
    questionnaire_response: { questionnaire_id: 1, patient_id: 7, responses: [{ question_id: 1, answer: "Several days" }] }
  }))
{}

export class UpdateQuestionnaireResponseRequest
  extends Schema.Class<UpdateQuestionnaireResponseRequest>("UpdateQuestionnaireResponseRequest")({
    questionnaire_response: Schema.Struct({
      responses: Schema.optional(Answers.annotations({ description: "Merged by question_id; `answer: null` clears one" })),
      status: Schema.optional(ResponseStatus.annotations({
        description: "submitted (from completed) or reviewed (staff; from completed or submitted); the others follow the answers"
      })),
      review_notes: Schema.optional(Schema.NullOr(BoundedString(questionnaireLimits.reviewNotes)).annotations({ description: "Staff only" }))
    })
  }, requestBody({ questionnaire_response: { responses: [{ question_id: 2, answer: "Not at all" }], status: "submitted" } }))
{}
export type ResponseChanges = UpdateQuestionnaireResponseRequest["questionnaire_response"]

export class QuestionnaireResponseResponse extends Schema.Class<QuestionnaireResponseResponse>("QuestionnaireResponseResponse")({
  questionnaire_response: QuestionnaireResponse
}) {}
export class QuestionnaireResponseList extends Schema.Class<QuestionnaireResponseList>("QuestionnaireResponseList")({
  questionnaire_responses: Schema.Array(QuestionnaireResponse),
  pagination: Pagination
}) {}

export const ResponseListQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText.annotations({ description: "One patient; without it, every patient the caller may see" })),
    questionnaire_id: Schema.optional(QuestionnaireIdFromText),
    status: Schema.optional(ResponseStatus)
  }
})

const bodyLimit = 512 * 1024

export class QuestionnaireResponsesApi extends HttpApiGroup.make("questionnaireResponses")
  .add(
    HttpApiEndpoint.post("create", "/questionnaire_responses")
      .setPayload(CreateQuestionnaireResponseRequest)
      .addSuccess(QuestionnaireResponseResponse, { status: 201 })
      .annotate(BodyLimit, bodyLimit)
      .annotateContext(operationDocs({
        summary: "Start a questionnaire response",
        description: "Records the answers given so far (possibly none) and scores them. An answer that does not fit its question " +
          "is 422 with nothing saved (`{\"errors\":{\"responses[2].answer\":[\"is not included in the list\"]}}`). A self-harm " +
          "answer flags `self_harm` at once, alerts the clinic and adds `crisis_resources` to the reply.",
        access: responseAccess,
        patients: { records: "clinical" },
        spec: "general §4.12"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/questionnaire_responses/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .setPayload(UpdateQuestionnaireResponseRequest)
      .addSuccess(QuestionnaireResponseResponse)
      .addError(Forbidden.schema)
      .annotate(BodyLimit, bodyLimit)
      .annotateContext(operationDocs({
        summary: "Update a questionnaire response",
        description: "Merges answers by question_id and moves the status: started → in_progress → completed follow the " +
          "answers; submitted (respondent) freezes them; reviewed (staff, final) acknowledges any alert. A move the machine " +
          "does not allow is 422 `{\"errors\":{\"status\":[\"cannot change from submitted to in_progress\"]}}`; a parent " +
          "setting reviewed or review_notes is 403. 404 `Questionnaire response not found`.",
        access: responseAccess,
        patients: { records: "clinical" },
        spec: "general §4.12"
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/questionnaires")
      .setUrlParams(ResponseListQuery)
      .addSuccess(QuestionnaireResponseList)
      .annotateContext(operationDocs({
        summary: "List questionnaire responses",
        description: "Responses newest first, 25 a page by default, filtered by patient, questionnaire and status.",
        access: responseAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/questionnaires/:id")
      .setPath(Schema.Struct({ id: IdParam }))
      .addSuccess(QuestionnaireResponseResponse)
      .annotateContext(operationDocs({
        summary: "Show a questionnaire response",
        description: "One response with its answers and item scores; 404 `Questionnaire response not found`.",
        access: responseAccess,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Questionnaires · Responses",
    description: "A patient's answers to an instrument, scored on every save; started, in progress, completed, submitted, reviewed."
  }))
{}
