/** Questionnaires (general §4.12, §4.2): decode, take the caller, call the services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { questionnairesPageSize } from "../../../Api/Questionnaires/Questionnaires.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Catalogue } from "../../../Services/Questionnaires/Catalogue.js"
import { QuestionnaireInvites } from "../../../Services/Questionnaires/QuestionnaireInvites.js"
import { QuestionnaireResponses } from "../../../Services/Questionnaires/QuestionnaireResponses.js"
import { Screeners } from "../../../Services/Questionnaires/Screeners.js"
import { clientAddress } from "../Forwarded.js"

export const HttpQuestionnairesLive = HttpApiBuilder.group(Api, "questionnaires", (handlers) =>
  Effect.gen(function*() {
    const catalogue = yield* Catalogue
    return handlers
      .handle("list", ({ urlParams }) =>
        catalogue.list({ category: urlParams.category, active: urlParams.active, ageGroup: urlParams.age_group }, pageRequest(urlParams, questionnairesPageSize)))
      .handle("show", ({ path }) => Effect.map(catalogue.show(path.id), (questionnaire) => ({ questionnaire })))
  }))

export const HttpQuestionnaireResponsesLive = HttpApiBuilder.group(Api, "questionnaireResponses", (handlers) =>
  Effect.gen(function*() {
    const responses = yield* QuestionnaireResponses
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(responses.create(caller, payload.questionnaire_response), (questionnaire_response) => ({ questionnaire_response }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(responses.update(caller, path.id, payload.questionnaire_response), (questionnaire_response) => ({ questionnaire_response }))))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          responses.list(caller, { patientId: urlParams.patient_id, questionnaireId: urlParams.questionnaire_id, status: urlParams.status },
            pageRequest(urlParams, questionnairesPageSize))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(responses.show(caller, path.id), (questionnaire_response) => ({ questionnaire_response }))))
  }))

export const HttpQuestionnaireInvitesLive = HttpApiBuilder.group(Api, "questionnaireInvites", (handlers) =>
  Effect.gen(function*() {
    const invites = yield* QuestionnaireInvites
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(invites.create(caller, payload.questionnaire_invite), (questionnaire_invite) => ({ questionnaire_invite }))))
      .handle("form", ({ urlParams }) => Effect.flatMap(clientAddress, (address) => invites.form(address, urlParams.token)))
      .handle("respond", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => Effect.map(invites.respond(address, payload), (questionnaire_response) => ({ questionnaire_response }))))
  }))

export const HttpScreenersLive = HttpApiBuilder.group(Api, "marketingQuestionnaires", (handlers) =>
  Effect.gen(function*() {
    const screeners = yield* Screeners
    return handlers
      .handle("list", ({ urlParams }) => screeners.list(urlParams.target_audience, pageRequest(urlParams, questionnairesPageSize)))
      .handle("create", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => Effect.map(screeners.create(address, payload.marketing_questionnaire), (marketing_questionnaire) => ({ marketing_questionnaire }))))
  }))

/** Every group of the Questionnaires area. */
export const HttpQuestionnairesAreaLive = [
  HttpQuestionnairesLive, HttpQuestionnaireResponsesLive, HttpQuestionnaireInvitesLive, HttpScreenersLive
] as const
