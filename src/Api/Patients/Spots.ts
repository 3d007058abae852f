/** Spots: a patient's places on the clinic's waitlist (general §4.2). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientIdFromText } from "../../Domain/Ids.js"
import { Spot, SpotStatus } from "../../Domain/Patients/Records.js"
import { groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Conflict, Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedString, IdParam, RequiredString } from "../Schemas.js"
import { Authentication } from "../Security.js"

export const spotMaxLengths = { program: 100, notes: 2000 } as const

const access = "Any signed-in user (`X-User-Token`); a parent may only answer an offer (accepted or declined)."

export class CreateSpotRequest extends Schema.Class<CreateSpotRequest>("CreateSpotRequest")({
  spot: Schema.Struct({
    program: RequiredString(spotMaxLengths.program).annotations({ description: "The program the waitlist is for" }),
    notes: Schema.optional(Schema.NullOr(BoundedString(spotMaxLengths.notes)))
  })
}, requestBody({ spot: { program: "intensive_outpatient", notes: "Prefers afternoons" } })) {}

export class UpdateSpotRequest extends Schema.Class<UpdateSpotRequest>("UpdateSpotRequest")({
  spot: Schema.Struct({
    status: Schema.optional(SpotStatus.annotations({
      description: "waiting → offered → accepted | declined; waiting or offered → expired; accepted, declined and expired are final"
    })),
    notes: Schema.optional(Schema.NullOr(BoundedString(spotMaxLengths.notes)))
  })
}, requestBody({ spot: { status: "offered", notes: "Offered the Tuesday group" } })) {}

export type SpotChanges = UpdateSpotRequest["spot"]

export class SpotResponse extends Schema.Class<SpotResponse>("SpotResponse")({ spot: Spot }) {}
export class SpotList extends Schema.Class<SpotList>("SpotList")({ spots: Schema.Array(Spot), pagination: Pagination }) {}

const patientPath = Schema.Struct({ patient_id: PatientIdFromText })
const spotPath = Schema.Struct({ patient_id: PatientIdFromText, id: IdParam })

export class SpotsApi extends HttpApiGroup.make("spots")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/:patient_id/spot")
      .setPath(patientPath)
      .setUrlParams(listQuery({ size: "page_size" }))
      .addSuccess(SpotList)
      .annotateContext(operationDocs({
        summary: "A patient's waitlist spots",
        description: "The patient's spots, newest request first, 25 a page by default, each with its position among the " +
          "waiting spots of its program.",
        access,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients/:patient_id/spot")
      .setPath(patientPath)
      .setPayload(CreateSpotRequest)
      .addSuccess(SpotResponse, { status: 201 })
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Put a patient on the waitlist",
        description: "Adds a waiting spot for the program, at the end of its queue. A patient has at most one open " +
          "(waiting or offered) spot per program: another is 409 `Patient already has an open spot for this program`.",
        access,
        patients: { records: "general" },
        spec: "general §4.2",
        singleUse: "one open spot per patient and program"
      }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/clinic/patients/:patient_id/spot/:id")
      .setPath(spotPath)
      .setPayload(UpdateSpotRequest)
      .addSuccess(SpotResponse)
      .addError(Forbidden.schema)
      .annotateContext(operationDocs({
        summary: "Move a waitlist spot",
        description: "Changes the status (offered sets offered_at; accepted, declined and expired set responded_at) " +
          "and notes. A move the waitlist does not allow is 422 `{\"errors\":{\"status\":[\"can't change from … to …\"]}}`; " +
          "a spot of another patient is 404 `Spot not found`.",
        access,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Waitlist spots",
    description: "A patient's places on the clinic's waitlist, one open spot per program, with their queue position."
  }))
{}
