/** ECM engagement status of a patient (issue 16, docs/prtf.md): append a change, read the history. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { EngagementStatus } from "../../Domain/Ecm/Engagement.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, EcmPayloadTooLarge, EcmServiceUnavailable, EcmValidationFailed } from "../Errors.js"
import { BoundedString, IdParam, IsoDate } from "../Schemas.js"
import { EcmStaffAuthentication } from "../Security.js"
import { StatusHistoryEntry } from "./Patients.js"

/** Longest reason (a discontinuation reason is a phrase, not a note). */
export const maxReasonLength = 500

export class EngagementStatusRequest extends Schema.Class<EngagementStatusRequest>("EngagementStatusRequest")({
  status: EngagementStatus.annotations({ description: "The new engagement status (docs/prtf.md lists the moves allowed)" }),
  effective_date: IsoDate.annotations({
    description: "The day (YYYY-MM-DD) it takes effect: not in the future, not before the current status's"
  }),
  reason: Schema.optional(Schema.NullOr(BoundedString(maxReasonLength)).annotations({
    description: "Why; required for `disenrolled` (the discontinuation reason of the PRTF)"
  }))
}, requestBody(
  { status: "enrolled", effective_date: "2026-02-03", reason: "Consented by phone" },
  { status: "disenrolled", effective_date: "2026-05-20", reason: "Moved out of county" }
)) {}

export class EngagementStatusChanged extends Schema.Class<EngagementStatusChanged>("EngagementStatusChanged")({
  message: Schema.String,
  engagement_status: StatusHistoryEntry
}) {}

export class EngagementStatusHistory extends Schema.Class<EngagementStatusHistory>("EngagementStatusHistory")({
  patient_id: Schema.Int,
  engagement_status: Schema.NullOr(StatusHistoryEntry).annotations({ description: "The current entry (latest effective date, then latest written)" }),
  status_histories: Schema.Array(StatusHistoryEntry).annotations({ description: "Every entry, newest first" })
}) {}

const path = Schema.Struct({ id: IdParam })
const spec = "ECM §2.7, §4.7 (engagement status columns; issue 16)"

export class EcmEngagementStatusApi extends HttpApiGroup.make("ecmEngagementStatus")
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/ecm/patients/:id/engagement_status")
      .setPath(path)
      .setPayload(EngagementStatusRequest)
      .addSuccess(EngagementStatusChanged)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Change a patient's engagement status",
        description: "Appends an entry to the patient's engagement status history (source `user`). Moves are " +
          "validated: an enrolled member can only be disenrolled, after `disenrolled` only a re-referral " +
          "(`new_member`) is allowed, the same status twice is refused, `disenrolled` needs a `reason` (the " +
          "discontinuation reason), and `effective_date` can be neither in the future nor before the current " +
          "status's. A patient without eligibility records is not an ECM patient: 404.",
        access: Access.staff,
        spec
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/ecm/patients/:id/engagement_status")
      .setPath(path)
      .addSuccess(EngagementStatusHistory)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a patient's engagement status history",
        description: "The current engagement status and every entry, newest first (by effective date, then by when " +
          "it was written): MIF imports (`mif`), users (`user`) and outreach recorded as activities (`system`).",
        access: Access.staff,
        spec
      }))
  )
  .middleware(EcmStaffAuthentication)
  .addError(EcmValidationFailed.schema)
  .addError(EcmServiceUnavailable.schema)
  .addError(EcmPayloadTooLarge.schema)
  .annotateContext(groupDocs({
    tag: "ECM · Engagement status",
    description: "Where each ECM member stands: new, in outreach, enrolled, declined, unreachable or disenrolled. " +
      "The PRTF report reads this history."
  }))
{}
