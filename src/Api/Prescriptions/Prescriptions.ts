/**
 * Medications catalogue, prescriptions and a patient's medication history (general §2.8, §4.8, the
 * `medication_history` line of §4.2). Record-level access (§5.4) lives in the service.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import {
  commonFrequencies, commonInstructions, maxRefills, Medication, MedicationHistoryGroup, minRefills, Prescription, PrescriptionStatus
} from "../../Domain/Prescriptions/Prescription.js"
import {
  MedicationId, MedicationIdFromText, PatientId, PatientIdFromText, PrescriptionIdFromText, ProviderId, ProviderIdFromText
} from "../../Domain/Ids.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, IsoDate, RequiredString, Search } from "../Schemas.js"
import { AdminAuthentication, Authentication, StaffAuthentication } from "../Security.js"

export const prescriptionsPageSize = 25
export const medicationsPageSize = 25
export const historyPageSize = 25
export const maxDosageLength = 100
export const maxFrequencyLength = 100
export const maxInstructionsLength = 1000
export const maxQuantity = 10_000
export const maxBrandNames = 20

export const prescriptionMessages = {
  notFound: "Prescription not found",
  quantity: "must be greater than 0",
  refills: `must be between ${minRefills} and ${maxRefills}`,
  future: "can't be in the future",
  endAfterStart: "must be after start date",
  medicationInactive: "must be active",
  prescriber: "must be an active provider with a license number",
  move: (from: string, to: string) => `can't change from ${from} to ${to}`,
  expiredByJob: "can only become expired when the end date has passed",
  cancelActiveOnly: (status: string) => `is ${status}: only an active prescription can be cancelled`,
  notEditable: (status: string) => `is ${status}: only active and on_hold prescriptions can be changed`,
  noRefills: "has no refills remaining",
  refillsRemaining: "must be between 0 and refills"
} as const

const Quantity = Schema.Int.annotations({ message: () => "must be an integer" }).pipe(
  Schema.greaterThan(0, { message: () => prescriptionMessages.quantity }),
  Schema.lessThanOrEqualTo(maxQuantity, { message: () => `must be less than or equal to ${maxQuantity}` }),
  Schema.annotations({ description: `Units dispensed, 1–${maxQuantity}` })
)

const Refills = Schema.Int.annotations({ message: () => "must be an integer" }).pipe(
  Schema.between(minRefills, maxRefills, { message: () => prescriptionMessages.refills }),
  Schema.annotations({ description: `Refills allowed, ${minRefills}–${maxRefills} (default 0)` })
)

const Frequency = RequiredString(maxFrequencyLength).annotations({
  description: `One of the common values (${commonFrequencies.join(", ")}; any case, stored in this spelling) or free text`
})
const Instructions = BoundedString(maxInstructionsLength).annotations({
  description: `One of the common values (${commonInstructions.join(", ")}) or free text; blank clears them`
})
const Dosage = RequiredString(maxDosageLength).annotations({ description: "The dose per administration, e.g. `50 mg`" })

const prescriptionExample = {
  patient_id: 12,
  medication_id: 2,
  dosage: "50 mg",
  frequency: "once daily",
  quantity: 30,
  prescription_date: "2026-01-05"
}

export class CreatePrescriptionRequest extends Schema.Class<CreatePrescriptionRequest>("CreatePrescriptionRequest")({
  prescription: Schema.Struct({
    patient_id: PatientId,
    medication_id: MedicationId,
    dosage: Dosage,
    frequency: Frequency,
    quantity: Quantity,
    prescription_date: IsoDate.annotations({ description: "YYYY-MM-DD, not in the future (clinic time zone)" }),
    refills: Schema.optional(Refills),
    instructions: Schema.optional(Schema.NullOr(Instructions)),
    start_date: Schema.optional(Schema.NullOr(IsoDate)),
    end_date: Schema.optional(Schema.NullOr(IsoDate.annotations({ description: "After start_date; the day after it the daily job expires the prescription" }))),
    provider_id: Schema.optional(ProviderId.annotations({ description: "The prescriber when an admin writes it (required then); ignored for providers, who prescribe as themselves" }))
  })
}, requestBody(
  { prescription: prescriptionExample },
  { prescription: { ...prescriptionExample, refills: 2, instructions: "Take in the morning", start_date: "2026-01-06", end_date: "2026-04-06" } }
)) {}

export class UpdatePrescriptionRequest extends Schema.Class<UpdatePrescriptionRequest>("UpdatePrescriptionRequest")({
  prescription: Schema.Struct({
    patient_id: Schema.optional(PatientId),
    medication_id: Schema.optional(MedicationId),
    dosage: Schema.optional(Dosage),
    frequency: Schema.optional(Frequency),
    quantity: Schema.optional(Quantity),
    prescription_date: Schema.optional(IsoDate),
    refills: Schema.optional(Refills),
    refills_remaining: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0, { message: () => prescriptionMessages.refillsRemaining }))),
    instructions: Schema.optional(Schema.NullOr(Instructions)),
    start_date: Schema.optional(Schema.NullOr(IsoDate)),
    end_date: Schema.optional(Schema.NullOr(IsoDate)),
    provider_id: Schema.optional(ProviderId.annotations({ description: "Admins only: another prescriber" })),
    status: Schema.optional(PrescriptionStatus.annotations({ description: "A move of the status machine" }))
  })
}, requestBody(
  { prescription: { dosage: "100 mg" } },
  { prescription: { status: "on_hold" } },
  { prescription: { frequency: "twice daily", quantity: 60, refills: 3 } }
)) {}

const PrescriptionListQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText),
    provider_id: Schema.optional(ProviderIdFromText),
    status: Schema.optional(PrescriptionStatus),
    medication_name: Schema.optional(Search.annotations({ description: "Part of the medication's name, generic name or a brand name" }))
  }
})

export class PrescriptionList extends Schema.Class<PrescriptionList>("PrescriptionList")({
  prescriptions: Schema.Array(Prescription),
  pagination: Pagination
}) {}

export class PrescriptionResponse extends Schema.Class<PrescriptionResponse>("PrescriptionResponse")({ prescription: Prescription }) {}

const HistoryQuery = listQuery({ size: "page_size" })

export class MedicationHistory extends Schema.Class<MedicationHistory>("MedicationHistory")({
  patient_id: PatientId,
  medications: Schema.Array(MedicationHistoryGroup),
  pagination: Pagination.annotations({ description: "Counts medications (groups), not prescriptions" })
}) {}

const MedicationListQuery = listQuery({
  size: "page_size",
  search: "Part of the name, generic name or a brand name",
  fields: {
    include_inactive: Schema.optional(Schema.Literal("true", "false").annotations({
      message: () => "is not included in the list",
      description: "Admins may list retired medications too (default false)"
    }))
  }
})

export class MedicationList extends Schema.Class<MedicationList>("MedicationList")({
  medications: Schema.Array(Medication),
  pagination: Pagination
}) {}

export class MedicationResponse extends Schema.Class<MedicationResponse>("MedicationResponse")({ medication: Medication }) {}

const RxNormCui = BoundedString(10).pipe(
  Schema.filter((s) => /^[0-9]{1,10}$/.test(s), { message: () => "is invalid", jsonSchema: { pattern: "^[0-9]{1,10}$" } }),
  Schema.annotations({ description: "NLM RxNorm concept id (digits)" })
)

const medicationFields = {
  name: RequiredString(200),
  generic_name: RequiredString(200),
  brand_names: Schema.optional(BoundedArray(RequiredString(100), maxBrandNames)),
  strength: RequiredString(50),
  dosage_form: RequiredString(100),
  rxnorm_cui: Schema.optional(Schema.NullOr(RxNormCui))
}

const medicationExample = {
  name: "Sertraline 150 mg capsule",
  generic_name: "sertraline",
  brand_names: [],
  strength: "150 mg",
  dosage_form: "capsule",
  rxnorm_cui: "36437"
}

export class CreateMedicationRequest extends Schema.Class<CreateMedicationRequest>("CreateMedicationRequest")({
  medication: Schema.Struct(medicationFields)
}, requestBody({ medication: medicationExample })) {}

export class UpdateMedicationRequest extends Schema.Class<UpdateMedicationRequest>("UpdateMedicationRequest")({
  medication: Schema.Struct({
    name: Schema.optional(RequiredString(200)),
    generic_name: Schema.optional(RequiredString(200)),
    brand_names: Schema.optional(BoundedArray(RequiredString(100), maxBrandNames)),
    strength: Schema.optional(RequiredString(50)),
    dosage_form: Schema.optional(RequiredString(100)),
    rxnorm_cui: Schema.optional(Schema.NullOr(RxNormCui)),
    active: Schema.optional(Schema.Boolean.annotations({ description: "false retires it: no new prescriptions, existing ones stay" }))
  })
}, requestBody({ medication: { active: false } }, { medication: { brand_names: ["Zoloft"] } })) {}

const idPath = Schema.Struct({ id: PrescriptionIdFromText })
const medicationPath = Schema.Struct({ id: MedicationIdFromText })
const patientPath = Schema.Struct({ id: PatientIdFromText })

export const prescriptionAccess = "Any signed-in user, record by record (general §5.4): admins everything; a provider the " +
  "prescriptions they wrote; a supervisor theirs and their supervisees' (reading only); a `parent` reads their own patients' " +
  "and writes none; support and billing none. A refusal is 403 `You are not authorized to perform this action.`, " +
  "except that a `parent` gets 404 for a patient or prescription not theirs."

/** The patient a prescription is written for: clinical content, named in the body. */
const prescribedPatient = {
  records: "clinical",
  refusal: { sentence: "Staff naming any other patient get 422 `must exist`, as for an unknown id; a `parent` gets 404 `Patient not found`." }
} as const

const statusMachine = "Status moves: active → completed, discontinued, on_hold or cancelled (expired only through the daily " +
  "job once `end_date` has passed); on_hold → active. completed, discontinued, expired and cancelled are final. Other moves " +
  "are 422 `{\"errors\":{\"status\":[\"can't change from … to …\"]}}`."

const rules = "Rules (422, field → messages): `quantity` \"must be greater than 0\"; `refills` \"must be between 0 and 11\"; " +
  "`prescription_date` \"can't be in the future\"; `end_date` \"must be after start date\"; `medication_id` \"must exist\" / " +
  "\"must be active\"; `patient_id` \"must exist\"; the prescriber (`provider_id`) \"must be an active provider with a license " +
  "number\". Frequencies and instructions take the §2.8 common values or free text."

/** Prescriptions (general §4.8). */
export class PrescriptionsApi extends HttpApiGroup.make("prescriptions")
  .add(
    HttpApiEndpoint.get("list", "/prescriptions")
      .setUrlParams(PrescriptionListQuery)
      .addSuccess(PrescriptionList)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List prescriptions",
        description: `The prescriptions the caller may read, newest prescription date first, ${prescriptionsPageSize} a page by ` +
          "default; filters by patient, provider, status and medication name. Support and billing get 403; a `parent` naming " +
          "a patient not theirs gets 404 `Patient not found`.",
        access: prescriptionAccess,
        spec: "general §2.8, §4.8"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/prescriptions")
      .setPayload(CreatePrescriptionRequest)
      .addSuccess(PrescriptionResponse, { status: 201 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Write a prescription",
        description: "An active prescription; `refills_remaining` starts at `refills`. The prescriber is the calling provider " +
          `(or \`provider_id\` when an admin writes it). ${rules}`,
        access: prescriptionAccess,
        patients: prescribedPatient,
        spec: "general §2.8, §4.8"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/prescriptions/:id")
      .setPath(idPath)
      .addSuccess(PrescriptionResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a prescription",
        description: `One prescription with its medication, patient and provider; 404 \`${prescriptionMessages.notFound}\` for an unknown id.`,
        access: prescriptionAccess,
        spec: "general §2.8, §4.8"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/prescriptions/:id")
      .setPath(idPath)
      .setPayload(UpdatePrescriptionRequest)
      .addSuccess(PrescriptionResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a prescription",
        description: `Changes the given fields with the create rules (only active and on_hold prescriptions). ${statusMachine} ` +
          "Changing `refills` moves `refills_remaining` by the same amount, never below 0; `refills_remaining` may be set " +
          "between 0 and `refills`. Every change is recorded in the medication history.",
        access: prescriptionAccess,
        patients: prescribedPatient,
        spec: "general §2.8, §4.8"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/prescriptions/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Cancel a prescription written in error",
        description: "An active prescription becomes `cancelled` and stays readable (it is not removed); any other status is 422 under `status`.",
        access: prescriptionAccess,
        spec: "general §4.8"
      }))
  )
  .add(
    HttpApiEndpoint.post("refill", "/prescriptions/:id/refill")
      .setPath(idPath)
      .addSuccess(PrescriptionResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Record a refill",
        description: "Takes one from `refills_remaining` of an active prescription (beyond the spec); at 0 it is 422 " +
          `\`{"errors":{"refills_remaining":["${prescriptionMessages.noRefills}"]}}\`. Concurrent refills never go below 0.`,
        access: prescriptionAccess,
        spec: "general §2.8 (refills_remaining)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Prescriptions",
    description: "Prescriptions written by the clinic's providers, their status machine, refills, and the daily expiry of those past their end date."
  }))
{}

/** A patient's medication history (general §4.2 `medication_history`). */
export class MedicationHistoryApi extends HttpApiGroup.make("medicationHistory")
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/:id/medication_history")
      .setPath(patientPath)
      .setUrlParams(HistoryQuery)
      .addSuccess(MedicationHistory)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "A patient's medication history",
        description: "The patient's prescriptions over time grouped by medication, the most recently prescribed medication " +
          `first, ${historyPageSize} medications a page by default; each prescription, newest first, with its dates and the ` +
          "dosage and status changes of the append-only history (oldest first). 404 `Patient not found` for an unknown patient.",
        access: Access.signedIn,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Medication history",
    description: "What a patient has been prescribed over time, from the append-only prescription history."
  }))
{}

/** The medications catalogue for prescribing screens (beyond the spec). */
export class MedicationsApi extends HttpApiGroup.make("medications")
  .add(
    HttpApiEndpoint.get("list", "/medications")
      .setUrlParams(MedicationListQuery)
      .addSuccess(MedicationList)
      .annotateContext(operationDocs({
        summary: "Search medications",
        description: `Active medications by name, generic or brand name, alphabetical, ${medicationsPageSize} a page by default.`,
        access: Access.staff,
        spec: "general §2.8 (the prescription's medication; the catalogue endpoints are beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/medications/:id")
      .setPath(medicationPath)
      .addSuccess(MedicationResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a medication",
        description: "One medication, active or retired; 404 `Medication not found` for an unknown id.",
        access: Access.staff,
        spec: "general §2.8 (the prescription's medication; the catalogue endpoints are beyond the spec)"
      }))
  )
  .middleware(StaffAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Medications",
    description: "The catalogue prescriptions are written from: a curated behavioural-health set with NLM RxNorm ingredient ids."
  }))
{}

/** Admins add and retire medications (beyond the spec). */
export class AdminMedicationsApi extends HttpApiGroup.make("adminMedications")
  .add(
    HttpApiEndpoint.post("create", "/admin/clinic/medications")
      .setPayload(CreateMedicationRequest)
      .addSuccess(MedicationResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Add a medication",
        description: "A new active medication; the same generic name, strength and form twice is 422 `has already been taken` under `name`.",
        access: Access.admin,
        singleUse: "a product (generic name, strength and form) is added once",
        spec: "general §2.8 (the prescription's medication; the catalogue endpoints are beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/medications/:id")
      .setPath(medicationPath)
      .setPayload(UpdateMedicationRequest)
      .addSuccess(MedicationResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update or retire a medication",
        description: "Changes the given fields; `active: false` retires it (no new prescriptions; existing ones keep it).",
        access: Access.admin,
        spec: "general §2.8 (the prescription's medication; the catalogue endpoints are beyond the spec)"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Medications",
    description: "Adding and retiring catalogue medications."
  }))
{}
