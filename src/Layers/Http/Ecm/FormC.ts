/** Form C submissions, clinic (ECM §4.4) and admin (ECM §4.5): decode, take the caller, call `FormCSubmissions`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { formCAdminPageSize, FormCSubmissions } from "../../../Services/Ecm/FormCSubmissions.js"

export const HttpEcmFormCLive = HttpApiBuilder.group(Api, "ecmFormC", (handlers) =>
  Effect.gen(function*() {
    const submissions = yield* FormCSubmissions
    return handlers
      .handle("create", ({ payload, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          submissions.create(caller.id, urlParams.patient_id, payload.form_c_submission?.form_data)))
      .handle("list", ({ urlParams }) => submissions.listForPatient(urlParams.patient_id))
      .handle("show", ({ path, urlParams }) => submissions.showForPatient(urlParams.patient_id, path.id))
  }))

export const HttpEcmAdminFormCLive = HttpApiBuilder.group(Api, "ecmAdminFormC", (handlers) =>
  Effect.gen(function*() {
    const submissions = yield* FormCSubmissions
    return handlers
      .handle("list", ({ urlParams }) => submissions.list(urlParams.patient_id, pageRequest(urlParams, formCAdminPageSize)))
      .handle("show", ({ path }) => submissions.show(path.id))
  }))
