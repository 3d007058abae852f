/**
 * A break-glass access as admins review it (`GET /v1/admin/clinic/access_reviews`): who opened
 * which patient outside their care relationships, why, and through which request.
 */
import { Schema } from "effect"
import { Role } from "./Accounts/User.js"
import { PatientId, UserId } from "./Ids.js"
import { IsoTimestamp } from "./Time.js"

export class AccessReviewUser extends Schema.Class<AccessReviewUser>("AccessReviewUser")({
  id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  role: Role
}, { description: "The staff member who opened the patient" }) {}

export class AccessReview extends Schema.Class<AccessReview>("AccessReview")({
  id: Schema.Int.annotations({ description: "The access's own id (newest first in the list)" }),
  audit_event_id: Schema.Int.annotations({ description: "Its entry in the audit trail (`patient.break_glass`)" }),
  user: AccessReviewUser,
  patient_id: PatientId,
  reason: Schema.String.annotations({ description: "The `X-Access-Reason` the request gave (trimmed)" }),
  request_method: Schema.String.annotations({ description: "The request's method", examples: ["GET"] }),
  request_path: Schema.String.annotations({
    description: "The request's path, without its query string",
    examples: ["/v1/clinic/patients/42/documents"]
  }),
  created_at: IsoTimestamp
}, { description: "One break-glass access: a staff member opened a patient outside their care relationships, giving a reason" }) {}
