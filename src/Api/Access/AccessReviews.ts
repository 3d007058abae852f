/**
 * Break-glass accesses for admins to review (docs/spec-decisions.md "Who sees which patient"):
 * every time a staff member opened a patient outside their care relationships with an
 * `X-Access-Reason`.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AccessReview } from "../../Domain/AccessReview.js"
import { PatientIdFromText, UserIdFromText } from "../../Domain/Ids.js"
import { Access, groupDocs, operationDocs } from "../Docs.js"
import { ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { AdminAuthentication } from "../Security.js"

export const accessReviewsPageSize = 25

export const AccessReviewQuery = listQuery({
  size: "page_size",
  fields: {
    user_id: Schema.optional(UserIdFromText.annotations({ description: "Only the accesses of this staff member" })),
    patient_id: Schema.optional(PatientIdFromText.annotations({ description: "Only the accesses to this patient" }))
  }
})

export class AccessReviewList extends Schema.Class<AccessReviewList>("AccessReviewList")({
  access_reviews: Schema.Array(AccessReview),
  pagination: Pagination
}) {}

export class AccessReviewsApi extends HttpApiGroup.make("accessReviews")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/access_reviews")
      .setUrlParams(AccessReviewQuery)
      .addSuccess(AccessReviewList)
      .annotateContext(operationDocs({
        summary: "List break-glass accesses",
        description: "Every time a provider or supervisor opened a patient outside their care relationships by sending " +
          "an `X-Access-Reason` header (1–500 characters after trimming, no control characters): who, which patient, " +
          "the reason, the request's method and path (no query string), and its audit entry (`patient.break_glass`). " +
          `Newest first, ${accessReviewsPageSize} a page by default (\`page\`, \`page_size\` up to 100); \`user_id\` and ` +
          "`patient_id` narrow the list. Each request that opened a patient is one entry.",
        access: Access.admin,
        spec: "general §5.4 (beyond the spec: least privilege for health data, docs/spec-decisions.md)"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Access reviews",
    description: "Break-glass accesses to patients outside a staff member's care relationships, with the reason given."
  }))
{}
