/** ECM engagement status of a patient (docs/prtf.md "Engagement status"): record a change, possibly late; read the history. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { EngagementStatus } from "../../Domain/Ecm/Engagement.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { EcmNotFound, withEcmGroupErrors } from "../Errors.js"
import { BoundedString, IdParam, IsoDate } from "../Schemas.js"
import { EcmStaffAuthentication } from "../Security.js"
import { StatusHistoryEntry } from "./Patients.js"

/** Longest reason (a discontinuation reason is a phrase, not a note). */
export const maxReasonLength = 500

export class EngagementStatusRequest extends Schema.Class<EngagementStatusRequest>("EngagementStatusRequest")({
  status: EngagementStatus.annotations({ description: "The new engagement status (docs/prtf.md lists the moves allowed)" }),
  effective_date: IsoDate.annotations({
    description: "The day (YYYY-MM-DD) it takes effect: today or earlier, never in the future; a day before today " +
      "records the change late and needs a `reason`"
  }),
  reason: Schema.optional(Schema.NullOr(BoundedString(maxReasonLength)).annotations({
    description: "Why; required for `disenrolled` (the discontinuation reason of the PRTF) and when `effective_date` is before today"
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
const spec = "ECM §2.7, §4.7 (engagement status columns)"

export class EcmEngagementStatusApi extends HttpApiGroup.make("ecmEngagementStatus")
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/ecm/patients/:id/engagement_status")
      .setPath(path)
      .setPayload(EngagementStatusRequest)
      .addSuccess(EngagementStatusChanged)
      .addError(EcmNotFound.schema)
      .annotateContext(operationDocs({
        summary: "Change a patient's engagement status",
        description: "Records an entry in the patient's engagement status history (source `user`), effective " +
          "`effective_date`: today, or a day in the past when the change is recorded late (then `reason` is " +
          "required); never in the future. The entry goes in the history at its day, after that day's entries: " +
          "the move from the status then in force must be allowed (an enrolled member can only be disenrolled, " +
          "after `disenrolled` only a re-referral, `new_member`; the same status twice is refused), and so must " +
          "every later entry's move, except automatic outreach moves the change makes untrue, which are withdrawn " +
          "(kept in the audit trail). `disenrolled` needs a `reason` (the discontinuation reason). The entry " +
          "records what it replaced on its day. A patient without eligibility records is not an ECM patient: 404.",
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
          "it was written): MIF imports (`mif`), users (`user`) and outreach recorded as activities (`system`); " +
          "each with who recorded it, when, and the status it replaced on its day.",
        access: Access.staff,
        spec
      }))
  )
  .middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)
  .annotateContext(groupDocs({
    tag: "ECM · Engagement status",
    description: "Where each ECM member stands: new, in outreach, enrolled, declined, unreachable or disenrolled. " +
      "The PRTF report reads this history."
  }))
{}
