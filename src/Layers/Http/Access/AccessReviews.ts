/** Break-glass accesses for admins to review. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { accessReviewsPageSize } from "../../../Api/Access/AccessReviews.js"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { AccessReviews } from "../../../Services/Access/AccessReviews.js"

export const HttpAccessReviewsLive = HttpApiBuilder.group(Api, "accessReviews", (handlers) =>
  Effect.gen(function*() {
    const reviews = yield* AccessReviews
    return handlers.handle("list", ({ urlParams }) =>
      reviews.list({ userId: urlParams.user_id, patientId: urlParams.patient_id }, pageRequest(urlParams, accessReviewsPageSize)))
  }))
