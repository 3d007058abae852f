/** The admins' review of break-glass accesses (`GET /v1/admin/clinic/access_reviews`). */
import { Effect } from "effect"
import { type PageRequest } from "../../Api/Pagination.js"
import { AccessReview, AccessReviewUser } from "../../Domain/AccessReview.js"
import { BreakGlassRepo, type BreakGlassRow } from "./BreakGlassRepo.js"

const toReview = (row: BreakGlassRow) =>
  AccessReview.make({
    id: row.id,
    audit_event_id: row.audit_event_id,
    user: AccessReviewUser.make({ id: row.user_id, first_name: row.first_name, last_name: row.last_name, role: row.role }),
    patient_id: row.patient_id,
    reason: row.reason,
    request_method: row.request_method,
    request_path: row.request_path,
    created_at: row.created_at
  }, true)

export class AccessReviews extends Effect.Service<AccessReviews>()("app/AccessReviews", {
  effect: Effect.gen(function*() {
    const repo = yield* BreakGlassRepo

    const list = Effect.fn("AccessReviews.list")(function*(
      filter: { readonly userId?: number | undefined; readonly patientId?: number | undefined },
      request: PageRequest
    ) {
      const { pagination, rows } = yield* repo.list({ user_id: filter.userId ?? null, patient_id: filter.patientId ?? null }, request)
      yield* Effect.annotateCurrentSpan({ "access_reviews.count": rows.length, "access_reviews.total_count": pagination.total_count })
      return { access_reviews: rows.map(toReview), pagination }
    })

    return { list } as const
  }),
  dependencies: [BreakGlassRepo.Default]
}) {}
